//! ShareGroupHeartbeat (key 76): join, stay in and leave a share group (KIP-932), and receive
//! the partitions to read (`groups::share`). Version 1, the first stable one (Kafka 4.1).

use crate::groups::group_config::ShareGroupConfig;
use crate::groups::limits;
use crate::groups::share::{ShareGroupSettings, ShareHeartbeat};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ShareGroupHeartbeatRequest;
use crate::protocol::messages::ShareGroupHeartbeatResponse;
use crate::protocol::messages::share_group_heartbeat_response::{Assignment, TopicPartitions};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;

pub struct ShareGroupHeartbeat;

impl Api for ShareGroupHeartbeat {
    type Request = ShareGroupHeartbeatRequest;
    type Response = ShareGroupHeartbeatResponse;
    const KEY: ApiKey = ApiKey::ShareGroupHeartbeat;
    const VERSIONS: (i16, i16) = (1, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ, Acl::TOPIC_DESCRIBE]);

    fn coordinator(request: &ShareGroupHeartbeatRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    /// READ on the group; DESCRIBE on every subscribed topic, else TOPIC_AUTHORIZATION_FAILED
    /// for the whole request, as Kafka answers.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut ShareGroupHeartbeatRequest,
        version: i16,
    ) -> Authorized<ShareGroupHeartbeatResponse> {
        if !gate.allowed(Acl::GROUP_READ, &request.group_id) {
            return Authorized::run_or_refuse(
                false,
                request,
                version,
                ErrorCode::GroupAuthorizationFailed,
            );
        }
        let topics_allowed = request
            .subscribed_topic_names
            .iter()
            .flatten()
            .all(|t| gate.allowed(Acl::TOPIC_DESCRIBE, t));
        Authorized::run_or_refuse(
            topics_allowed,
            request,
            version,
            ErrorCode::TopicAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: ShareGroupHeartbeatRequest,
    ) -> Reply<ShareGroupHeartbeatResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.client))
    }
}

pub fn handle(
    broker: &Broker,
    request: ShareGroupHeartbeatRequest,
    client: Client<'_>,
) -> ShareGroupHeartbeatResponse {
    let refuse = |code: ErrorCode, message: String| ShareGroupHeartbeatResponse {
        error_code: code.code(),
        error_message: Some(message),
        member_epoch: request.member_epoch,
        ..Default::default()
    };
    if request.group_id.is_empty() {
        return refuse(ErrorCode::InvalidRequest, "GroupId can't be empty.".into());
    }
    let names = [
        request.member_id.as_str(),
        request.rack_id.as_deref().unwrap_or_default(),
    ];
    let too_long = request
        .subscribed_topic_names
        .iter()
        .flatten()
        .any(|t| t.len() > limits::ID_BYTES_MAX);
    if let Some(code) = limits::group_id_refusal(&request.group_id)
        .map(|_| ErrorCode::InvalidRequest)
        .or_else(|| limits::names_refusal(names))
        .or(too_long.then_some(ErrorCode::InvalidRequest))
    {
        return refuse(
            code,
            format!(
                "group ids, member ids, racks and topic names are at most {} bytes",
                limits::ID_BYTES_MAX
            ),
        );
    }
    if !broker.coordinates(&request.group_id) {
        return refuse(
            ErrorCode::NotCoordinator,
            format!("this agent does not coordinate group {}", request.group_id),
        );
    }
    let topics = broker.metadata.read(|state| broker.groups.topics.of(state));
    let heartbeat = ShareHeartbeat {
        member_id: &request.member_id,
        member_epoch: request.member_epoch,
        rack_id: request.rack_id.as_deref(),
        subscribed_topic_names: request.subscribed_topic_names.as_deref(),
        client_id: client.id.unwrap_or_default(),
        client_host: client.host,
    };
    // The group's own session timeout and heartbeat interval, over the broker's.
    let config = broker
        .metadata
        .read(|s| ShareGroupConfig::of(s.group_configs(&request.group_id), &broker.config.share));
    let settings = ShareGroupSettings {
        heartbeat_interval_ms: config.heartbeat_interval_ms.clamp(0, i64::from(i32::MAX)) as i32,
        session_timeout_ms: config.session_timeout_ms,
        max_size: broker.config.share.max_size,
    };
    let reply = broker
        .groups
        .share_heartbeat(&request.group_id, &heartbeat, &*topics, &settings);
    tracing::debug!(
        group = request.group_id,
        member = request.member_id,
        epoch = request.member_epoch,
        reply = ?reply.as_ref().map(|r| (r.member_epoch, &r.assignment)).map_err(|e| e.code),
        "ShareGroupHeartbeat"
    );
    match reply {
        Err(e) => refuse(e.code, e.message),
        Ok(reply) => ShareGroupHeartbeatResponse {
            member_id: Some(request.member_id.clone()),
            member_epoch: reply.member_epoch,
            heartbeat_interval_ms: reply.heartbeat_interval_ms,
            assignment: reply.assignment.map(|partitions| Assignment {
                topic_partitions: partitions
                    .into_iter()
                    .map(|(topic_id, partitions)| TopicPartitions {
                        topic_id,
                        partitions: partitions.into_iter().collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}
