//! DescribeShareGroupOffsets (key 90): where a share group's reading of each partition starts
//! (its share-partition start offset: every record before it is done with) and, from version 1
//! (KIP-1226), its lag. Versions 0–1.
//!
//! As Kafka's `handleDescribeShareGroupOffsetsRequest`: a group needs DESCRIBE, else that
//! group alone is refused. Without topics, every partition the group has state for is listed,
//! leaving out topics the client may not describe; with topics, a topic it may not describe
//! is answered TOPIC_AUTHORIZATION_FAILED per partition, and a partition with no state (an
//! unknown topic, a partition the group never read) has start offset -1 and no error, which
//! Kafka calls absence of data. Neither the group's existence nor its kind is checked.

use super::share::group_refusal;
use crate::ids::TopicPartition;
use crate::metadata::state::MetadataState;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::DescribeShareGroupOffsetsRequest;
use crate::protocol::messages::DescribeShareGroupOffsetsResponse;
use crate::protocol::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup as RequestGroup;
use crate::protocol::messages::describe_share_group_offsets_response::{
    DescribeShareGroupOffsetsResponseGroup as Group,
    DescribeShareGroupOffsetsResponsePartition as Partition,
    DescribeShareGroupOffsetsResponseTopic as Topic,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::{Broker, LEADER_EPOCH};
use std::collections::BTreeMap;

pub struct DescribeShareGroupOffsets;

impl Api for DescribeShareGroupOffsets {
    type Request = DescribeShareGroupOffsetsRequest;
    type Response = DescribeShareGroupOffsetsResponse;
    const KEY: ApiKey = ApiKey::DescribeShareGroupOffsets;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DESCRIBE, Acl::TOPIC_DESCRIBE]);

    fn coordinator(request: &DescribeShareGroupOffsetsRequest) -> Option<&str> {
        request.groups.first().map(|g| g.group_id.as_str())
    }

    /// Group by group and topic by topic, in the handler.
    fn authorize(
        _: &Gate<'_>,
        _: &mut DescribeShareGroupOffsetsRequest,
        _: i16,
    ) -> Authorized<DescribeShareGroupOffsetsResponse> {
        Authorized::run()
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeShareGroupOffsetsRequest,
    ) -> Reply<DescribeShareGroupOffsetsResponse> {
        let gate = Gate::new(ctx.broker, &ctx.client, Self::NEEDS);
        Reply::Now(handle(ctx.broker, request, &gate))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeShareGroupOffsetsRequest,
    gate: &Gate<'_>,
) -> DescribeShareGroupOffsetsResponse {
    let groups = request
        .groups
        .iter()
        .map(|group| describe(broker, gate, group))
        .collect();
    DescribeShareGroupOffsetsResponse {
        groups,
        ..Default::default()
    }
}

fn describe(broker: &Broker, gate: &Gate<'_>, request: &RequestGroup) -> Group {
    let id = &request.group_id;
    let error = |code: ErrorCode, message: String| Group {
        group_id: id.clone(),
        error_code: code.code(),
        error_message: Some(message),
        ..Default::default()
    };
    if let Some((code, message)) = group_refusal(broker, id, gate.allowed(Acl::GROUP_DESCRIBE, id))
    {
        return error(code, message);
    }
    let topics = broker.metadata.read(|s| match &request.topics {
        None => all_partitions(s, gate, id),
        Some(topics) => topics
            .iter()
            .map(|t| {
                let allowed = gate.allowed(Acl::TOPIC_DESCRIBE, &t.topic_name);
                let topic = s.topic(&t.topic_name);
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| match topic {
                        _ if !allowed => Partition {
                            partition_index: *p,
                            start_offset: -1,
                            error_code: ErrorCode::TopicAuthorizationFailed.code(),
                            error_message: Some("Topic authorization failed.".into()),
                            ..Default::default()
                        },
                        Some(topic) => partition(s, id, topic.id, *p),
                        None => absent(*p),
                    })
                    .collect();
                Topic {
                    topic_name: t.topic_name.clone(),
                    topic_id: topic.filter(|_| allowed).map(|t| t.id).unwrap_or_default(),
                    partitions,
                    ..Default::default()
                }
            })
            .collect(),
    });
    Group {
        group_id: id.clone(),
        topics,
        ..Default::default()
    }
}

