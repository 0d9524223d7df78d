//! The gate writes pass on their way into Raft, closed while leadership is handed over
//! (`handoff`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::Notify;

/// Whether this node lets writes through to Raft (closed while leadership is handed over),
/// and how many are on their way in. A writer counts itself in before it looks at the gate,
/// and the hand-off closes the gate before it looks at the count, so once the count reads
/// zero with the gate closed, no write can still reach the log.
#[derive(Clone)]
pub struct WriteGate {
    open: Arc<AtomicBool>,
    opened: Arc<Notify>,
    in_flight: Arc<AtomicUsize>,
}

impl Default for WriteGate {
    fn default() -> Self {
        WriteGate {
            open: Arc::new(AtomicBool::new(true)),
            opened: Arc::new(Notify::new()),
            in_flight: Arc::new(AtomicUsize::new(0)),
        }
    }
}

/// A write let through the gate; it counts as in flight until dropped.
pub struct Passed(Arc<AtomicUsize>);

impl Drop for Passed {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl WriteGate {
    /// Waits until the gate is open and counts the caller in.
    pub async fn pass(&self) -> Passed {
        loop {
            self.in_flight.fetch_add(1, Ordering::SeqCst);
            let passed = Passed(self.in_flight.clone());
            let opened = self.opened.notified();
            if self.open.load(Ordering::SeqCst) {
                return passed;
            }
            drop(passed);
            opened.await;
        }
    }

    pub(super) fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
    }

    pub(super) fn reopen(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.opened.notify_waiters();
    }

    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_closed_gate_holds_writes_and_counts_those_inside() {
        let gate = WriteGate::default();
        let inside = gate.pass().await;
        assert_eq!(gate.in_flight(), 1);
        gate.close();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move {
                let _passed = gate.pass().await;
            }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a write passed a closed gate");
        // The hand-off waits for the one that was already inside.
        drop(inside);
        assert_eq!(gate.in_flight(), 0);
        gate.reopen();
        waiting.await.expect("the waiting write goes on");
        assert_eq!(gate.in_flight(), 0);
    }
}
