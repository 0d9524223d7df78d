//! What the read tiers did, for `/metrics`: hits, misses and bytes per tier, GETs by reason,
//! coalesced misses, disk files found corrupt.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one tier.
#[derive(Debug, Default)]
pub struct TierCounters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    /// Bytes served from the tier.
    pub hit_bytes: AtomicU64,
    /// Blocks put into the tier, and their bytes.
    pub fills: AtomicU64,
    pub fill_bytes: AtomicU64,
}

/// Why the read path sent a GET to the object store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetReason {
    /// A block no tier held, for a read waiting on it.
    Miss,
    /// The block after one a sequential reader reached the second half of.
    ReadAhead,
}

impl GetReason {
    pub const ALL: [GetReason; 2] = [GetReason::Miss, GetReason::ReadAhead];

    pub fn name(self) -> &'static str {
        match self {
            GetReason::Miss => "miss",
            GetReason::ReadAhead => "read_ahead",
        }
    }
}

#[derive(Debug, Default)]
pub struct TierMetrics {
    pub memory: TierCounters,
    pub disk: TierCounters,
    gets: [AtomicU64; 2],
    get_bytes: [AtomicU64; 2],
    /// Reads of a missing block that waited for another read's GET instead of their own.
    pub coalesced: AtomicU64,
    /// Disk-tier files that failed their checks on read and were discarded.
    pub disk_corrupt: AtomicU64,
    /// Disk-tier fills skipped because the disk was behind (too many writes in flight).
    pub disk_skipped: AtomicU64,
    /// Disk-tier writes that failed (the block is then served without the disk tier).
    pub disk_write_failures: AtomicU64,
}

impl TierMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn load(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub fn got(&self, reason: GetReason, bytes: u64) {
        let i = reason as usize;
        Self::add(&self.gets[i], 1);
        Self::add(&self.get_bytes[i], bytes);
    }

    /// GETs sent and bytes they returned, for `reason`.
    pub fn gets(&self, reason: GetReason) -> (u64, u64) {
        let i = reason as usize;
        (Self::load(&self.gets[i]), Self::load(&self.get_bytes[i]))
    }

    pub fn hit(tier: &TierCounters, bytes: u64) {
        Self::add(&tier.hits, 1);
        Self::add(&tier.hit_bytes, bytes);
    }

    pub fn filled(tier: &TierCounters, bytes: u64) {
        Self::add(&tier.fills, 1);
        Self::add(&tier.fill_bytes, bytes);
    }
}