/// Every partition the group has state for, by topic, leaving out topics the client may not
/// describe.
fn all_partitions(s: &MetadataState, gate: &Gate<'_>, group: &str) -> Vec<Topic> {
    let mut by_topic: BTreeMap<String, Topic> = BTreeMap::new();
    for ((_, topic_id, p), _) in s.share().of_group(group) {
        let Some(topic) = s.topic_by_id(topic_id) else {
            continue;
        };
        if !gate.allowed(Acl::TOPIC_DESCRIBE, &topic.name) {
            continue;
        }
        by_topic
            .entry(topic.name.clone())
            .or_insert_with(|| Topic {
                topic_name: topic.name.clone(),
                topic_id: topic.id,
                ..Default::default()
            })
            .partitions
            .push(partition(s, group, topic.id, *p));
    }
    by_topic.into_values().collect()
}

/// A partition the group has no state for: Kafka's absence of data.
fn absent(partition: i32) -> Partition {
    Partition {
        partition_index: partition,
        start_offset: -1,
        lag: -1,
        ..Default::default()
    }
}

/// Where the group's reading of a partition starts, and how many records from there on it
/// has still to finish: those up to the high watermark, less those done with already.
fn partition(s: &MetadataState, group: &str, topic_id: uuid::Uuid, partition: i32) -> Partition {
    let tp = TopicPartition {
        topic_id,
        partition,
    };
    let (Some(share), Some(log)) = (s.share().get(group, &topic_id, partition), s.partition(&tp))
    else {
        return absent(partition);
    };
    let lag = log.high_watermark.0 - share.start - share.done_in_window();
    Partition {
        partition_index: partition,
        start_offset: share.start,
        leader_epoch: LEADER_EPOCH,
        lag: lag.max(0),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::alter_share_group_offsets_request::{
        AlterShareGroupOffsetsRequestPartition, AlterShareGroupOffsetsRequestTopic,
    };
    use crate::protocol::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
    use crate::protocol::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestTopic;
    use crate::protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use crate::protocol::messages::share_acknowledge_request::{
        AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch,
    };
    use crate::protocol::messages::share_fetch_request::{FetchPartition, FetchTopic};
    use crate::protocol::messages::{
        AlterShareGroupOffsetsRequest, DeleteShareGroupOffsetsRequest, ProduceRequest,
        ShareAcknowledgeRequest, ShareFetchRequest, ShareGroupDescribeRequest,
    };
    use crate::protocol::record_batch::build_test_batch;
    use crate::server::handlers::alter_share_group_offsets::AlterShareGroupOffsets;
    use crate::server::handlers::delete_share_group_offsets::DeleteShareGroupOffsets;
    use crate::server::handlers::produce::Produce;
    use crate::server::handlers::share_acknowledge::ShareAcknowledge;
    use crate::server::handlers::share_fetch::ShareFetch;
    use crate::server::handlers::share_group_describe::ShareGroupDescribe;
    use crate::server::handlers::testing::TestNode;

    const GROUP: &str = "queue";

    fn fetch(topic: uuid::Uuid, member: &str, epoch: i32) -> ShareFetchRequest {
        ShareFetchRequest {
            group_id: Some(GROUP.into()),
            member_id: Some(member.into()),
            share_session_epoch: epoch,
            max_wait_ms: 0,
            min_bytes: 1,
            max_bytes: 1 << 20,
            max_records: 500,
            batch_size: 500,
            topics: vec![FetchTopic {
                topic_id: topic,
                partitions: vec![FetchPartition::default()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn accept(
        topic: uuid::Uuid,
        member: &str,
        epoch: i32,
        first: i64,
        last: i64,
    ) -> ShareAcknowledgeRequest {
        ShareAcknowledgeRequest {
            group_id: Some(GROUP.into()),
            member_id: Some(member.into()),
            share_session_epoch: epoch,
            topics: vec![AcknowledgeTopic {
                topic_id: topic,
                partitions: vec![AcknowledgePartition {
                    acknowledgement_batches: vec![AcknowledgementBatch {
                        first_offset: first,
                        last_offset: last,
                        acknowledge_types: vec![1],
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn describe(topics: Option<Vec<i32>>) -> DescribeShareGroupOffsetsRequest {
        DescribeShareGroupOffsetsRequest {
            groups: vec![RequestGroup {
                group_id: GROUP.into(),
                topics: topics.map(|partitions| {
                    vec![DescribeShareGroupOffsetsRequestTopic {
                        topic_name: "work".into(),
                        partitions,
                        ..Default::default()
                    }]
                }),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// (partition, start offset, lag, error) of the one group's partitions.
    fn starts(response: &DescribeShareGroupOffsetsResponse) -> Vec<(i32, i64, i64, i16)> {
        let group = &response.groups[0];
        assert_eq!(group.error_code, 0, "{response:?}");
        group
            .topics
            .iter()
            .flat_map(|t| &t.partitions)
            .map(|p| (p.partition_index, p.start_offset, p.lag, p.error_code))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_share_groups_offsets_are_described_altered_and_deleted() {
        let node = TestNode::start().await;
        let topic = node.create_topic("work", 2).await;
        // Not a group yet.
        let described = node
            .call::<ShareGroupDescribe>(
                &ShareGroupDescribeRequest {
                    group_ids: vec![GROUP.into()],
                    ..Default::default()
                },
                1,
            )
            .await;
        assert_eq!(
            described.groups[0].error_code,
            ErrorCode::GroupIdNotFound.code()
        );
        // The group starts at the end of partition 0; ten records follow.
        node.call::<ShareFetch>(&fetch(topic, "a", 0), 1).await;
        let produce = ProduceRequest {
            acks: -1,
            timeout_ms: 10_000,
            topic_data: vec![TopicProduceData {
                name: "work".into(),
                partition_data: vec![PartitionProduceData {
                    index: 0,
                    records: Some(build_test_batch(-1, -1, -1, 10, 10).into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        node.call::<Produce>(&produce, 9).await;
        node.call::<ShareFetch>(&fetch(topic, "a", 1), 1).await;
        assert_eq!(
            starts(
                &node
                    .call::<DescribeShareGroupOffsets>(&describe(None), 1)
                    .await
            ),
            vec![(0, 0, 10, 0)]
        );
        // Accepting 0-4 moves the start; the lag is what is left.
        let acked = node
            .call::<ShareAcknowledge>(&accept(topic, "a", 2, 0, 4), 1)
            .await;
        assert_eq!(acked.responses[0].partitions[0].error_code, 0);
        let asked = describe(Some(vec![0, 1]));
        assert_eq!(
            starts(&node.call::<DescribeShareGroupOffsets>(&asked, 1).await),
            vec![(0, 5, 5, 0), (1, -1, -1, 0)]
        );
        // The group is Empty (no member heartbeats) and keeps its records' state.
        let described = node
            .call::<ShareGroupDescribe>(
                &ShareGroupDescribeRequest {
                    group_ids: vec![GROUP.into()],
                    ..Default::default()
                },
                1,
            )
            .await;
        let group = &described.groups[0];
        assert_eq!((group.error_code, group.group_state.as_str()), (0, "Empty"));
        assert_eq!(group.assignor_name, "simple");

        // Altered to 8: what "a" held is forgotten, the next member starts at 8.
        let alter = AlterShareGroupOffsetsRequest {
            group_id: GROUP.into(),
            topics: vec![AlterShareGroupOffsetsRequestTopic {
                topic_name: "work".into(),
                partitions: vec![
                    AlterShareGroupOffsetsRequestPartition {
                        partition_index: 0,
                        start_offset: 8,
                        ..Default::default()
                    },
                    AlterShareGroupOffsetsRequestPartition {
                        partition_index: 7,
                        start_offset: 0,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let altered = node.call::<AlterShareGroupOffsets>(&alter, 0).await;
        assert_eq!(altered.error_code, 0, "{altered:?}");
        let codes: Vec<i16> = altered.responses[0]
            .partitions
            .iter()
            .map(|p| p.error_code)
            .collect();
        assert_eq!(codes, vec![0, ErrorCode::UnknownTopicOrPartition.code()]);
        assert_eq!(
            starts(
                &node
                    .call::<DescribeShareGroupOffsets>(&describe(None), 1)
                    .await
            ),
            vec![(0, 8, 2, 0)]
        );
        let got = node.call::<ShareFetch>(&fetch(topic, "b", 0), 1).await;
        let acquired: Vec<(i64, i64, i16)> = got.responses[0].partitions[0]
            .acquired_records
            .iter()
            .map(|a| (a.first_offset, a.last_offset, a.delivery_count))
            .collect();
        assert_eq!(acquired, vec![(8, 9, 1)], "{got:?}");

        // Deleted: nothing left to describe, and nothing to delete again.
        let delete = DeleteShareGroupOffsetsRequest {
            group_id: GROUP.into(),
            topics: vec![DeleteShareGroupOffsetsRequestTopic {
                topic_name: "work".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let deleted = node.call::<DeleteShareGroupOffsets>(&delete, 0).await;
        assert_eq!(deleted.error_code, 0, "{deleted:?}");
        assert_eq!(deleted.responses[0].error_code, 0);
        assert_eq!(deleted.responses[0].topic_id, topic);
        assert!(
            starts(
                &node
                    .call::<DescribeShareGroupOffsets>(&describe(None), 1)
                    .await
            )
            .is_empty()
        );
        let again = node.call::<DeleteShareGroupOffsets>(&delete, 0).await;
        assert_eq!(
            again.error_code,
            ErrorCode::GroupIdNotFound.code(),
            "{again:?}"
        );
        node.stop().await;
    }
}
