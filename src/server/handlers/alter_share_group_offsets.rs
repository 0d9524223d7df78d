//! AlterShareGroupOffsets (key 91): starts an empty share group's reading of partitions again
//! at given offsets, forgetting what it held of them (KIP-932). Version 0.
//!
//! As Kafka's `handleAlterShareGroupOffsetsRequest`: READ on the group, else the request is
//! refused; READ on each topic, else that topic's partitions are; a topic or partition that
//! does not exist is UNKNOWN_TOPIC_OR_PARTITION. The group must not be of another kind
//! (GROUP_ID_NOT_FOUND) or have members (NON_EMPTY_GROUP); a group that does not exist yet is
//! made, as Kafka 4.2 makes it, so offsets can be set before the first consumer starts.

use super::share::{group_settings, offsets_alterable};
use crate::ids::TopicPartition;
use crate::metadata::state::{SetShareStarts, ShareStartError};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::AlterShareGroupOffsetsRequest;
use crate::protocol::messages::AlterShareGroupOffsetsResponse;
use crate::protocol::messages::alter_share_group_offsets_response::{
    AlterShareGroupOffsetsResponsePartition as PartitionResult,
    AlterShareGroupOffsetsResponseTopic as TopicResult,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

pub struct AlterShareGroupOffsets;

impl Api for AlterShareGroupOffsets {
    type Request = AlterShareGroupOffsetsRequest;
    type Response = AlterShareGroupOffsetsResponse;
    const KEY: ApiKey = ApiKey::AlterShareGroupOffsets;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ, Acl::TOPIC_READ]);

    fn coordinator(request: &AlterShareGroupOffsetsRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut AlterShareGroupOffsetsRequest,
        version: i16,
    ) -> Authorized<AlterShareGroupOffsetsResponse> {
        Authorized::run_or_refuse(
            gate.allowed(Acl::GROUP_READ, &request.group_id),
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: AlterShareGroupOffsetsRequest,
    ) -> Reply<AlterShareGroupOffsetsResponse> {
        let gate = Gate::new(ctx.broker, &ctx.client, Self::NEEDS);
        Reply::Now(handle(ctx.broker, request, &gate).await)
    }
}

fn refuse(code: ErrorCode, message: String) -> AlterShareGroupOffsetsResponse {
    AlterShareGroupOffsetsResponse {
        error_code: code.code(),
        error_message: Some(message),
        ..Default::default()
    }
}

fn partition_result(partition: i32, code: ErrorCode, message: Option<&str>) -> PartitionResult {
    PartitionResult {
        partition_index: partition,
        error_code: code.code(),
        error_message: message.map(str::to_string),
        ..Default::default()
    }
}

pub async fn handle(
    broker: &Broker,
    request: AlterShareGroupOffsetsRequest,
    gate: &Gate<'_>,
) -> AlterShareGroupOffsetsResponse {
    let group = &request.group_id;
    if let Err((code, message)) = offsets_alterable(broker, group) {
        return refuse(code, message);
    }
    let mut responses = Vec::with_capacity(request.topics.len());
    // Where each partition to set lands in the answer: (topic's index, partition's index).
    let mut slots = Vec::new();
    let mut starts = Vec::new();
    for t in &request.topics {
        let name = &t.topic_name;
        let topic = broker
            .metadata
            .read(|s| s.topic(name).map(|t| (t.id, t.partitions.len())));
        let allowed = !gate.enforced() || gate.allowed(Acl::TOPIC_READ, name);
        let mut result = TopicResult {
            topic_name: name.clone(),
            topic_id: topic.filter(|_| allowed).map(|t| t.0).unwrap_or_default(),
            ..Default::default()
        };
        for p in &t.partitions {
            let index = p.partition_index;
            let refused = match topic {
                _ if !allowed => Some((
                    ErrorCode::TopicAuthorizationFailed,
                    "Topic authorization failed.",
                )),
                Some((_, count)) if index >= 0 && (index as usize) < count => None,
                _ => Some((
                    ErrorCode::UnknownTopicOrPartition,
                    "This server does not host this topic-partition.",
                )),
            };
            match (refused, topic) {
                (None, Some((topic_id, _))) => {
                    slots.push((responses.len(), result.partitions.len()));
                    starts.push((
                        TopicPartition {
                            topic_id,
                            partition: index,
                        },
                        p.start_offset,
                    ));
                    result
                        .partitions
                        .push(partition_result(index, ErrorCode::None, None));
                }
                (refused, _) => {
                    let (code, message) =
                        refused.unwrap_or((ErrorCode::UnknownTopicOrPartition, ""));
                    result
                        .partitions
                        .push(partition_result(index, code, Some(message)));
                }
            }
        }
        responses.push(result);
    }
    if !starts.is_empty() {
        let (_, rules) = group_settings(broker, group);
        let command = SetShareStarts {
            group: group.clone(),
            starts,
            rules,
        };
        match broker.metadata.write(command).await {
            Ok(results) => {
                for ((topic, partition), result) in slots.into_iter().zip(results) {
                    let (code, message) = match result {
                        Ok(()) => continue,
                        Err(ShareStartError::UnknownPartition) => (
                            ErrorCode::UnknownTopicOrPartition,
                            "This server does not host this topic-partition.",
                        ),
                        // A bound of floe's (`SHARE_PARTITIONS_MAX`), not of Kafka's.
                        Err(ShareStartError::Full) => (
                            ErrorCode::PolicyViolation,
                            "the cluster holds as many share-partitions as it may",
                        ),
                    };
                    let slot = &mut responses[topic].partitions[partition];
                    slot.error_code = code.code();
                    slot.error_message = Some(message.into());
                }
            }
            Err(e) => {
                let code = failed_write(&e, Role::Coordinator);
                return refuse(
                    code,
                    format!("the group's offsets were not altered: {code:?}"),
                );
            }
        }
    }
    AlterShareGroupOffsetsResponse {
        responses,
        ..Default::default()
    }
}
