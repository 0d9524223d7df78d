//! ShareAcknowledge (key 79): a share consumer's acknowledgements without a read (KIP-932),
//! answered at once; with epoch -1 it closes the member's share session and gives back the
//! records it still holds. Version 1.

use super::share::{
    Acks, MEMBER_ID_BYTES_MAX, ack_error_code, ack_partitions, add_acks, apply_round,
    authorize_group, group_settings, release_member,
};
use crate::ids::TopicPartition;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ShareAcknowledgeRequest;
use crate::protocol::messages::ShareAcknowledgeResponse;
use crate::protocol::messages::share_acknowledge_response::{
    LeaderIdAndEpoch, PartitionData, ShareAcknowledgeTopicResponse,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::share_sessions::Context;
use std::collections::BTreeMap;

pub struct ShareAcknowledge;

impl Api for ShareAcknowledge {
    type Request = ShareAcknowledgeRequest;
    type Response = ShareAcknowledgeResponse;
    const KEY: ApiKey = ApiKey::ShareAcknowledge;
    const VERSIONS: (i16, i16) = (1, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ, Acl::TOPIC_READ]);

    fn coordinator(_: &ShareAcknowledgeRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut ShareAcknowledgeRequest,
        version: i16,
    ) -> Authorized<ShareAcknowledgeResponse> {
        authorize_group(gate, request.group_id.as_deref(), request, version)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: ShareAcknowledgeRequest,
    ) -> Reply<ShareAcknowledgeResponse> {
        let gate = Gate::new(ctx.broker, &ctx.client, Self::NEEDS);
        Reply::Now(handle(ctx.broker, request, ctx.client.lane, &gate).await)
    }
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> ShareAcknowledgeResponse {
    ShareAcknowledgeResponse {
        error_code: code.code(),
        error_message: Some(message.into()),
        ..Default::default()
    }
}

pub async fn handle(
    broker: &Broker,
    request: ShareAcknowledgeRequest,
    lane: u16,
    gate: &Gate<'_>,
) -> ShareAcknowledgeResponse {
    let group = request.group_id.clone().unwrap_or_default();
    let member = request.member_id.clone().unwrap_or_default();
    if member.is_empty() || member.len() > MEMBER_ID_BYTES_MAX {
        return refuse(ErrorCode::InvalidRequest, "Invalid member id");
    }
    let context = match broker
        .share_sessions
        .acknowledge((&group, &member, lane), request.share_session_epoch)
    {
        Ok(context) => context,
        Err(code) => return refuse(code, format!("share session of member {member}: {code:?}")),
    };
    let mut acks: Acks = BTreeMap::new();
    let mut refused: BTreeMap<TopicPartition, ErrorCode> = BTreeMap::new();
    for topic in &request.topics {
        let name = broker
            .metadata
            .read(|s| s.topic_by_id(&topic.topic_id).map(|t| t.name.clone()));
        for p in &topic.partitions {
            let tp = TopicPartition {
                topic_id: topic.topic_id,
                partition: p.partition_index,
            };
            match &name {
                None => {
                    refused.insert(tp, ErrorCode::UnknownTopicId);
                    continue;
                }
                Some(name) if gate.enforced() && !gate.allowed(Acl::TOPIC_READ, name) => {
                    refused.insert(tp, ErrorCode::TopicAuthorizationFailed);
                    continue;
                }
                Some(_) => {}
            }
            let batches = p.acknowledgement_batches.iter();
            add_acks(
                &mut acks,
                tp,
                batches.map(|b| (b.first_offset, b.last_offset, &b.acknowledge_types[..])),
            );
        }
    }
    let mut answers: BTreeMap<TopicPartition, (ErrorCode, Option<String>)> = BTreeMap::new();
    for (tp, code) in refused {
        answers.insert(tp, (code, None));
    }
    let mut valid = BTreeMap::new();
    for (tp, ack) in acks {
        match ack {
            Ok(batches) if batches.is_empty() => {
                answers.insert(tp, (ErrorCode::None, None));
            }
            Ok(batches) => {
                valid.insert(tp, batches);
            }
            Err(e) => {
                let (code, message) = ack_error_code(e);
                answers.insert(tp, (code, Some(message)));
            }
        }
    }
    let keys: Vec<TopicPartition> = valid.keys().copied().collect();
    if !keys.is_empty() {
        let (config, rules) = group_settings(broker, &group);
        match apply_round(
            broker,
            &group,
            &member,
            ack_partitions(valid),
            0,
            &config,
            rules,
        )
        .await
        {
            Ok(results) => {
                for (tp, result) in keys.iter().zip(results) {
                    let answer = match result.acked {
                        Some(Err(e)) => {
                            let (code, message) = ack_error_code(e);
                            (code, Some(message))
                        }
                        _ if result.unknown => (ErrorCode::UnknownTopicOrPartition, None),
                        _ => (ErrorCode::None, None),
                    };
                    answers.insert(*tp, answer);
                }
            }
            Err(()) => {
                for tp in &keys {
                    answers.insert(*tp, (ErrorCode::CoordinatorNotAvailable, None));
                }
            }
        }
    }
    if let Context::Final(partitions) = context {
        release_member(broker, &group, &member, partitions).await;
    }
    let mut responses: Vec<ShareAcknowledgeTopicResponse> = Vec::new();
    for (tp, (code, message)) in answers {
        let data = PartitionData {
            partition_index: tp.partition,
            error_code: code.code(),
            error_message: message.filter(|_| code != ErrorCode::None),
            current_leader: LeaderIdAndEpoch {
                leader_id: -1,
                leader_epoch: -1,
                ..Default::default()
            },
            ..Default::default()
        };
        match responses.last_mut() {
            Some(t) if t.topic_id == tp.topic_id => t.partitions.push(data),
            _ => responses.push(ShareAcknowledgeTopicResponse {
                topic_id: tp.topic_id,
                partitions: vec![data],
                ..Default::default()
            }),
        }
    }
    ShareAcknowledgeResponse {
        responses,
        ..Default::default()
    }
}
