//! ListOffsets (key 2): earliest (-2), latest (-1), max timestamp (-3), or by timestamp.

use crate::fetch::planner::{offset_for_timestamp, offset_of_max_timestamp};
use crate::metadata::state::PartitionState;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ListOffsetsRequest;
use crate::protocol::messages::ListOffsetsResponse;
use crate::protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use crate::server::broker::{Broker, LEADER_EPOCH};

const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;

pub fn handle(broker: &Broker, request: ListOffsetsRequest, version: i16) -> ListOffsetsResponse {
    // Versions before 4 cannot carry a leader epoch.
    let leader_epoch = if version >= 4 { LEADER_EPOCH } else { -1 };
    // Copies of the partitions asked for, taken under the metadata lock (cheap: a partition's
    // index is a persistent vector the copy shares); the scans by timestamp run after it is
    // released, so they never delay a commit.
    let partitions: Vec<Vec<Option<PartitionState>>> = broker.metadata.read(|state| {
        request
            .topics
            .iter()
            .map(|topic| {
                let found = state.topic(&topic.name);
                topic
                    .partitions
                    .iter()
                    .map(|p| {
                        let index = usize::try_from(p.partition_index).ok()?;
                        found?.partitions.get(index).cloned()
                    })
                    .collect()
            })
            .collect()
    });
    let topics = request
        .topics
        .iter()
        .zip(partitions)
        .map(|(topic, copies)| ListOffsetsTopicResponse {
            name: topic.name.clone(),
            partitions: topic
                .partitions
                .iter()
                .zip(copies)
                .map(|(p, partition)| {
                    let mut out = ListOffsetsPartitionResponse {
                        partition_index: p.partition_index,
                        timestamp: -1,
                        offset: -1,
                        leader_epoch,
                        ..Default::default()
                    };
                    match partition {
                        None => out.error_code = ErrorCode::UnknownTopicOrPartition.code(),
                        Some(part) => {
                            let (offset, timestamp) = match p.timestamp {
                                LATEST => (part.high_watermark, -1),
                                EARLIEST => (part.log_start_offset, -1),
                                MAX_TIMESTAMP => offset_of_max_timestamp(&part),
                                ts => offset_for_timestamp(&part, ts),
                            };
                            (out.offset, out.timestamp) = (offset.0, timestamp);
                        }
                    }
                    out
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    ListOffsetsResponse {
        topics,
        ..Default::default()
    }
}
