//! OffsetCommit (key 8): consumer positions, committed through metadata.
//!
//! Commits by group members are checked against the group's current generation
//! (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS) or, in a KIP-848 group,
//! against the member's epoch (STALE_MEMBER_EPOCH; such members must use v9+); consumers using
//! `assign()` commit with generation -1 and no member id.

use crate::metadata::state;
use crate::metadata::state::GroupOffset;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::OffsetCommitRequest;
use crate::protocol::messages::OffsetCommitResponse;
use crate::protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, offset_commit_error};

pub struct OffsetCommit;

impl Api for OffsetCommit {
    type Request = OffsetCommitRequest;
    type Response = OffsetCommitResponse;
    const KEY: ApiKey = ApiKey::OffsetCommit;
    const VERSIONS: (i16, i16) = (2, 9);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ, Acl::TOPIC_READ]);

    fn coordinator(request: &OffsetCommitRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    /// A denied group refuses every partition (30); else a topic it may not read gets 29.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut OffsetCommitRequest,
        version: i16,
    ) -> Authorized<OffsetCommitResponse> {
        if !gate.allowed(Acl::GROUP_READ, &request.group_id) {
            return Authorized::refuse(request, version, ErrorCode::GroupAuthorizationFailed);
        }
        let refused = OffsetCommitRequest {
            topics: take_refused(&mut request.topics, |t| {
                gate.allowed(Acl::TOPIC_READ, &gate.topic_name(&t.name, &t.topic_id))
            }),
            ..Default::default()
        };
        Authorized::restoring_items(refused, version, ErrorCode::TopicAuthorizationFailed)
    }

    async fn handle(ctx: Ctx<'_>, request: OffsetCommitRequest) -> Reply<OffsetCommitResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: OffsetCommitRequest,
    version: i16,
) -> OffsetCommitResponse {
    let now_ms = broker.clock.now_ms();
    let membership = if request.group_id.is_empty() {
        ErrorCode::None
    } else if !broker.coordinates(&request.group_id) {
        ErrorCode::NotCoordinator
    } else if broker.groups.is_fenced(
        &request.group_id,
        &request.member_id,
        request.group_instance_id.as_deref(),
    ) {
        ErrorCode::FencedInstanceId
    } else {
        let check = |partitions: &[(uuid::Uuid, i32)]| {
            broker.groups.check_commit(
                &request.group_id,
                &request.member_id,
                request.generation_id_or_member_epoch,
                version,
                partitions,
            )
        };
        match check(&[]) {
            // A KIP-848 member may still commit, at its previous epoch, partitions it holds:
            // only then are the committed partitions looked up by topic id.
            ErrorCode::StaleMemberEpoch => {
                let partitions: Vec<(uuid::Uuid, i32)> = broker.metadata.read(|state| {
                    request
                        .topics
                        .iter()
                        .filter_map(|t| Some((state.topic(&t.name)?.id, t)))
                        .flat_map(|(id, t)| {
                            t.partitions.iter().map(move |p| (id, p.partition_index))
                        })
                        .collect()
                });
                check(&partitions)
            }
            code => code,
        }
    };
    let limits = broker.metadata.read(|s| s.limits());
    let mut commands = Vec::new();
    let mut results = Vec::new();
    for topic in &request.topics {
        for p in &topic.partitions {
            let too_large = !limits.offset_metadata_allows(p.committed_metadata.as_deref());
            if !limits.group_id_allows(&request.group_id) {
                results.push((
                    topic.name.clone(),
                    p.partition_index,
                    Some(ErrorCode::InvalidGroupId),
                ));
            } else if membership != ErrorCode::None {
                results.push((topic.name.clone(), p.partition_index, Some(membership)));
            } else if too_large {
                results.push((
                    topic.name.clone(),
                    p.partition_index,
                    Some(ErrorCode::OffsetMetadataTooLarge),
                ));
            } else {
                results.push((topic.name.clone(), p.partition_index, None));
                commands.push(state::OffsetCommit {
                    group: request.group_id.clone(),
                    topic: topic.name.clone(),
                    partition: p.partition_index,
                    offset: GroupOffset {
                        offset: crate::ids::Offset(p.committed_offset),
                        leader_epoch: p.committed_leader_epoch,
                        metadata: p.committed_metadata.clone(),
                        commit_timestamp: now_ms,
                    },
                });
            }
        }
    }
    tracing::debug!(
        group = request.group_id,
        member = request.member_id,
        epoch = request.generation_id_or_member_epoch,
        ?membership,
        offsets = ?commands.iter().map(|c| (&c.topic, c.partition, c.offset.offset.0)).collect::<Vec<_>>(),
        "OffsetCommit"
    );
    let outcomes = match broker.metadata.write_each(commands).await {
        Ok(outcomes) => Ok(outcomes),
        Err(e) => Err(failed_write(&e, Role::Coordinator)),
    };
    let mut applied = outcomes.as_ref().map(|o| o.iter()).map_err(|e| *e);
    let mut response = OffsetCommitResponse::default();
    for (name, partition, error) in results {
        let code = match error {
            Some(code) => code,
            None => match &mut applied {
                Err(code) => *code,
                Ok(iter) => match iter.next() {
                    Some(Ok(())) => ErrorCode::None,
                    Some(Err(e)) => offset_commit_error(*e),
                    None => ErrorCode::UnknownServerError,
                },
            },
        };
        let entry = OffsetCommitResponsePartition {
            partition_index: partition,
            error_code: code.code(),
            ..Default::default()
        };
        match response.topics.iter_mut().find(|t| t.name == name) {
            Some(t) => t.partitions.push(entry),
            None => response.topics.push(OffsetCommitResponseTopic {
                name,
                partitions: vec![entry],
                ..Default::default()
            }),
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::OffsetFetchRequest;
    use crate::protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    use crate::protocol::messages::offset_fetch_request::{
        OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
    };
    use crate::server::handlers::offset_fetch::OffsetFetch;
    use crate::server::handlers::testing::TestNode;

    fn committing(topic: &str, partition: i32, offset: i64) -> OffsetCommitRequest {
        OffsetCommitRequest {
            group_id: "readers".into(),
            // Outside the group's generations: a client that assigns partitions itself.
            generation_id_or_member_epoch: -1,
            topics: vec![OffsetCommitRequestTopic {
                name: topic.into(),
                partitions: vec![OffsetCommitRequestPartition {
                    partition_index: partition,
                    committed_offset: offset,
                    committed_metadata: Some("m".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_is_what_offset_fetch_reads_at_every_version() {
        let node = TestNode::start().await;
        node.create_topic("orders", 2).await;
        let answer = node
            .call::<OffsetCommit>(&committing("orders", 1, 42), 8)
            .await;
        let code = answer.topics[0].partitions[0].error_code;
        assert_eq!(code, 0, "{answer:?}");
        let unknown = node
            .call::<OffsetCommit>(&committing("orders", 9, 1), 8)
            .await;
        let code = unknown.topics[0].partitions[0].error_code;
        assert_eq!(code, ErrorCode::UnknownTopicOrPartition.code());

        let before_v8 = OffsetFetchRequest {
            group_id: "readers".into(),
            topics: Some(vec![OffsetFetchRequestTopic {
                name: "orders".into(),
                partition_indexes: vec![0, 1],
                ..Default::default()
            }]),
            ..Default::default()
        };
        for version in 1..=7 {
            let answer = node.call::<OffsetFetch>(&before_v8, version).await;
            let partitions = &answer.topics[0].partitions;
            let read: Vec<(i32, i64)> = partitions
                .iter()
                .map(|p| (p.partition_index, p.committed_offset))
                .collect();
            assert_eq!(read, [(0, -1), (1, 42)], "v{version}: {answer:?}");
            assert_eq!(partitions[1].metadata.as_deref(), Some("m"));
        }
        let from_v8 = OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: "readers".into(),
                topics: Some(vec![OffsetFetchRequestTopics {
                    name: "orders".into(),
                    partition_indexes: vec![1],
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            ..Default::default()
        };
        let answer = node.call::<OffsetFetch>(&from_v8, 8).await;
        let group = &answer.groups[0];
        assert_eq!((group.group_id.as_str(), group.error_code), ("readers", 0));
        assert_eq!(group.topics[0].partitions[0].committed_offset, 42);
        node.stop().await;
    }
}
