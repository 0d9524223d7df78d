//! ConsumerGroupHeartbeat (key 68): the whole KIP-848 protocol in one request — join, stay,
//! acknowledge revocations, receive the server-side assignment, leave (see `groups::consumer`).

use crate::groups::consumer::partitions_of;
use crate::groups::limits;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ConsumerGroupHeartbeatRequest;
use crate::protocol::messages::ConsumerGroupHeartbeatResponse;
use crate::protocol::messages::consumer_group_heartbeat_response::{Assignment, TopicPartitions};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;

pub struct ConsumerGroupHeartbeat;

impl Api for ConsumerGroupHeartbeat {
    type Request = ConsumerGroupHeartbeatRequest;
    type Response = ConsumerGroupHeartbeatResponse;
    const KEY: ApiKey = ApiKey::ConsumerGroupHeartbeat;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ]);

    fn coordinator(request: &ConsumerGroupHeartbeatRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut ConsumerGroupHeartbeatRequest,
        version: i16,
    ) -> Authorized<ConsumerGroupHeartbeatResponse> {
        let allowed = gate.allowed(Acl::GROUP_READ, &request.group_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: ConsumerGroupHeartbeatRequest,
    ) -> Reply<ConsumerGroupHeartbeatResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version, ctx.client))
    }
}

pub fn handle(
    broker: &Broker,
    mut request: ConsumerGroupHeartbeatRequest,
    version: i16,
    client: Client<'_>,
) -> ConsumerGroupHeartbeatResponse {
    if version == 0 && request.member_epoch == 0 && request.member_id.is_empty() {
        // Version 0 lets the coordinator choose a joining member's id; from v1 the client does.
        request.member_id = broker.rng.uuid().to_string();
    }
    let refuse = |code: ErrorCode, message: String| ConsumerGroupHeartbeatResponse {
        error_code: code.code(),
        error_message: Some(message),
        member_epoch: request.member_epoch,
        ..Default::default()
    };
    let names = [
        request.member_id.as_str(),
        request.instance_id.as_deref().unwrap_or_default(),
        request.rack_id.as_deref().unwrap_or_default(),
        request
            .subscribed_topic_regex
            .as_deref()
            .unwrap_or_default(),
        request.server_assignor.as_deref().unwrap_or_default(),
    ];
    if let Some(code) =
        // Kafka answers an empty group id here with INVALID_REQUEST ("GroupId can't be empty").
        limits::group_id_refusal(&request.group_id)
            .map(|_| ErrorCode::InvalidRequest)
            .or_else(|| limits::names_refusal(names))
    {
        return refuse(
            code,
            format!(
                "group ids are 1 to {} bytes, and so are member and instance ids, racks, \
                 subscription patterns and assignor names",
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
    // A copy of the topics, so the assignor does not run under the metadata lock.
    let topics = broker.metadata.read(|state| broker.groups.topics.of(state));
    let reply = broker.groups.consumer_heartbeat(
        &request,
        client.id.unwrap_or_default(),
        client.host,
        &*topics,
    );
    tracing::debug!(
        group = request.group_id,
        member = request.member_id,
        epoch = request.member_epoch,
        owned = ?request.topic_partitions.as_deref().map(partitions_of),
        reply = ?reply.as_ref().map(|r| (r.member_epoch, &r.assignment)).map_err(|e| e.code),
        "ConsumerGroupHeartbeat"
    );
    match reply {
        Err(e) => refuse(e.code, e.message),
        Ok(reply) => ConsumerGroupHeartbeatResponse {
            member_id: Some(reply.member_id),
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
