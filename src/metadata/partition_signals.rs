//! Per-partition wake-ups for long-polling fetches.
//!
//! A fetch waiting for data needs to hear of commits to its own partitions, not of every
//! change to the state. Partitions are hashed onto a fixed number of signals (bounded memory
//! however many partitions exist); a commit raises the signals of the partitions it touches,
//! after the state holds it, and a waiting fetch listens to the signals of its partitions. Two
//! partitions sharing a signal cost a spurious wake, never a missed one. Each signal carries the
//! time it was raised, so the woken fetch can report how long waking took.

use crate::clock::Instant;
use crate::ids::TopicPartition;
use tokio::sync::watch;

/// Signals partitions are hashed onto: a fetch of one partition is woken by about one commit
/// in this many that touch other partitions only.
const SIGNALS: usize = 256;

pub struct PartitionSignals {
    signals: Box<[watch::Sender<Option<Instant>>]>,
}

impl Default for PartitionSignals {
    fn default() -> PartitionSignals {
        PartitionSignals {
            signals: (0..SIGNALS).map(|_| watch::channel(None).0).collect(),
        }
    }
}

fn signal_of(partition: &TopicPartition) -> usize {
    let (high, low) = partition.topic_id.as_u64_pair();
    let mixed =
        (high ^ low ^ (partition.partition as u32 as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 32) as usize % SIGNALS
}

impl PartitionSignals {
    /// Wakes fetches waiting on any of `partitions` (call after the state holds the change).
    pub fn raise<'a>(&self, partitions: impl IntoIterator<Item = &'a TopicPartition>, at: Instant) {
        let mut raised = [false; SIGNALS];
        for p in partitions {
            let i = signal_of(p);
            if !std::mem::replace(&mut raised[i], true) {
                self.signals[i].send_replace(Some(at));
            }
        }
    }

    /// Wakes every waiting fetch (the whole state changed: a snapshot was installed).
    pub fn raise_all(&self, at: Instant) {
        for signal in self.signals.iter() {
            signal.send_replace(Some(at));
        }
    }

    /// A listener to `partitions`, which hears only of raises after this call: take it before
    /// reading the state, so that a commit the read misses still wakes it.
    pub fn listen<'a>(&self, partitions: impl IntoIterator<Item = &'a TopicPartition>) -> Listener {
        let mut taken = [false; SIGNALS];
        let mut receivers = Vec::new();
        for p in partitions {
            let i = signal_of(p);
            if !std::mem::replace(&mut taken[i], true) {
                receivers.push(self.signals[i].subscribe());
            }
        }
        Listener { receivers }
    }
}

pub struct Listener {
    receivers: Vec<watch::Receiver<Option<Instant>>>,
}

impl Listener {
    /// Marks everything raised so far as seen.
    pub fn mark_seen(&mut self) {
        for r in &mut self.receivers {
            r.borrow_and_update();
        }
    }

    /// Waits for a raise not yet seen, and returns when it was raised; with no partitions it
    /// never returns (the caller's deadline ends the wait).
    pub async fn raised(&mut self) -> Option<Instant> {
        if self.receivers.is_empty() {
            return std::future::pending().await;
        }
        let changes = self.receivers.iter_mut().map(|r| Box::pin(r.changed()));
        let (result, index, _) = futures::future::select_all(changes).await;
        match result {
            Ok(()) => *self.receivers[index].borrow_and_update(),
            // The signals live as long as the state machine; gone means shutting down.
            Err(_) => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(topic: u128, partition: i32) -> TopicPartition {
        TopicPartition {
            topic_id: uuid::Uuid::from_u128(topic),
            partition,
        }
    }

    #[tokio::test]
    async fn a_listener_hears_its_partitions_and_not_others() {
        let signals = PartitionSignals::default();
        let clock = crate::clock::Clock::system();
        let mine = tp(1, 3);
        // A partition on another signal.
        let other = (0..1000)
            .map(|p| tp(2, p))
            .find(|p| signal_of(p) != signal_of(&mine))
            .unwrap();
        let mut listener = signals.listen([&mine]);
        listener.mark_seen();
        signals.raise([&other], clock.now());
        let quiet = clock
            .timeout(std::time::Duration::from_millis(20), listener.raised())
            .await;
        assert!(quiet.is_err(), "woken by another partition's commit");
        let at = clock.now();
        signals.raise([&other, &mine], at);
        assert_eq!(listener.raised().await, Some(at));
        // A raise before listening is not heard; one after taking the listener is, even if it
        // came before the wait began.
        let mut late = signals.listen([&mine]);
        late.mark_seen();
        signals.raise([&mine], clock.now());
        assert!(late.raised().await.is_some());
    }

    #[test]
    fn partitions_spread_over_the_signals() {
        let used: std::collections::BTreeSet<_> = (0..100).map(|p| signal_of(&tp(9, p))).collect();
        assert!(used.len() > 70, "100 partitions on {} signals", used.len());
    }
}
