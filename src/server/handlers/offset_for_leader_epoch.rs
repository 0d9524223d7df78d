//! OffsetForLeaderEpoch (key 23): where a leader epoch ends, which consumers ask to detect
//! log truncation (KIP-320). A floe partition has one leader epoch for its whole life (any
//! agent serves it; nothing is ever truncated), so that epoch ends at the high watermark.
//!
//! The client compares that end with its position and resets when it is lower, so it comes
//! from a copy caught up with the quorum (`fresh_copy`); when the agent cannot catch up it
//! answers OFFSET_NOT_AVAILABLE, which clients retry.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use crate::protocol::messages::{OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::server::fresh_copy::{LocalCopy, catch_up};

pub struct OffsetForLeaderEpoch;

impl Api for OffsetForLeaderEpoch {
    type Request = OffsetForLeaderEpochRequest;
    type Response = OffsetForLeaderEpochResponse;
    const KEY: ApiKey = ApiKey::OffsetForLeaderEpoch;
    const VERSIONS: (i16, i16) = (2, 4);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_DESCRIBE]);

    fn coordinator(_: &OffsetForLeaderEpochRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut OffsetForLeaderEpochRequest,
        version: i16,
    ) -> Authorized<OffsetForLeaderEpochResponse> {
        let names = request.topics.iter().map(|t| t.topic.as_str());
        let error = ErrorCode::TopicAuthorizationFailed;
        all_or_refuse(gate, Acl::TOPIC_DESCRIBE, names, request, version, error)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: OffsetForLeaderEpochRequest,
    ) -> Reply<OffsetForLeaderEpochResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: OffsetForLeaderEpochRequest,
) -> OffsetForLeaderEpochResponse {
    let copy = catch_up(broker).await;
    let topics = broker.metadata.read(|state| {
        request
            .topics
            .iter()
            .map(|topic| OffsetForLeaderTopicResult {
                topic: topic.topic.clone(),
                partitions: topic
                    .partitions
                    .iter()
                    .map(|p| {
                        let mut out = EpochEndOffset {
                            partition: p.partition,
                            leader_epoch: -1,
                            end_offset: -1,
                            ..Default::default()
                        };
                        let high_watermark = state.high_watermark(&topic.topic, p.partition);
                        match high_watermark {
                            None => out.error_code = ErrorCode::UnknownTopicOrPartition.code(),
                            Some(_) if copy == LocalCopy::MayLag => {
                                out.error_code = ErrorCode::OffsetNotAvailable.code()
                            }
                            // The client's view of the current epoch is checked first (fencing;
                            // the epoch is the first there is, so none is older).
                            Some(_) if p.current_leader_epoch > LEADER_EPOCH => {
                                out.error_code = ErrorCode::UnknownLeaderEpoch.code()
                            }
                            // An epoch after the current one has no end yet; an undefined
                            // one (-1) has none either.
                            Some(_) if p.leader_epoch > LEADER_EPOCH || p.leader_epoch < 0 => {}
                            Some(end) => {
                                out.leader_epoch = LEADER_EPOCH;
                                out.end_offset = end.0;
                            }
                        }
                        out
                    })
                    .collect(),
                ..Default::default()
            })
            .collect()
    });
    OffsetForLeaderEpochResponse {
        topics,
        ..Default::default()
    }
}
