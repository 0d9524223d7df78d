//! The outcomes of recent object commits, so that a commit retried after a lost response gets
//! its original outcome instead of a second set of offsets.
//!
//! A commit is retried only within the writer's deadline (`write_timeout`, 10 s): a leader
//! that died after appending it, a response lost on the way back. What is remembered is kept
//! for `COMMIT_DEDUP_WINDOW_MS` of the state's time (the leader's clock, from `Tick`), three
//! times that deadline, however many objects are committed meanwhile. `OUTCOMES_MAX` bounds
//! the memory it takes; it is reached only above ~260,000 committed batches a second, more
//! than one quorum commits.

use super::index::BatchOutcome;
use crate::ids::ObjectKey;
use imbl::{OrdMap, Vector};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How long (state time) a commit's outcome is remembered.
pub const COMMIT_DEDUP_WINDOW_MS: i64 = 30_000;
/// Batch outcomes remembered in all (16 bytes each, and one per commit); beyond it the oldest
/// commits are forgotten.
pub const OUTCOMES_MAX: usize = 8 << 20;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentCommits {
    /// Persistent collections: a copy of the state shares them (see
    /// `PartitionState::index`).
    #[serde(deserialize_with = "super::persistent::ord_map")]
    pub(super) outcomes: OrdMap<ObjectKey, Arc<Vec<Vec<BatchOutcome>>>>,
    /// Commit order of `outcomes`, oldest first: the state time of each commit (0 before the
    /// first `Tick`) and its key.
    #[serde(deserialize_with = "super::persistent::vector")]
    pub(super) order: Vector<(i64, ObjectKey)>,
    /// What `outcomes` costs (see `batch_count`).
    pub(super) batches: usize,
}

impl RecentCommits {
    pub(super) fn get(&self, key: &ObjectKey) -> Option<&Vec<Vec<BatchOutcome>>> {
        self.outcomes.get(key).map(|o| &**o)
    }

    pub(super) fn remember(
        &mut self,
        key: ObjectKey,
        outcomes: Vec<Vec<BatchOutcome>>,
        now_ms: i64,
    ) {
        self.batches += batch_count(&outcomes);
        while self.batches > OUTCOMES_MAX && self.forget_oldest() {}
        self.order.push_back((now_ms, key.clone()));
        if let Some(replaced) = self.outcomes.insert(key, Arc::new(outcomes)) {
            // Not reached (a key seen again is answered from here), but keep the count true.
            self.batches = self.batches.saturating_sub(batch_count(&replaced));
        }
    }

    /// Forgets the commits made before `cutoff_ms`.
    pub(super) fn forget_before(&mut self, cutoff_ms: i64) {
        while self.order.front().is_some_and(|(at, _)| *at < cutoff_ms) && self.forget_oldest() {}
    }

    /// Commits remembered before the state's clock started (from a log or snapshot written
    /// before `Tick` existed) count from its first tick.
    pub(super) fn start_clock(&mut self, now_ms: i64) {
        self.order = self
            .order
            .iter()
            .map(|(at, key)| (if *at == 0 { now_ms } else { *at }, key.clone()))
            .collect();
    }

    pub fn len(&self) -> usize {
        self.outcomes.len()
    }

    fn forget_oldest(&mut self) -> bool {
        let Some((_, key)) = self.order.pop_front() else {
            return false;
        };
        if let Some(outcomes) = self.outcomes.remove(&key) {
            // Saturating: the count comes from a snapshot too, and a damaged one must not
            // make apply panic.
            self.batches = self.batches.saturating_sub(batch_count(&outcomes));
        }
        true
    }
}

/// What a commit costs against `OUTCOMES_MAX`: its batches, and one for the key (a commit of
/// no batches is remembered too).
fn batch_count(outcomes: &[Vec<BatchOutcome>]) -> usize {
    1 + outcomes.iter().map(Vec::len).sum::<usize>()
}
