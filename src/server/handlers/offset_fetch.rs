//! OffsetFetch (key 9): committed positions of groups — one group a request up to v7, several
//! from v8. From v9 a KIP-848 member names itself and its epoch, and a stale one is told so
//! (STALE_MEMBER_EPOCH), as in Kafka. A request that wants stable offsets (`require_stable`,
//! v7+) hears UNSTABLE_OFFSET_COMMIT for a partition whose offset an open transaction holds;
//! the client asks again once the transaction ends.
//!
//! The positions come from a copy caught up with the quorum (`fresh_copy`): a coordinator
//! that just took the group over (an agent's lease changed) may not yet have applied the
//! last commits its predecessor made, and an older position would send the group's members
//! back. Until it has, it answers COORDINATOR_LOAD_IN_PROGRESS, as a Kafka coordinator still
//! loading its offsets partition does, and the client asks again.

use crate::metadata::state::{GroupOffset, MetadataState};
use crate::protocol::ErrorCode;
use crate::protocol::messages::OffsetFetchRequest;
use crate::protocol::messages::OffsetFetchResponse;
use crate::protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use crate::server::broker::Broker;
use crate::server::fresh_copy::{LocalCopy, catch_up};

/// One partition's committed position: (partition, offset, leader epoch, metadata, error); -1
/// and an empty string when nothing was committed, as in Kafka.
type Committed = (i32, i64, i32, String, ErrorCode);

pub async fn handle(
    broker: &Broker,
    request: OffsetFetchRequest,
    version: i16,
) -> OffsetFetchResponse {
    // Groups another agent coordinates are refused without waiting for a catch-up.
    let answers_here = version < 8
        || request
            .groups
            .iter()
            .any(|g| broker.coordinates(&g.group_id));
    let loading = answers_here && catch_up(broker).await == LocalCopy::MayLag;
    if version < 8 {
        if loading {
            return error_before_v8(&request, ErrorCode::CoordinatorLoadInProgress);
        }
        let wanted = request.topics.map(|ts| {
            ts.into_iter()
                .map(|t| (t.name, t.partition_indexes))
                .collect()
        });
        let topics = broker
            .metadata
            .read(|state| committed(state, &request.group_id, wanted, request.require_stable));
        return OffsetFetchResponse {
            topics: topics
                .into_iter()
                .map(|(name, partitions)| OffsetFetchResponseTopic {
                    name,
                    partitions: partitions
                        .into_iter()
                        .map(
                            |(p, offset, epoch, metadata, code)| OffsetFetchResponsePartition {
                                partition_index: p,
                                committed_offset: offset,
                                committed_leader_epoch: epoch,
                                metadata: Some(metadata),
                                error_code: code.code(),
                                ..Default::default()
                            },
                        )
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
    }
    let groups = request
        .groups
        .into_iter()
        .map(|group| {
            let refused = |code: ErrorCode| OffsetFetchResponseGroup {
                group_id: group.group_id.clone(),
                error_code: code.code(),
                ..Default::default()
            };
            if !broker.coordinates(&group.group_id) {
                return refused(ErrorCode::NotCoordinator);
            }
            if loading {
                return refused(ErrorCode::CoordinatorLoadInProgress);
            }
            if let Some(member) = &group.member_id
                && let Some(code) =
                    broker
                        .groups
                        .check_consumer_member(&group.group_id, member, group.member_epoch)
                && code != ErrorCode::None
            {
                return refused(code);
            }
            let wanted = group.topics.map(|ts| {
                ts.into_iter()
                    .map(|t| (t.name, t.partition_indexes))
                    .collect()
            });
            let topics = broker
                .metadata
                .read(|state| committed(state, &group.group_id, wanted, request.require_stable));
            OffsetFetchResponseGroup {
                group_id: group.group_id,
                topics: topics
                    .into_iter()
                    .map(|(name, partitions)| OffsetFetchResponseTopics {
                        name,
                        partitions: partitions
                            .into_iter()
                            .map(|(p, offset, epoch, metadata, code)| {
                                OffsetFetchResponsePartitions {
                                    partition_index: p,
                                    committed_offset: offset,
                                    committed_leader_epoch: epoch,
                                    metadata: Some(metadata),
                                    error_code: code.code(),
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }
        })
        .collect();
    OffsetFetchResponse {
        groups,
        ..Default::default()
    }
}

/// A partition answered with `code` alone (below v8): no offset, epoch or metadata, as
/// Kafka answers a refused or unknown partition.
pub fn refused_partition(partition_index: i32, code: i16) -> OffsetFetchResponsePartition {
    OffsetFetchResponsePartition {
        partition_index,
        committed_offset: -1,
        committed_leader_epoch: -1,
        metadata: Some(String::new()),
        error_code: code,
        ..Default::default()
    }
}

/// `refused_partition` in a group's answer (v8 and later).
pub fn refused_partition_v8(partition_index: i32, code: i16) -> OffsetFetchResponsePartitions {
    OffsetFetchResponsePartitions {
        partition_index,
        committed_offset: -1,
        committed_leader_epoch: -1,
        metadata: Some(String::new()),
        error_code: code,
        ..Default::default()
    }
}

/// An error for the whole request before v8 (COORDINATOR_LOAD_IN_PROGRESS, say): in the
/// top-level error (v2 to v7) and in each requested partition's. v0 and v1 have no top-level
/// error, and an empty answer there would read as "nothing committed", so Kafka answers there
/// per partition; from v2 it leaves the partitions out, where clients read the top-level
/// error first and ignore them.
pub fn error_before_v8(request: &OffsetFetchRequest, error: ErrorCode) -> OffsetFetchResponse {
    let code = error.code();
    let topics = request
        .topics
        .iter()
        .flatten()
        .map(|t| OffsetFetchResponseTopic {
            name: t.name.clone(),
            partitions: t
                .partition_indexes
                .iter()
                .map(|&p| refused_partition(p, code))
                .collect(),
            ..Default::default()
        });
    OffsetFetchResponse {
        error_code: code,
        topics: topics.collect(),
        ..Default::default()
    }
}

/// The committed positions of the wanted partitions, or of every partition the group committed
/// (`None`), by topic.
fn committed(
    state: &MetadataState,
    group: &str,
    wanted: Option<Vec<(String, Vec<i32>)>>,
    require_stable: bool,
) -> Vec<(String, Vec<Committed>)> {
    let pending = match require_stable {
        true => state.transactions().pending_offsets(group),
        false => Default::default(),
    };
    let entry = |topic: &str, p: i32, c: Option<&GroupOffset>| -> Committed {
        if pending.contains(&(topic.to_string(), p)) {
            return (p, -1, -1, String::new(), ErrorCode::UnstableOffsetCommit);
        }
        (
            p,
            c.map_or(-1, |c| c.offset.0),
            c.map_or(-1, |c| c.leader_epoch),
            c.and_then(|c| c.metadata.clone()).unwrap_or_default(),
            ErrorCode::None,
        )
    };
    match wanted {
        Some(topics) => topics
            .into_iter()
            .map(|(name, partitions)| {
                let list = partitions
                    .iter()
                    .map(|&p| entry(&name, p, state.group_offset(group, &name, p)))
                    .collect();
                (name, list)
            })
            .collect(),
        None => {
            let mut out: Vec<(String, Vec<Committed>)> = Vec::new();
            for ((topic, partition), c) in state.group_offsets(group) {
                let e = entry(topic, *partition, Some(c));
                match out.iter_mut().find(|(name, _)| name == topic) {
                    Some((_, list)) => list.push(e),
                    None => out.push((topic.clone(), vec![e])),
                }
            }
            out
        }
    }
}
