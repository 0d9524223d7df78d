//! The state's earlier snapshot layouts, read so that a data directory written by an older
//! floe still starts. They are only ever decoded, then converted; snapshots are always
//! written in the current layout.
//!
//! - V1: one flat struct, the topics version not stored (before the state was split by noun).
//! - V2: split by noun, without the state's clock (before `Tick`): no producer activity
//!   times, commit outcomes without their time.
//! - V3: index entries carrying their object's key (before the objects table, segments and
//!   job leases), partitions without their byte count.
//! - V4: before transactions.
//! - V5: before security (ACLs, SCRAM credentials, listener endpoints).

use super::MetadataState;
use super::agents::{Agent, Registry};
use super::groups::{GroupOffset, GroupOffsets};
use super::index::{BatchOutcome, BatchRef, PartitionState};
use super::limits::Limits;
use super::objects::Objects;
use super::producers::{ProducerState, Producers, SequencedBatch};
use super::recent_commits::RecentCommits;
use super::topics::{Topic, Topics};
use crate::ids::{ObjectKey, Offset, ProducerEpoch, ProducerId, TopicPartition};
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use uuid::Uuid;

/// Field for field, in order, what the first layout wrote (the newtypes serialize as the
/// values they wrap, so the parts' own types read the old bytes).
#[derive(Deserialize)]
pub struct MetadataStateV1 {
    topics: BTreeMap<String, TopicV3>,
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
    topics: TopicsV3,
    producers: ProducersV2,
    group_offsets: GroupOffsets,
    registry: Registry,
    recent_commits: RecentCommitsV2,
    limits: Option<Limits>,
    applied: u64,
}

