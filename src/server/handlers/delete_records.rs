//! DeleteRecords (key 21): moves partitions' log start offsets forward (Kafka's
//! `kafka-delete-records`, AdminClient.deleteRecords). Records below the new start are gone
//! for readers at once; the index entries that hold only such records are dropped and their
//! objects collected once nothing else refers to them.
//!
//! As in Kafka: offset -1 means the high watermark, an offset beyond it is
//! OFFSET_OUT_OF_RANGE, an offset below the current start changes nothing; the answer is the
//! partition's low watermark (its log start) after the request.

use crate::ids::TopicPartition;
use crate::metadata::state;
use crate::metadata::state::DeleteRecordsError;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use crate::protocol::messages::{DeleteRecordsRequest, DeleteRecordsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

pub struct DeleteRecords;

impl Api for DeleteRecords {
    type Request = DeleteRecordsRequest;
    type Response = DeleteRecordsResponse;
    const KEY: ApiKey = ApiKey::DeleteRecords;
    const VERSIONS: (i16, i16) = (0, 2);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_DELETE]);

    fn coordinator(_: &DeleteRecordsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DeleteRecordsRequest,
        version: i16,
    ) -> Authorized<DeleteRecordsResponse> {
        let names = request.topics.iter().map(|t| t.name.as_str());
        let error = ErrorCode::TopicAuthorizationFailed;
        all_or_refuse(gate, Acl::TOPIC_DELETE, names, request, version, error)
    }

    async fn handle(ctx: Ctx<'_>, request: DeleteRecordsRequest) -> Reply<DeleteRecordsResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(broker: &Broker, request: DeleteRecordsRequest) -> DeleteRecordsResponse {
    // Each asked partition that exists, with its place in the answer.
    let mut asked = Vec::new();
    let mut topics: Vec<DeleteRecordsTopicResult> = broker.metadata.read(|s| {
        request
            .topics
            .iter()
            .enumerate()
            .map(|(ti, topic)| {
                let found = s.topic(&topic.name);
                let partitions = topic
                    .partitions
                    .iter()
                    .enumerate()
                    .map(|(pi, p)| {
                        let exists = found.filter(|t| {
                            usize::try_from(p.partition_index).is_ok_and(|i| i < t.partitions.len())
                        });
                        let mut result = DeleteRecordsPartitionResult {
                            partition_index: p.partition_index,
                            low_watermark: -1,
                            error_code: ErrorCode::UnknownTopicOrPartition.code(),
                            ..Default::default()
                        };
                        if let Some(t) = exists {
                            result.error_code = ErrorCode::None.code();
                            let tp = TopicPartition {
                                topic_id: t.id,
                                partition: p.partition_index,
                            };
                            asked.push(((ti, pi), (tp, p.offset)));
                        }
                        result
                    })
                    .collect();
                DeleteRecordsTopicResult {
                    name: topic.name.clone(),
                    partitions,
                    ..Default::default()
                }
            })
            .collect()
    });
    if asked.is_empty() {
        return DeleteRecordsResponse {
            topics,
            ..Default::default()
        };
    }
    let (places, partitions): (Vec<_>, Vec<_>) = asked.into_iter().unzip();
    let outcomes = broker
        .metadata
        .write(state::DeleteRecords { partitions })
        .await;
    for (i, (ti, pi)) in places.into_iter().enumerate() {
        let result = &mut topics[ti].partitions[pi];
        match &outcomes {
            Err(e) => result.error_code = failed_write(e, Role::Partition).code(),
            Ok(outcomes) => match outcomes.get(i) {
                Some(Ok(start)) => result.low_watermark = start.0,
                Some(Err(DeleteRecordsError::OffsetOutOfRange)) => {
                    result.error_code = ErrorCode::OffsetOutOfRange.code()
                }
                Some(Err(DeleteRecordsError::UnknownTopicOrPartition)) | None => {
                    result.error_code = ErrorCode::UnknownTopicOrPartition.code()
                }
            },
        }
    }
    DeleteRecordsResponse {
        topics,
        ..Default::default()
    }
}
