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
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::{ErrorResponse, ItemErrors};
use crate::protocol::messages::OffsetFetchRequest;
use crate::protocol::messages::OffsetFetchResponse;
use crate::protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::Broker;
use crate::server::fresh_copy::{LocalCopy, catch_up};
use uuid::Uuid;

/// One partition's committed position: (partition, offset, leader epoch, metadata, error); -1
/// and an empty string when nothing was committed, as in Kafka.
type Committed = (i32, i64, i32, String, ErrorCode);

pub struct OffsetFetch;

impl Api for OffsetFetch {
    type Request = OffsetFetchRequest;
    type Response = OffsetFetchResponse;
    const KEY: ApiKey = ApiKey::OffsetFetch;
    const VERSIONS: (i16, i16) = (1, 9);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DESCRIBE, Acl::TOPIC_DESCRIBE]);

    fn coordinator(request: &OffsetFetchRequest) -> Option<&str> {
        match request.groups.first() {
            Some(group) => Some(&group.group_id),
            None => Some(&request.group_id),
        }
    }

    /// 30 per denied group (the whole request below v8); 29 per named topic, hidden if all.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut OffsetFetchRequest,
        version: i16,
    ) -> Authorized<OffsetFetchResponse> {
        // Before v8 a request names one group (`group_id`), from v8 on a list.
        if request.groups.is_empty() && !gate.allowed(Acl::GROUP_DESCRIBE, &request.group_id) {
            return Authorized::refuse(request, version, ErrorCode::GroupAuthorizationFailed);
        }
        // From v8 on, each group is answered on its own, as Kafka does. In every version a
        // topic the client may not describe is answered with 29 when named, and left out of
        // an answer that lists all the group committed (`filter`).
        let refused_groups = OffsetFetchRequest {
            groups: take_refused(&mut request.groups, |g| {
                gate.allowed(Acl::GROUP_DESCRIBE, &g.group_id)
            }),
            ..Default::default()
        };
        // (group, name, id, partitions); the group is the request's own below v8.
        let mut refused_topics: Vec<(String, String, Uuid, Vec<i32>)> = Vec::new();
        let mut filter = false;
        match &mut request.topics {
            None => filter |= request.groups.is_empty(),
            Some(topics) => {
                let refused = take_refused(topics, |t| gate.allowed(Acl::TOPIC_DESCRIBE, &t.name));
                for t in refused {
                    refused_topics.push((
                        request.group_id.clone(),
                        t.name,
                        Uuid::nil(),
                        t.partition_indexes,
                    ));
                }
            }
        }
        for group in &mut request.groups {
            match &mut group.topics {
                None => filter = true,
                Some(topics) => {
                    let refused = take_refused(topics, |t| {
                        gate.allowed(Acl::TOPIC_DESCRIBE, &gate.topic_name(&t.name, &t.topic_id))
                    });
                    for t in refused {
                        refused_topics.push((
                            group.group_id.clone(),
                            t.name,
                            t.topic_id,
                            t.partition_indexes,
                        ));
                    }
                }
            }
        }
        Authorized::restoring(move |gate, response: &mut OffsetFetchResponse| {
            if filter {
                let describable = |name: &str| gate.allowed_quietly(Acl::TOPIC_DESCRIBE, name);
                response.topics.retain(|t| describable(&t.name));
                for group in &mut response.groups {
                    group
                        .topics
                        .retain(|t| describable(&gate.topic_name(&t.name, &t.topic_id)));
                }
            }
            let code = ErrorCode::TopicAuthorizationFailed.code();
            // As in Kafka, an answer that failed whole (the coordinator is loading, say) stays
            // as it is: the client asks again.
            for (group_id, name, topic_id, partitions) in refused_topics {
                if response.groups.is_empty() && response.error_code == 0 {
                    response.topics.push(OffsetFetchResponseTopic {
                        name,
                        partitions: partitions
                            .into_iter()
                            .map(|p| refused_partition(p, code))
                            .collect(),
                        ..Default::default()
                    });
                } else if let Some(group) = response
                    .groups
                    .iter_mut()
                    .find(|g| g.group_id == group_id && g.error_code == 0)
                {
                    group.topics.push(OffsetFetchResponseTopics {
                        name,
                        topic_id,
                        partitions: partitions
                            .into_iter()
                            .map(|p| refused_partition_v8(p, code))
                            .collect(),
                        ..Default::default()
                    });
                }
            }
            let refused = refused_groups.item_errors(version, ErrorCode::GroupAuthorizationFailed);
            OffsetFetchRequest::append_items(response, refused);
        })
    }

    async fn handle(ctx: Ctx<'_>, request: OffsetFetchRequest) -> Reply<OffsetFetchResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

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
            // Kafka's answer for the whole request: per partition before v2, at the top level
            // from v2 (where clients read it first).
            return request.error_response(version, ErrorCode::CoordinatorLoadInProgress);
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
                tracing::debug!(
                    group = group.group_id,
                    member,
                    epoch = group.member_epoch,
                    ?code,
                    "OffsetFetch refused"
                );
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
            tracing::debug!(
                group = group.group_id,
                member = ?group.member_id,
                epoch = group.member_epoch,
                offsets = ?topics,
                "OffsetFetch"
            );
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