/// The third layout, field for field.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct MetadataStateV3 {
    topics: TopicsV3,
    producers: Producers,
    group_offsets: GroupOffsets,
    registry: Registry,
    recent_commits: RecentCommits,
    limits: Option<Limits>,
    applied: u64,
    now_ms: i64,
    producers_checked_ms: i64,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct TopicsV3 {
    by_name: BTreeMap<String, TopicV3>,
    names: BTreeMap<Uuid, String>,
    version: u64,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct TopicV3 {
    name: String,
    id: Uuid,
    partitions: Vec<PartitionStateV3>,
    configs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct PartitionStateV3 {
    log_start_offset: Offset,
    high_watermark: Offset,
    index: Vec<BatchRefV3>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct BatchRefV3 {
    base_offset: Offset,
    end_offset: Offset,
    object_key: ObjectKey,
    byte_start: u64,
    byte_len: u64,
    max_timestamp: i64,
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
            topics: TopicsV3 {
                by_name: old.topics,
                names: old.topic_names,
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

impl From<MetadataStateV1> for MetadataStateV3 {
    fn from(old: MetadataStateV1) -> MetadataStateV3 {
        MetadataStateV2::from(old).into()
    }
}

/// Before the clock, every producer and remembered commit is stamped 0: they count from the
/// first `Tick` (see `MetadataState::tick`).
impl From<MetadataStateV2> for MetadataStateV3 {
    fn from(old: MetadataStateV2) -> MetadataStateV3 {
        let mut recent_commits = RecentCommits::default();
        let mut outcomes = old.recent_commits.outcomes;
        for key in old.recent_commits.order {
            if let Some(outcomes) = outcomes.remove(&key) {
                recent_commits.remember(key, outcomes, 0);
            }
        }
        MetadataStateV3 {
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

/// Each key the index entries carried goes into the objects table once, with a reference per
/// entry; the partitions' byte counts are summed from their entries.
impl From<MetadataStateV3> for MetadataState {
    fn from(old: MetadataStateV3) -> MetadataState {
        let mut objects = Objects::default();
        let by_name = old
            .topics
            .by_name
            .into_iter()
            .map(|(name, topic)| {
                let partitions = topic
                    .partitions
                    .into_iter()
                    .map(|p| {
                        let index: imbl::Vector<BatchRef> = p
                            .index
                            .into_iter()
                            .map(|r| BatchRef {
                                base_offset: r.base_offset,
                                end_offset: r.end_offset,
                                object: objects.intern(r.object_key, old.now_ms),
                                byte_start: r.byte_start,
                                byte_len: r.byte_len,
                                max_timestamp: r.max_timestamp,
                            })
                            .collect();
                        PartitionState {
                            log_start_offset: p.log_start_offset,
                            high_watermark: p.high_watermark,
                            bytes: index
                                .iter()
                                .fold(0u64, |sum, r| sum.saturating_add(r.byte_len)),
                            index,
                        }
                    })
                    .collect();
                let topic = Topic {
                    name: topic.name,
                    id: topic.id,
                    partitions,
                    configs: topic.configs,
                };
                (name, Arc::new(topic))
            })
            .collect();
        MetadataState {
            topics: Topics {
                by_name,
                names: old.topics.names.into_iter().collect(),
                version: old.topics.version,
            },
            producers: old.producers,
            group_offsets: old.group_offsets,
            registry: old.registry,
            recent_commits: old.recent_commits,
            limits: old.limits,
            applied: old.applied,
            now_ms: old.now_ms,
            producers_checked_ms: old.producers_checked_ms,
            objects,
            leases: Default::default(),
            transactions: Default::default(),
            security: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::{Command, CommittedBatch, PartitionBatches};

    /// The third layout of `state`, as the floe before the objects table wrote it.
    fn in_third_layout(state: &MetadataState) -> MetadataStateV3 {
        let key = |r: &BatchRef| state.objects.key(r.object).unwrap().clone();
        MetadataStateV3 {
            topics: TopicsV3 {
                by_name: state
                    .topics
                    .iter()
                    .map(|t| {
                        let partitions = t
                            .partitions
                            .iter()
                            .map(|p| PartitionStateV3 {
                                log_start_offset: p.log_start_offset,
                                high_watermark: p.high_watermark,
                                index: p
                                    .index
                                    .iter()
                                    .map(|r| BatchRefV3 {
                                        base_offset: r.base_offset,
                                        end_offset: r.end_offset,
                                        object_key: key(r),
                                        byte_start: r.byte_start,
                                        byte_len: r.byte_len,
                                        max_timestamp: r.max_timestamp,
                                    })
                                    .collect(),
                            })
                            .collect();
                        let topic = TopicV3 {
                            name: t.name.clone(),
                            id: t.id,
                            partitions,
                            configs: t.configs.clone(),
                        };
                        (t.name.clone(), topic)
                    })
                    .collect(),
                names: state.topics.names.clone().into_iter().collect(),
                version: state.topics.version,
            },
            producers: state.producers.clone(),
            group_offsets: state.group_offsets.clone(),
            registry: state.registry.clone(),
            recent_commits: state.recent_commits.clone(),
            limits: state.limits.clone(),
            applied: state.applied,
            now_ms: state.now_ms,
            producers_checked_ms: state.producers_checked_ms,
        }
    }

    #[test]
    fn the_third_layout_loads_with_each_key_stored_once_and_counted() {
        let mut state = MetadataState::default();
        state.apply(Command::Tick { now_ms: 5_000 });
        let id = Uuid::from_u128(3);
        state.apply(Command::CreateTopic {
            name: "t".into(),
            id,
            partitions: 2,
            configs: BTreeMap::new(),
        });
        for (n, key) in ["a", "b", "c"].iter().enumerate() {
            let batch = CommittedBatch {
                byte_start: 16,
                byte_len: 10 + n as u64,
                offset_count: 3,
                max_timestamp: 7,
                producer_id: ProducerId(-1),
                producer_epoch: ProducerEpoch(-1),
                base_sequence: -1,
                last_sequence: -1,
            };
            let mut second = batch.clone();
            second.byte_start = 100;
            state.apply(Command::CommitObject {
                object_key: ObjectKey::new(*key),
                partitions: (0..2)
                    .map(|p| PartitionBatches {
                        partition: TopicPartition {
                            topic_id: id,
                            partition: p,
                        },
                        batches: vec![if p == 0 {
                            batch.clone()
                        } else {
                            second.clone()
                        }],
                    })
                    .collect(),
            });
        }
        let bytes = postcard::to_stdvec(&in_third_layout(&state)).unwrap();
        let old: MetadataStateV3 = postcard::from_bytes(&bytes).unwrap();
        let loaded = MetadataState::from(old);
        let entries = |s: &MetadataState| -> Vec<(i64, i64, String, u64, u64, u32, u64)> {
            s.topics()
                .flat_map(|t| t.partitions.iter())
                .flat_map(|p| p.index.iter().map(move |r| (p, r)))
                .map(|(p, r)| {
                    let object = s.objects().get(r.object).unwrap();
                    (
                        r.base_offset.0,
                        r.end_offset.0,
                        object.key.to_string(),
                        r.byte_start,
                        r.byte_len,
                        object.refs,
                        p.bytes,
                    )
                })
                .collect()
        };
        assert_eq!(entries(&loaded), entries(&state));
        assert_eq!(loaded.objects().live_count(), 3);
        assert_eq!(loaded.now_ms(), state.now_ms());
        assert_eq!(loaded.applied(), state.applied());
    }
}

/// The fifth layout, field for field: the current one before security.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct MetadataStateV5 {
    topics: Topics,
    producers: Producers,
    group_offsets: GroupOffsets,
    registry: Registry,
    recent_commits: RecentCommits,
    limits: Option<Limits>,
    applied: u64,
    now_ms: i64,
    producers_checked_ms: i64,
    objects: Objects,
    leases: super::jobs::Leases,
    transactions: super::transactions::Transactions,
}

impl From<MetadataStateV5> for MetadataState {
    fn from(old: MetadataStateV5) -> MetadataState {
        MetadataState {
            topics: old.topics,
            producers: old.producers,
            group_offsets: old.group_offsets,
            registry: old.registry,
            recent_commits: old.recent_commits,
            limits: old.limits,
            applied: old.applied,
            now_ms: old.now_ms,
            producers_checked_ms: old.producers_checked_ms,
            objects: old.objects,
            leases: old.leases,
            transactions: old.transactions,
            security: Default::default(),
        }
    }
}

#[cfg(test)]
mod v5_tests {
    use super::*;
    use crate::metadata::state::Command;

    #[test]
    fn the_fifth_layout_loads_without_security() {
        let mut state = MetadataState::default();
        state.apply(Command::Tick { now_ms: 5_000 });
        state.apply(Command::CreateTopic {
            name: "t".into(),
            id: Uuid::from_u128(5),
            partitions: 1,
            configs: BTreeMap::new(),
        });
        let old = MetadataStateV5 {
            topics: state.topics.clone(),
            producers: state.producers.clone(),
            group_offsets: state.group_offsets.clone(),
            registry: state.registry.clone(),
            recent_commits: state.recent_commits.clone(),
            limits: state.limits.clone(),
            applied: state.applied,
            now_ms: state.now_ms,
            producers_checked_ms: state.producers_checked_ms,
            objects: state.objects.clone(),
            leases: state.leases.clone(),
            transactions: state.transactions.clone(),
        };
        let bytes = postcard::to_stdvec(&old).unwrap();
        let read: MetadataStateV5 = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(MetadataState::from(read), state);
    }
}

/// The fourth layout, field for field: the current one before transactions.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct MetadataStateV4 {
    topics: Topics,
    producers: Producers,
    group_offsets: GroupOffsets,
    registry: Registry,
    recent_commits: RecentCommits,
    limits: Option<Limits>,
    applied: u64,
    now_ms: i64,
    producers_checked_ms: i64,
    objects: Objects,
    leases: super::jobs::Leases,
}

impl From<MetadataStateV4> for MetadataState {
    fn from(old: MetadataStateV4) -> MetadataState {
        MetadataState {
            topics: old.topics,
            producers: old.producers,
            group_offsets: old.group_offsets,
            registry: old.registry,
            recent_commits: old.recent_commits,
            limits: old.limits,
            applied: old.applied,
            now_ms: old.now_ms,
            producers_checked_ms: old.producers_checked_ms,
            objects: old.objects,
            leases: old.leases,
            transactions: Default::default(),
            security: Default::default(),
        }
    }
}

#[cfg(test)]
mod v4_tests {
    use super::*;
    use crate::metadata::state::Command;

    #[test]
    fn the_fourth_layout_loads_without_transactions() {
        let mut state = MetadataState::default();
        state.apply(Command::Tick { now_ms: 5_000 });
        state.apply(Command::CreateTopic {
            name: "t".into(),
            id: Uuid::from_u128(4),
            partitions: 1,
            configs: BTreeMap::new(),
        });
        state.apply(Command::InitProducerId { existing: None });
        let old = MetadataStateV4 {
            topics: state.topics.clone(),
            producers: state.producers.clone(),
            group_offsets: state.group_offsets.clone(),
            registry: state.registry.clone(),
            recent_commits: state.recent_commits.clone(),
            limits: state.limits.clone(),
            applied: state.applied,
            now_ms: state.now_ms,
            producers_checked_ms: state.producers_checked_ms,
            objects: state.objects.clone(),
            leases: state.leases.clone(),
        };
        let bytes = postcard::to_stdvec(&old).unwrap();
        let read: MetadataStateV4 = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(MetadataState::from(read), state);
    }
}
