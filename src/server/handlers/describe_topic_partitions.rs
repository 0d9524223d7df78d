//! DescribeTopicPartitions (key 75, KIP-966): Metadata's partition view, paged. Topics come
//! in name order (all of them when none is named), at most `response_partition_limit`
//! partitions per response, and a cursor names where the next response starts.

use crate::placement;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_topic_partitions_request::TopicRequest;
use crate::protocol::messages::describe_topic_partitions_response::{
    Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use crate::protocol::messages::{DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::operations;
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::{Broker, LEADER_EPOCH};

/// Kafka's `max.request.partition.size.limit` default: no response holds more partitions.
const PARTITIONS_PER_RESPONSE_MAX: usize = 2000;

pub struct DescribeTopicPartitions;

impl Api for DescribeTopicPartitions {
    type Request = DescribeTopicPartitionsRequest;
    type Response = DescribeTopicPartitionsResponse;
    const KEY: ApiKey = ApiKey::DescribeTopicPartitions;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_DESCRIBE]);

    fn coordinator(_: &DescribeTopicPartitionsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeTopicPartitionsRequest,
        version: i16,
    ) -> Authorized<DescribeTopicPartitionsResponse> {
        if request.topics.is_empty() {
            // All topics: only those the client may describe, quietly (Kafka filters them
            // before paging, so neither a page nor its cursor names a hidden one).
            let describable: Vec<String> = gate
                .topic_names()
                .into_iter()
                .filter(|name| gate.allowed_quietly(Acl::TOPIC_DESCRIBE, name))
                .collect();
            if describable.is_empty() {
                return Authorized::Answer(DescribeTopicPartitionsResponse::default());
            }
            request.topics = describable
                .into_iter()
                .map(|name| TopicRequest {
                    name,
                    ..Default::default()
                })
                .collect();
            return Authorized::run();
        }
        let names = request.topics.iter().map(|t| t.name.as_str());
        let error = ErrorCode::TopicAuthorizationFailed;
        all_or_refuse(gate, Acl::TOPIC_DESCRIBE, names, request, version, error)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeTopicPartitionsRequest,
    ) -> Reply<DescribeTopicPartitionsResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.client.id))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeTopicPartitionsRequest,
    client_id: Option<&str>,
) -> DescribeTopicPartitionsResponse {
    let shown = broker.shown_brokers();
    let zone = placement::client_zone(client_id);
    let limit = usize::try_from(request.response_partition_limit)
        .unwrap_or(0)
        .clamp(1, PARTITIONS_PER_RESPONSE_MAX);
    let (start_topic, start_partition) = request.cursor.as_ref().map_or((String::new(), 0), |c| {
        (c.topic_name.clone(), c.partition_index.max(0))
    });
    broker.metadata.read(|state| {
        let mut names: Vec<String> = if request.topics.is_empty() {
            state.topics().map(|t| t.name.clone()).collect()
        } else {
            request.topics.iter().map(|t| t.name.clone()).collect()
        };
        names.sort();
        names.dedup();
        let mut response = DescribeTopicPartitionsResponse::default();
        let mut room = limit;
        for name in names.into_iter().filter(|n| *n >= start_topic) {
            let Some(topic) = state.topic(&name) else {
                response.topics.push(DescribeTopicPartitionsResponseTopic {
                    name: Some(name),
                    error_code: ErrorCode::UnknownTopicOrPartition.code(),
                    ..Default::default()
                });
                continue;
            };
            let count = topic.partitions.len() as i32;
            let first = if name == start_topic {
                start_partition.min(count)
            } else {
                0
            };
            if room == 0 {
                response.next_cursor = Some(Cursor {
                    topic_name: name,
                    partition_index: first,
                    ..Default::default()
                });
                break;
            }
            let last = first.saturating_add(room as i32).min(count);
            let partitions = (first..last)
                .map(|index| {
                    let leader = broker.partition_leader(&shown, zone, &topic.id, index);
                    DescribeTopicPartitionsResponsePartition {
                        partition_index: index,
                        leader_id: leader,
                        leader_epoch: LEADER_EPOCH,
                        replica_nodes: vec![leader],
                        isr_nodes: vec![leader],
                        // Empty, not null: Kafka's Admin client reads both lists.
                        eligible_leader_replicas: Some(Vec::new()),
                        last_known_elr: Some(Vec::new()),
                        ..Default::default()
                    }
                })
                .collect::<Vec<_>>();
            room -= partitions.len();
            response.topics.push(DescribeTopicPartitionsResponseTopic {
                name: Some(name.clone()),
                topic_id: topic.id,
                partitions,
                topic_authorized_operations: operations::TOPIC,
                ..Default::default()
            });
            if last < count {
                response.next_cursor = Some(Cursor {
                    topic_name: name,
                    partition_index: last,
                    ..Default::default()
                });
                break;
            }
        }
        response
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::describe_topic_partitions_request;
    use crate::server::handlers::testing::TestNode;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pages_through_every_partition_with_lists_never_null() {
        let node = TestNode::start().await;
        node.create_topic("a", 3).await;
        node.create_topic("b", 2).await;
        // Two partitions a page: a0 a1 | a2 b0 | b1.
        let mut request = DescribeTopicPartitionsRequest {
            response_partition_limit: 2,
            ..Default::default()
        };
        let mut seen = Vec::new();
        loop {
            let answer = node.call::<DescribeTopicPartitions>(&request, 0).await;
            for topic in &answer.topics {
                assert_eq!(topic.error_code, 0, "{topic:?}");
                for p in &topic.partitions {
                    assert_eq!(p.eligible_leader_replicas.as_deref(), Some(&[][..]));
                    assert_eq!(p.last_known_elr.as_deref(), Some(&[][..]));
                    assert_eq!(p.replica_nodes, [p.leader_id]);
                    seen.push((topic.name.clone().unwrap_or_default(), p.partition_index));
                }
            }
            match answer.next_cursor {
                Some(next) => {
                    request.cursor = Some(describe_topic_partitions_request::Cursor {
                        topic_name: next.topic_name,
                        partition_index: next.partition_index,
                        ..Default::default()
                    })
                }
                None => break,
            }
        }
        let expected: Vec<(String, i32)> = [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)]
            .map(|(name, p)| (name.to_string(), p))
            .to_vec();
        assert_eq!(seen, expected);
        node.stop().await;
    }
}
