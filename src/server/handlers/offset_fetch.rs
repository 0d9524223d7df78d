//! OffsetFetch (key 9): committed positions of groups — one group a request up to v7, several
//! from v8. From v9 a KIP-848 member names itself and its epoch, and a stale one is told so
//! (STALE_MEMBER_EPOCH), as in Kafka.

use crate::metadata::state::{GroupOffset, MetadataState};
use crate::protocol::ErrorCode;
use crate::protocol::messages::OffsetFetchRequest;
use crate::protocol::messages::OffsetFetchResponse;
use crate::protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use crate::server::broker::Broker;

/// One partition's committed position: (partition, offset, leader epoch, metadata); -1 and an
/// empty string when nothing was committed, as in Kafka.
type Committed = (i32, i64, i32, String);

pub fn handle(broker: &Broker, request: OffsetFetchRequest, version: i16) -> OffsetFetchResponse {
    if version < 8 {
        let wanted = request.topics.map(|ts| {
            ts.into_iter()
                .map(|t| (t.name, t.partition_indexes))
                .collect()
        });
        let topics = broker
            .metadata
            .read(|state| committed(state, &request.group_id, wanted));
        return OffsetFetchResponse {
            topics: topics
                .into_iter()
                .map(|(name, partitions)| OffsetFetchResponseTopic {
                    name,
                    partitions: partitions
                        .into_iter()
                        .map(
                            |(p, offset, epoch, metadata)| OffsetFetchResponsePartition {
                                partition_index: p,
                                committed_offset: offset,
                                committed_leader_epoch: epoch,
                                metadata: Some(metadata),
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
                .read(|state| committed(state, &group.group_id, wanted));
            OffsetFetchResponseGroup {
                group_id: group.group_id,
                topics: topics
                    .into_iter()
                    .map(|(name, partitions)| OffsetFetchResponseTopics {
                        name,
                        partitions: partitions
                            .into_iter()
                            .map(
                                |(p, offset, epoch, metadata)| OffsetFetchResponsePartitions {
                                    partition_index: p,
                                    committed_offset: offset,
                                    committed_leader_epoch: epoch,
                                    metadata: Some(metadata),
                                    ..Default::default()
                                },
                            )
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

/// The committed positions of the wanted partitions, or of every partition the group committed
/// (`None`), by topic.
fn committed(
    state: &MetadataState,
    group: &str,
    wanted: Option<Vec<(String, Vec<i32>)>>,
) -> Vec<(String, Vec<Committed>)> {
    let entry = |p: i32, c: Option<&GroupOffset>| -> Committed {
        (
            p,
            c.map_or(-1, |c| c.offset.0),
            c.map_or(-1, |c| c.leader_epoch),
            c.and_then(|c| c.metadata.clone()).unwrap_or_default(),
        )
    };
    match wanted {
        Some(topics) => topics
            .into_iter()
            .map(|(name, partitions)| {
                let list = partitions
                    .iter()
                    .map(|&p| entry(p, state.group_offset(group, &name, p)))
                    .collect();
                (name, list)
            })
            .collect(),
        None => {
            let mut out: Vec<(String, Vec<Committed>)> = Vec::new();
            for ((topic, partition), c) in state.group_offsets(group) {
                let e = entry(*partition, Some(c));
                match out.iter_mut().find(|(name, _)| name == topic) {
                    Some((_, list)) => list.push(e),
                    None => out.push((topic.clone(), vec![e])),
                }
            }
            out
        }
    }
}
