//! DeleteShareGroupOffsets (key 92): forgets an empty share group's state for some topics, so
//! its next read of them starts where `share.auto.offset.reset` says (KIP-932). Version 0.
//!
//! As Kafka's `handleDeleteShareGroupOffsetsRequest`: DELETE on the group, else the request
//! is refused; READ on each topic, else that topic is. The group must be a share group with no
//! members (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP otherwise, for the whole request); a topic it
//! has no state for is UNKNOWN_TOPIC_OR_PARTITION.

use super::share::offsets_alterable;
use crate::metadata::state::ForgetShareState;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::DeleteShareGroupOffsetsRequest;
use crate::protocol::messages::DeleteShareGroupOffsetsResponse;
use crate::protocol::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic as TopicResult;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

pub struct DeleteShareGroupOffsets;

impl Api for DeleteShareGroupOffsets {
    type Request = DeleteShareGroupOffsetsRequest;
    type Response = DeleteShareGroupOffsetsResponse;
    const KEY: ApiKey = ApiKey::DeleteShareGroupOffsets;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DELETE, Acl::TOPIC_READ]);

    fn coordinator(request: &DeleteShareGroupOffsetsRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DeleteShareGroupOffsetsRequest,
        version: i16,
    ) -> Authorized<DeleteShareGroupOffsetsResponse> {
        Authorized::run_or_refuse(
            gate.allowed(Acl::GROUP_DELETE, &request.group_id),
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DeleteShareGroupOffsetsRequest,
    ) -> Reply<DeleteShareGroupOffsetsResponse> {
        let gate = Gate::new(ctx.broker, &ctx.client, Self::NEEDS);
        Reply::Now(handle(ctx.broker, request, &gate).await)
    }
}

fn refuse(code: ErrorCode, message: String) -> DeleteShareGroupOffsetsResponse {
    DeleteShareGroupOffsetsResponse {
        error_code: code.code(),
        error_message: Some(message),
        ..Default::default()
    }
}

pub async fn handle(
    broker: &Broker,
    request: DeleteShareGroupOffsetsRequest,
    gate: &Gate<'_>,
) -> DeleteShareGroupOffsetsResponse {
    let group = &request.group_id;
    match offsets_alterable(broker, group) {
        Err((code, message)) => return refuse(code, message),
        Ok(false) => {
            return refuse(
                ErrorCode::GroupIdNotFound,
                format!("Group {group} not found."),
            );
        }
        Ok(true) => {}
    }
    let mut responses = Vec::with_capacity(request.topics.len());
    let mut forget = Vec::new();
    for t in &request.topics {
        let name = &t.topic_name;
        let (topic_id, has_state) = broker.metadata.read(|s| {
            let id = s.topic(name).map(|t| t.id);
            let has_state = id.is_some_and(|id| {
                s.share()
                    .of_group(group)
                    .any(|((_, topic, _), _)| *topic == id)
            });
            (id, has_state)
        });
        let result = |code: ErrorCode, message: Option<&str>| TopicResult {
            topic_name: name.clone(),
            topic_id: topic_id.unwrap_or_default(),
            error_code: code.code(),
            error_message: message.map(str::to_string),
            ..Default::default()
        };
        responses.push(if gate.enforced() && !gate.allowed(Acl::TOPIC_READ, name) {
            TopicResult {
                topic_id: uuid::Uuid::nil(),
                ..result(
                    ErrorCode::TopicAuthorizationFailed,
                    Some("Topic authorization failed."),
                )
            }
        } else if topic_id.is_none() {
            result(
                ErrorCode::UnknownTopicOrPartition,
                Some("This server does not host this topic-partition."),
            )
        } else if !has_state {
            result(
                ErrorCode::UnknownTopicOrPartition,
                Some("There is no offset information to delete."),
            )
        } else {
            forget.extend(topic_id);
            result(ErrorCode::None, None)
        });
    }
    if !forget.is_empty() {
        let command = ForgetShareState {
            group: group.clone(),
            topics: Some(forget),
        };
        if let Err(e) = broker.metadata.write(command).await {
            let code = failed_write(&e, Role::Coordinator);
            return refuse(code, format!("the group's state was not deleted: {code:?}"));
        }
    }
    DeleteShareGroupOffsetsResponse {
        responses,
        ..Default::default()
    }
}
