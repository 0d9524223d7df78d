//! The state's earlier snapshot layouts, read so that a data directory written by an older
//! floe still starts. They are only ever decoded, then converted; snapshots are always
//! written in the current layout.
//!
//! - V1: one flat struct, the topics version not stored (before the state was split by noun).
//! - V2: split by noun, without the state's clock (before `Tick`): no producer activity
//!   times, commit outcomes without their time.

use super::MetadataState;
use super::agents::{Agent, Registry};
use super::groups::{GroupOffset, GroupOffsets};
use super::index::BatchOutcome;
use super::limits::Limits;
use super::producers::{ProducerState, Producers, SequencedBatch};
use super::recent_commits::RecentCommits;
use super::topics::{Topic, Topics};
use crate::ids::{ObjectKey, ProducerEpoch, ProducerId, TopicPartition};
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use uuid::Uuid;

/// Field for field, in order, what the first layout wrote (the newtypes serialize as the
/// values they wrap, so the parts' own types read the old bytes).
#[derive(Deserialize)]
pub struct MetadataStateV1 {
    topics: BTreeMap<String, Topic>,
    topic_names: BTreeMap<Uuid, String>,
    next_producer_id: i64,
    producers: BTreeMap<ProducerId, ProducerStateV2>,
    group_offsets: BTreeMap<String, BTreeMap<(String, i32), GroupOffset>>,
    agents: BTreeMap<i32, Agent>,
    cluster_id: Option<String>,
    applied: u64,
    recent_commits: BTreeMap<ObjectKey, Vec<Vec<BatchOutcome>>>,
    recent_order: VecDeque<ObjectKey>,
}

/// The second layout, field for field.
#[derive(Deserialize)]
pub struct MetadataStateV2 {
    topics: Topics,
    producers: ProducersV2,
    group_offsets: GroupOffsets,
    registry: Registry,
    recent_commits: RecentCommitsV2,
    limits: Option<Limits>,
    applied: u64,
}

#[derive(Deserialize)]
struct ProducersV2 {
    next_id: i64,
    by_id: BTreeMap<ProducerId, ProducerStateV2>,
}

#[derive(Deserialize)]
struct ProducerStateV2 {
    epoch: ProducerEpoch,
    partitions: BTreeMap<TopicPartition, VecDeque<SequencedBatch>>,
}

#[derive(Deserialize)]
struct RecentCommitsV2 {
    outcomes: BTreeMap<ObjectKey, Vec<Vec<BatchOutcome>>>,
    order: VecDeque<ObjectKey>,
}

impl From<MetadataStateV1> for MetadataStateV2 {
    fn from(old: MetadataStateV1) -> MetadataStateV2 {
        MetadataStateV2 {
            topics: Topics {
                by_name: old
                    .topics
                    .into_iter()
                    .map(|(name, topic)| (name, Arc::new(topic)))
                    .collect(),
                names: old.topic_names.into_iter().collect(),
                // The old layout kept no version. Any value works as long as it moves with the
                // topics from here on; the applied count is the same on every node restored
                // from the same snapshot.
                version: old.applied,
            },
            producers: ProducersV2 {
                next_id: old.next_producer_id,
                by_id: old.producers,
            },
            group_offsets: GroupOffsets {
                by_group: old
                    .group_offsets
                    .into_iter()
                    .map(|(group, offsets)| {
                        (group, offsets.into_iter().collect::<imbl::OrdMap<_, _>>())
                    })
                    .collect(),
            },
            registry: Registry {
                agents: old.agents.into_iter().collect(),
                cluster_id: old.cluster_id,
            },
            recent_commits: RecentCommitsV2 {
                outcomes: old.recent_commits,
                order: old.recent_order,
            },
            limits: None,
            applied: old.applied,
        }
    }
}

/// Before the clock, every producer and remembered commit is stamped 0: they count from the
/// first `Tick` (see `MetadataState::tick`).
impl From<MetadataStateV2> for MetadataState {
    fn from(old: MetadataStateV2) -> MetadataState {
        let mut recent_commits = RecentCommits::default();
        let mut outcomes = old.recent_commits.outcomes;
        for key in old.recent_commits.order {
            if let Some(outcomes) = outcomes.remove(&key) {
                recent_commits.remember(key, outcomes, 0);
            }
        }
        MetadataState {
            topics: old.topics,
            producers: Producers {
                next_id: old.producers.next_id,
                by_id: old
                    .producers
                    .by_id
                    .into_iter()
                    .map(|(id, p)| {
                        let state = ProducerState {
                            epoch: p.epoch,
                            partitions: p.partitions,
                            last_active_ms: 0,
                        };
                        (id, Arc::new(state))
                    })
                    .collect(),
            },
            group_offsets: old.group_offsets,
            registry: old.registry,
            recent_commits,
            limits: old.limits,
            applied: old.applied,
            now_ms: 0,
            producers_checked_ms: 0,
        }
    }
}
