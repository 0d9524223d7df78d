//! OffsetFetch (key 9): committed positions of one group (versions 1–7: one group a request).

use crate::protocol::messages::OffsetFetchRequest;
use crate::protocol::messages::OffsetFetchResponse;
use crate::protocol::messages::offset_fetch_response::{
    OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use crate::server::broker::Broker;

pub fn handle(broker: &Broker, request: OffsetFetchRequest) -> OffsetFetchResponse {
    let group = &request.group_id;
    let topics = broker.metadata.read(|state| match &request.topics {
        Some(topics) => topics
            .iter()
            .map(|t| OffsetFetchResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partition_indexes
                    .iter()
                    .map(|&p| {
                        let committed = state.group_offset(group, &t.name, p);
                        OffsetFetchResponsePartition {
                            partition_index: p,
                            committed_offset: committed.map_or(-1, |c| c.offset),
                            committed_leader_epoch: committed.map_or(-1, |c| c.leader_epoch),
                            metadata: Some(
                                committed
                                    .and_then(|c| c.metadata.clone())
                                    .unwrap_or_default(),
                            ),
                            error_code: 0,
                            ..Default::default()
                        }
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        None => {
            let mut out: Vec<OffsetFetchResponseTopic> = Vec::new();
            for ((topic, partition), committed) in state.group_offsets(group) {
                let entry = OffsetFetchResponsePartition {
                    partition_index: *partition,
                    committed_offset: committed.offset,
                    committed_leader_epoch: committed.leader_epoch,
                    metadata: Some(committed.metadata.clone().unwrap_or_default()),
                    ..Default::default()
                };
                match out.iter_mut().find(|t| &t.name == topic) {
                    Some(t) => t.partitions.push(entry),
                    None => out.push(OffsetFetchResponseTopic {
                        name: topic.clone(),
                        partitions: vec![entry],
                        ..Default::default()
                    }),
                }
            }
            out
        }
    });
    OffsetFetchResponse {
        topics,
        ..Default::default()
    }
}
