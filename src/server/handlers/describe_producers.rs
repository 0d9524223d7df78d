//! DescribeProducers (key 61): the idempotent producers with recent batches on a partition,
//! with the first offset of each one's open transaction there (-1 when none is open).

use crate::ids::TopicPartition;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use crate::protocol::messages::{DescribeProducersRequest, DescribeProducersResponse};
use crate::server::broker::Broker;

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
