//! The broker's own metrics: request latencies, bytes and records in and out, object seals,
//! commit latency, connections. Updated on the hot paths with relaxed atomics only.

use super::histogram::{Histogram, LATENCY_SECONDS, SIZE_BYTES};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

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

pub struct BrokerMetrics {
    pub produce_latency: Histogram,
    pub fetch_latency: Histogram,
    pub commit_latency: Histogram,
    pub object_size: Histogram,
    pub produce_bytes: AtomicU64,
    pub produce_records: AtomicU64,
    pub fetch_bytes: AtomicU64,
    pub fetch_records: AtomicU64,
    sealed: [AtomicU64; 3],
    pub connections: AtomicI64,
    pub connections_total: AtomicU64,
    /// Group requests forwarded to the coordinating agent (load-balancer mode).
    pub forwarded_requests: AtomicU64,
    pub closed_for_bad_input: AtomicU64,
}

impl Default for BrokerMetrics {
    fn default() -> Self {
        BrokerMetrics {
            produce_latency: Histogram::new(LATENCY_SECONDS),
            fetch_latency: Histogram::new(LATENCY_SECONDS),
            commit_latency: Histogram::new(LATENCY_SECONDS),
            object_size: Histogram::new(SIZE_BYTES),
            produce_bytes: AtomicU64::new(0),
            produce_records: AtomicU64::new(0),
            fetch_bytes: AtomicU64::new(0),
            fetch_records: AtomicU64::new(0),
            sealed: Default::default(),
            connections: AtomicI64::new(0),
            connections_total: AtomicU64::new(0),
            forwarded_requests: AtomicU64::new(0),
            closed_for_bad_input: AtomicU64::new(0),
        }
    }
}

impl BrokerMetrics {
    pub fn object_sealed(&self, reason: SealReason, bytes: usize) {
        self.sealed[reason as usize].fetch_add(1, Ordering::Relaxed);
        self.object_size.observe(bytes as f64);
    }

    pub fn sealed(&self, reason: SealReason) -> u64 {
        self.sealed[reason as usize].load(Ordering::Relaxed)
    }

    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}
