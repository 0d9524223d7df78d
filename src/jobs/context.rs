//! What the background jobs share, and how long their leases last.

use super::metrics::JobMetrics;
use crate::clock::Clock;
use crate::config::LifecycleConfig;
use crate::metadata::MetadataStore;
use crate::random::Rng;
use crate::read_cache::ReadCache;
use crate::store::ObjectClient;
use std::sync::Arc;

/// What the jobs share.
#[derive(Clone)]
pub struct JobContext {
    pub metadata: MetadataStore,
    /// The jobs' own client of the store (see `ObjectClient::with_own_metrics`).
    pub store: Arc<ObjectClient>,
    /// The agent's read tiers: a run still held there is copied from memory, not fetched.
    pub read_cache: ReadCache,
    pub clock: Clock,
    pub rng: Rng,
    pub config: LifecycleConfig,
    /// The lease holder's name: this node's id.
    pub node_id: i32,
    pub metrics: Arc<JobMetrics>,
}

/// Entries one swap replaces at most: keeps a `ReplaceRuns` entry well inside a Raft entry.
pub(super) const ENTRIES_PER_SWAP_MAX: usize = 10_000;

impl JobContext {
    pub(super) fn lease_ms(&self) -> i64 {
        // Three rounds: a holder that misses two renewals still holds it. The state's clock
        // moves in one-second ticks, so a lease is never shorter than a few of them.
        (self.config.compaction_interval.as_millis() as i64 * 3).max(5_000)
    }
}
