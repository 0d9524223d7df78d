//! Object-store request metrics, per operation: requests, errors, bytes and a latency
//! histogram. Every attempt counts (a retried PUT is two requests, as the store bills it).
//! The admin endpoint and the cost model read snapshots.

use super::chaos::Operation;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency histogram buckets, in seconds (Prometheus `le`), before +Inf.
pub const LATENCY_BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Default)]
struct OperationMetrics {
    requests: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    latency_micros_sum: AtomicU64,
    /// Non-cumulative counts per bucket, the last one +Inf.
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
}

#[derive(Default)]
pub struct ObjectStoreMetrics {
    operations: [OperationMetrics; 5],
}

#[derive(Debug, Clone, PartialEq)]
pub struct OperationSnapshot {
    pub operation: Operation,
    pub requests: u64,
    pub errors: u64,
    pub bytes: u64,
    pub latency_seconds_sum: f64,
    /// Cumulative counts, one per `LATENCY_BUCKETS` entry and a final +Inf.
    pub latency_buckets: Vec<u64>,
}

fn index(op: Operation) -> usize {
    match op {
        Operation::Put => 0,
        Operation::Get => 1,
        Operation::Head => 2,
        Operation::List => 3,
        Operation::Delete => 4,
    }
}

impl ObjectStoreMetrics {
    pub fn record(&self, op: Operation, bytes: u64, latency: Duration, ok: bool) {
        let m = &self.operations[index(op)];
        m.requests.fetch_add(1, Ordering::Relaxed);
        if !ok {
            m.errors.fetch_add(1, Ordering::Relaxed);
        }
        m.bytes.fetch_add(bytes, Ordering::Relaxed);
        m.latency_micros_sum
            .fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
        let seconds = latency.as_secs_f64();
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|&le| seconds <= le)
            .unwrap_or(LATENCY_BUCKETS.len());
        m.buckets[bucket].fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Vec<OperationSnapshot> {
        Operation::ALL
            .iter()
            .map(|&op| {
                let m = &self.operations[index(op)];
                let mut total = 0;
                let latency_buckets = m
                    .buckets
                    .iter()
                    .map(|b| {
                        total += b.load(Ordering::Relaxed);
                        total
                    })
                    .collect();
                OperationSnapshot {
                    operation: op,
                    requests: m.requests.load(Ordering::Relaxed),
                    errors: m.errors.load(Ordering::Relaxed),
                    bytes: m.bytes.load(Ordering::Relaxed),
                    latency_seconds_sum: m.latency_micros_sum.load(Ordering::Relaxed) as f64 / 1e6,
                    latency_buckets,
                }
            })
            .collect()
    }

    pub fn operation(&self, op: Operation) -> OperationSnapshot {
        self.snapshot().swap_remove(index(op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_counts_bytes_errors_and_cumulative_buckets() {
        let m = ObjectStoreMetrics::default();
        m.record(Operation::Put, 100, Duration::from_millis(3), true);
        m.record(Operation::Put, 50, Duration::from_secs(30), false);
        m.record(Operation::Get, 7, Duration::from_micros(500), true);
        let put = m.operation(Operation::Put);
        assert_eq!((put.requests, put.errors, put.bytes), (2, 1, 150));
        assert_eq!(put.latency_buckets[1], 0, "3 ms is above 2.5 ms");
        assert_eq!(put.latency_buckets[2], 1, "3 ms is within 5 ms");
        assert_eq!(
            *put.latency_buckets.last().unwrap(),
            2,
            "+Inf holds every request"
        );
        assert_eq!(m.operation(Operation::Get).latency_buckets[0], 1);
        assert_eq!(m.operation(Operation::Delete).requests, 0);
    }
}
