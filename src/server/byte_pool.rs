//! A budget of bytes shared by all connections (Kafka's `queued.max.request.bytes` memory
//! pool). A reservation succeeds whenever enough bytes are free, whatever else waits: a
//! request announced at 100 MiB waits for 100 MiB without holding up the small requests of
//! other clients (a first-come-first-served semaphore would queue every one of them behind
//! it, so a few clients announcing large frames would stall the broker).
//!
//! It is strict, unlike Kafka's pool, which lets a reservation take more than is free: then
//! three clients announcing 100 MiB frames they never send would take the whole budget and
//! stall every other client until their frames time out. The price: under a steady stream of
//! small reservations that never leaves enough free, a large one waits until it does.

use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

pub struct BytePool {
    capacity: usize,
    free: Mutex<usize>,
    released: Notify,
}

/// Bytes taken from a pool, given back when dropped.
pub struct Reservation {
    pool: Arc<BytePool>,
    bytes: usize,
}

impl BytePool {
    pub fn new(capacity: usize) -> Arc<BytePool> {
        Arc::new(BytePool {
            capacity,
            free: Mutex::new(capacity),
            released: Notify::new(),
        })
    }

    /// `bytes` (at most the capacity), if that many are free now.
    pub fn try_reserve(self: &Arc<BytePool>, bytes: usize) -> Option<Reservation> {
        let bytes = bytes.min(self.capacity);
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        *free = free.checked_sub(bytes)?;
        Some(Reservation {
            pool: self.clone(),
            bytes,
        })
    }

    /// `bytes` (at most the capacity), once that many are free.
    pub async fn reserve(self: &Arc<BytePool>, bytes: usize) -> Reservation {
        loop {
            // Registered before the check, so a release between the two is not missed.
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if let Some(reservation) = self.try_reserve(bytes) {
                return reservation;
            }
            released.await;
        }
    }

    /// Bytes reserved now.
    pub fn held(&self) -> usize {
        self.capacity - *self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[cfg(test)]
    fn free(&self) -> usize {
        *self.free.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        *self.pool.free.lock().unwrap_or_else(|p| p.into_inner()) += self.bytes;
        self.pool.released.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_large_waiter_does_not_hold_up_small_reservations() {
        let pool = BytePool::new(100);
        let held = pool.try_reserve(60).expect("free");
        assert_eq!(pool.held(), 60);
        let large = tokio::spawn({
            let pool = pool.clone();
            async move { pool.reserve(80).await.bytes }
        });
        tokio::task::yield_now().await;
        // The large one waits; a small one still fits beside what is held.
        let small = pool
            .try_reserve(30)
            .expect("not queued behind the large waiter");
        assert!(pool.try_reserve(30).is_none());
        drop(small);
        drop(held);
        assert_eq!(large.await.unwrap(), 80);
        assert_eq!(pool.free(), 100);
        assert_eq!(pool.held(), 0);
        // More than the capacity is clamped to it, so it can always be granted eventually.
        assert_eq!(pool.reserve(1_000).await.bytes, 100);
    }
}
