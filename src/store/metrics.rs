//! Object-store request metrics, per operation: requests, errors, bytes and a latency
//! histogram. Every attempt counts (a retried PUT is two requests, as the store bills it).
//! The admin endpoint and the cost model read snapshots.

use super::chaos::Operation;
use crate::telemetry::histogram::{Histogram, HistogramSnapshot, LATENCY_SECONDS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

struct OperationMetrics {
    requests: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    latency: Histogram,
}

impl Default for OperationMetrics {
    fn default() -> Self {
        OperationMetrics {
            requests: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            latency: Histogram::new(LATENCY_SECONDS),
        }
    }
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
    pub latency: HistogramSnapshot,
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
        m.latency.observe(latency.as_secs_f64());
    }

    pub fn snapshot(&self) -> Vec<OperationSnapshot> {
        Operation::ALL
            .iter()
            .map(|&op| {
                let m = &self.operations[index(op)];
                OperationSnapshot {
                    operation: op,
                    requests: m.requests.load(Ordering::Relaxed),
                    errors: m.errors.load(Ordering::Relaxed),
                    bytes: m.bytes.load(Ordering::Relaxed),
                    latency: m.latency.snapshot(),
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
    fn records_counts_bytes_errors_and_latency() {
        let m = ObjectStoreMetrics::default();
        m.record(Operation::Put, 100, Duration::from_millis(3), true);
        m.record(Operation::Put, 50, Duration::from_secs(30), false);
        m.record(Operation::Get, 7, Duration::from_micros(500), true);
        let put = m.operation(Operation::Put);
        assert_eq!((put.requests, put.errors, put.bytes), (2, 1, 150));
        assert_eq!(put.latency.count(), 2);
        assert_eq!(put.latency.cumulative[3], 1, "3 ms is within 5 ms");
        assert_eq!(
            m.operation(Operation::Get).latency.cumulative[1],
            1,
            "0.5 ms is within 1 ms"
        );
        assert_eq!(m.operation(Operation::Delete).requests, 0);
    }
}
