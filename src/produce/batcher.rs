//! The batcher: pure decisions about when to seal an object.
//!
//! Batches from every connection and partition accumulate in one open object. It is sealed
//! when `flush_interval` has passed since its first batch, or when it holds `object_bytes_max`
//! bytes, whichever comes first. So an agent's PUT rate follows time and bytes, never the
//! number of partitions. Time comes in as an argument; nothing here reads a clock.

use crate::clock::Instant;
use crate::ids::TopicPartition;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::Duration;

/// Why an object was sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealReason {
    /// Its flush interval passed.
    Time,
    /// It reached `object_bytes_max`.
    Bytes,
    /// The broker was stopping.
    Shutdown,
}

impl SealReason {
    pub const ALL: [SealReason; 3] = [SealReason::Time, SealReason::Bytes, SealReason::Shutdown];

    pub fn name(self) -> &'static str {
        match self {
            SealReason::Time => "time",
            SealReason::Bytes => "bytes",
            SealReason::Shutdown => "shutdown",
        }
    }
}

/// An open object's contents, grouped by partition, each batch with its caller's tag `T`.
pub struct Sealed<T> {
    pub chunks: Vec<(TopicPartition, Vec<(Bytes, T)>)>,
    pub bytes: usize,
    pub reason: SealReason,
}

pub struct Batcher<T> {
    flush_interval: Duration,
    object_bytes_max: usize,
    open: BTreeMap<TopicPartition, Vec<(Bytes, T)>>,
    bytes: usize,
    opened_at: Option<Instant>,
}

impl<T> Batcher<T> {
    pub fn new(flush_interval: Duration, object_bytes_max: usize) -> Self {
        Batcher {
            flush_interval,
            object_bytes_max: object_bytes_max.max(1),
            open: BTreeMap::new(),
            bytes: 0,
            opened_at: None,
        }
    }

    /// Adds a batch; returns the sealed object if this batch filled it.
    pub fn push(
        &mut self,
        now: Instant,
        partition: TopicPartition,
        batch: Bytes,
        tag: T,
    ) -> Option<Sealed<T>> {
        self.opened_at.get_or_insert(now);
        self.bytes += batch.len();
        self.open.entry(partition).or_default().push((batch, tag));
        if self.bytes >= self.object_bytes_max {
            return self.seal_for(SealReason::Bytes);
        }
        None
    }

    /// When the open object must be sealed by, if one is open.
    pub fn deadline(&self) -> Option<Instant> {
        self.opened_at.map(|t| t + self.flush_interval)
    }

    /// Seals the open object if its flush interval has passed.
    pub fn poll(&mut self, now: Instant) -> Option<Sealed<T>> {
        match self.deadline() {
            Some(deadline) if now >= deadline => self.seal_for(SealReason::Time),
            _ => None,
        }
    }

    /// Seals whatever is open (shutdown).
    pub fn seal(&mut self) -> Option<Sealed<T>> {
        self.seal_for(SealReason::Shutdown)
    }

    fn seal_for(&mut self, reason: SealReason) -> Option<Sealed<T>> {
        self.opened_at = None;
        if self.open.is_empty() {
            return None;
        }
        let bytes = std::mem::take(&mut self.bytes);
        Some(Sealed {
            chunks: std::mem::take(&mut self.open).into_iter().collect(),
            bytes,
            reason,
        })
    }

    pub fn open_bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition {
            topic_id: uuid::Uuid::nil(),
            partition: p,
        }
    }

    fn bytes(n: usize) -> Bytes {
        Bytes::from(vec![0u8; n])
    }

    #[test]
    fn seals_when_the_flush_interval_passes() {
        let t0 = crate::clock::Clock::system().now();
        let mut b = Batcher::new(Duration::from_millis(100), 1 << 20);
        assert!(b.poll(t0).is_none());
        assert!(b.push(t0, tp(0), bytes(10), 1).is_none());
        assert!(
            b.push(t0 + Duration::from_millis(60), tp(1), bytes(10), 2)
                .is_none()
        );
        assert_eq!(b.deadline(), Some(t0 + Duration::from_millis(100)));
        assert!(b.poll(t0 + Duration::from_millis(99)).is_none());
        let sealed = b
            .poll(t0 + Duration::from_millis(100))
            .expect("sealed at the deadline");
        assert_eq!(sealed.chunks.len(), 2);
        assert_eq!(sealed.bytes, 20);
        assert_eq!(sealed.reason, SealReason::Time);
        assert_eq!(b.deadline(), None);
        // The next object's interval starts at its own first batch.
        assert!(
            b.push(t0 + Duration::from_millis(150), tp(0), bytes(1), 3)
                .is_none()
        );
        assert_eq!(b.deadline(), Some(t0 + Duration::from_millis(250)));
    }

    #[test]
    fn seals_when_full_regardless_of_time() {
        let t0 = crate::clock::Clock::system().now();
        let mut b = Batcher::new(Duration::from_secs(60), 100);
        assert!(b.push(t0, tp(0), bytes(60), 1).is_none());
        let sealed = b.push(t0, tp(0), bytes(40), 2).expect("full");
        assert_eq!(
            sealed.chunks,
            vec![(tp(0), vec![(bytes(60), 1), (bytes(40), 2)])]
        );
        assert_eq!(sealed.reason, SealReason::Bytes);
        assert_eq!(b.open_bytes(), 0);
    }

    #[test]
    fn many_partitions_share_one_object() {
        let t0 = crate::clock::Clock::system().now();
        let mut b = Batcher::new(Duration::from_millis(10), 1 << 30);
        for p in 0..500 {
            assert!(b.push(t0, tp(p), bytes(100), p).is_none());
        }
        let sealed = b.poll(t0 + Duration::from_millis(10)).expect("one object");
        assert_eq!(sealed.chunks.len(), 500);
        assert!(b.seal().is_none());
    }
}
