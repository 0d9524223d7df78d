//! What the background jobs did, for `/metrics`.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct JobMetrics {
    pub compaction_runs: AtomicU64,
    pub compaction_failures: AtomicU64,
    /// Segments written and indexed.
    pub segments_written: AtomicU64,
    /// Bytes of batches read and written again into segments.
    pub bytes_rewritten: AtomicU64,
    /// Index entries replaced by segments.
    pub entries_replaced: AtomicU64,
    /// Swaps the state refused (the runs changed meanwhile).
    pub swaps_lost: AtomicU64,
    /// Cleaning passes over compacted partitions, and what they read and kept.
    pub cleaning_passes: AtomicU64,
    pub cleaning_failures: AtomicU64,
    /// Time the passes took, in microseconds (their throughput: bytes read over this).
    pub cleaning_micros: AtomicU64,
    pub cleaned_records_read: AtomicU64,
    pub cleaned_records_kept: AtomicU64,
    pub cleaned_bytes_read: AtomicU64,
    pub cleaned_bytes_kept: AtomicU64,
    /// Tombstones a pass kept (inside their `delete.retention.ms`).
    pub cleaned_tombstones_kept: AtomicU64,
    pub collection_runs: AtomicU64,
    pub collection_failures: AtomicU64,
    /// Partitions whose log start retention moved.
    pub retention_moves: AtomicU64,
    /// Dead objects deleted from the store.
    pub objects_deleted: AtomicU64,
    pub orphans_found: AtomicU64,
    pub orphans_deleted: AtomicU64,
}

impl JobMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn load(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
