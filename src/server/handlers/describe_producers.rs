//! DescribeProducers (key 61): the idempotent producers with recent batches on a partition,
//! with the first offset of each one's open transaction there (-1 when none is open).

use crate::ids::TopicPartition;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use crate::protocol::messages::{DescribeProducersRequest, DescribeProducersResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::Broker;

pub struct DescribeProducers;

impl Api for DescribeProducers {
    type Request = DescribeProducersRequest;
    type Response = DescribeProducersResponse;
    const KEY: ApiKey = ApiKey::DescribeProducers;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_READ]);

    fn coordinator(_: &DescribeProducersRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeProducersRequest,
        version: i16,
    ) -> Authorized<DescribeProducersResponse> {
        let names = request.topics.iter().map(|t| t.name.as_str());
        let error = ErrorCode::TopicAuthorizationFailed;
        all_or_refuse(gate, Acl::TOPIC_READ, names, request, version, error)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeProducersRequest,
    ) -> Reply<DescribeProducersResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(broker: &Broker, request: DescribeProducersRequest) -> DescribeProducersResponse {
    let topics = broker.metadata.read(|state| {
        // Each asked partition that exists, then one scan of the producers for all of them.
        let asked: Vec<Vec<Option<TopicPartition>>> = request
            .topics
            .iter()
            .map(|topic| {
                let found = state.topic(&topic.name);
                topic
                    .partition_indexes
                    .iter()
                    .map(|&index| {
                        let t = found
                            .filter(|t| index >= 0 && (index as usize) < t.partitions.len())?;
                        Some(TopicPartition {
                            topic_id: t.id,
                            partition: index,
                        })
                    })
                    .collect()
            })
            .collect();
        let known: Vec<TopicPartition> = asked.iter().flatten().flatten().copied().collect();
        let mut active = state.active_producers(&known);
        request
            .topics
            .iter()
            .zip(asked)
            .map(|(topic, partitions)| TopicResponse {
                name: topic.name.clone(),
                partitions: topic
                    .partition_indexes
                    .iter()
                    .zip(partitions)
                    .map(|(&index, tp)| match tp {
                        None => PartitionResponse {
                            partition_index: index,
                            error_code: ErrorCode::UnknownTopicOrPartition.code(),
                            ..Default::default()
                        },
                        Some(tp) => PartitionResponse {
                            partition_index: index,
                            active_producers: active
                                .get_mut(&tp)
                                .map(std::mem::take)
                                .unwrap_or_default()
                                .into_iter()
                                .map(|p| ProducerState {
                                    producer_id: p.id.0,
                                    producer_epoch: i32::from(p.epoch.0),
                                    last_sequence: p.last_sequence,
                                    last_timestamp: p.last_active_ms,
                                    coordinator_epoch: -1,
                                    current_txn_start_offset: state
                                        .transactions()
                                        .open_at(&tp, p.id)
                                        .map_or(-1, |o| o.0),
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        },
                    })
                    .collect(),
                ..Default::default()
            })
            .collect()
    });
    DescribeProducersResponse {
        topics,
        ..Default::default()
    }
}
