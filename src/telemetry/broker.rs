//! The broker's own metrics: request latencies, bytes and records in and out, connections.
//! Updated on the hot paths with relaxed atomics only. (The produce pipeline's seals and
//! commits are `produce::metrics`.)

use super::histogram::{Histogram, LATENCY_SECONDS};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

pub struct BrokerMetrics {
    pub produce_latency: Histogram,
    pub fetch_latency: Histogram,
    /// From a commit to a long-polling fetch of one of its partitions waking.
    pub fetch_wake_latency: Histogram,
    /// Fetches waiting in a long poll for a commit to one of their partitions.
    pub fetches_waiting: AtomicI64,
    pub produce_bytes: AtomicU64,
    pub produce_records: AtomicU64,
    pub fetch_bytes: AtomicU64,
    pub fetch_records: AtomicU64,
    pub connections: AtomicI64,
    pub connections_total: AtomicU64,
    /// Group requests forwarded to the coordinating agent (load-balancer mode).
    pub forwarded_requests: AtomicU64,
    pub closed_for_bad_input: AtomicU64,
    /// Connections closed after `connection_idle_timeout` without a request.
    pub closed_idle: AtomicU64,
    /// Connections refused at accept: over `connections_per_ip_max`.
    pub refused_connections: AtomicU64,
    /// Transactions this agent ended (EndTxn), and the markers they wrote.
    pub transactions_committed: AtomicU64,
    pub transactions_aborted: AtomicU64,
    pub transaction_markers: AtomicU64,
    pub security: crate::security::metrics::SecurityMetrics,
}

impl Default for BrokerMetrics {
    fn default() -> Self {
        BrokerMetrics {
            produce_latency: Histogram::new(LATENCY_SECONDS),
            fetch_latency: Histogram::new(LATENCY_SECONDS),
            fetch_wake_latency: Histogram::new(LATENCY_SECONDS),
            fetches_waiting: AtomicI64::new(0),
            produce_bytes: AtomicU64::new(0),
            produce_records: AtomicU64::new(0),
            fetch_bytes: AtomicU64::new(0),
            fetch_records: AtomicU64::new(0),
            connections: AtomicI64::new(0),
            connections_total: AtomicU64::new(0),
            forwarded_requests: AtomicU64::new(0),
            closed_for_bad_input: AtomicU64::new(0),
            closed_idle: AtomicU64::new(0),
            refused_connections: AtomicU64::new(0),
            transactions_committed: AtomicU64::new(0),
            transactions_aborted: AtomicU64::new(0),
            transaction_markers: AtomicU64::new(0),
            security: Default::default(),
        }
    }
}

impl BrokerMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}
