//! Job leases: which agent runs which background job (compaction of a shard of partitions, the
//! collector), so two agents do not do the same work. A lease is held until a time of the
//! state's clock; its holder renews it, and once it lapses (its holder died or stopped) the
//! next agent to ask gets it.
//!
//! Leases make the work efficient, not correct: a compactor whose lease lapsed mid-job loses
//! the swap (`ReplaceRuns` checks the runs it replaces), and deleting an object twice is
//! harmless.

use imbl::OrdMap;
use serde::{Deserialize, Serialize};

/// How many shards partitions are compacted in: each is one lease, so up to this many agents
/// compact at once.
pub const COMPACTION_SHARDS: u16 = 16;
/// The longest lease one request may take (state time).
pub const LEASE_MS_MAX: i64 = 600_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Job {
    /// Compacting the partitions of one shard (`shard_of`).
    Compaction { shard: u16 },
    /// Retention, deleting dead objects and sweeping orphans: one agent at a time.
    Collection,
}

impl Job {
    /// Whether the job is one the state knows (a shard within range).
    pub fn is_known(&self) -> bool {
        match self {
            Job::Compaction { shard } => *shard < COMPACTION_SHARDS,
            Job::Collection => true,
        }
    }
}

/// The compaction shard of a partition: a fixed function of its topic id and number, the same
/// on every node.
pub fn shard_of(topic_id: &uuid::Uuid, partition: i32) -> u16 {
    let (high, low) = topic_id.as_u64_pair();
    let mixed =
        crate::random::SplitMix64::new(high ^ low.rotate_left(17) ^ partition as u64).next_u64();
    (mixed % u64::from(COMPACTION_SHARDS)) as u16
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub holder: i32,
    pub until_ms: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leases {
    #[serde(deserialize_with = "super::persistent::ord_map")]
    held: OrdMap<Job, Lease>,
}

impl Leases {
    pub fn get(&self, job: &Job) -> Option<&Lease> {
        self.held.get(job)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Job, &Lease)> {
        self.held.iter()
    }

    /// Grants or renews `job` to `holder` until `now_ms + for_ms` if it is free, lapsed or
    /// already the holder's; returns whether the holder has it.
    pub(super) fn acquire(&mut self, job: Job, holder: i32, for_ms: i64, now_ms: i64) -> bool {
        if !job.is_known() || for_ms <= 0 {
            return false;
        }
        let free = self
            .held
            .get(&job)
            .is_none_or(|l| l.holder == holder || l.until_ms <= now_ms);
        if free {
            let until_ms = now_ms.saturating_add(for_ms.min(LEASE_MS_MAX));
            self.held.insert(job, Lease { holder, until_ms });
        }
        free
    }

    /// Gives up the holder's leases (an agent that stops): the next asker gets them at once.
    pub(super) fn release_all(&mut self, holder: i32) {
        self.held = self
            .held
            .iter()
            .filter(|(_, l)| l.holder != holder)
            .map(|(job, l)| (*job, *l))
            .collect();
    }
}
