//! The index as the writer thread and the readers share it.
//!
//! A panic while the index is held could leave it half-updated. Every later use then fails
//! with an error (the pack store answers errors until a restart rebuilds the index from the
//! packs), never with a panic of its own.

use super::index::Index;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Clone)]
pub struct SharedIndex(Arc<Mutex<Index>>);

impl SharedIndex {
    pub fn new(index: Index) -> Self {
        SharedIndex(Arc::new(Mutex::new(index)))
    }

    pub fn lock(&self) -> io::Result<MutexGuard<'_, Index>> {
        self.0.lock().map_err(|_| {
            io::Error::other(
                "the object pack index was left unusable by a failure during an update; \
                 restart floe to rebuild it from the packs",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_while_held_makes_later_uses_errors_not_panics() {
        let shared = SharedIndex::new(Index::new(0));
        let held = shared.clone();
        let panicked = std::thread::spawn(move || {
            let _guard = held.lock().expect("first use");
            panic!("interrupted update");
        })
        .join();
        assert!(panicked.is_err());
        let Err(error) = shared.lock() else {
            panic!("the index answered after a panic while it was held");
        };
        assert!(error.to_string().contains("restart floe"), "{error}");
    }
}
