//! JoinGroup (key 11): joins the member to the group's next generation; waits for the
//! rebalance (see `groups::classic`).

use crate::groups::classic::JoinRequest;
use crate::groups::limits;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::JoinGroupRequest;
use crate::protocol::messages::JoinGroupResponse;
use crate::protocol::messages::join_group_response::JoinGroupResponseMember;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;

pub struct JoinGroup;

impl Api for JoinGroup {
    type Request = JoinGroupRequest;
    type Response = JoinGroupResponse;
    const KEY: ApiKey = ApiKey::JoinGroup;
    const VERSIONS: (i16, i16) = (0, 9);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ]);

    fn coordinator(request: &JoinGroupRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut JoinGroupRequest,
        version: i16,
    ) -> Authorized<JoinGroupResponse> {
        let allowed = gate.allowed(Acl::GROUP_READ, &request.group_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(ctx: Ctx<'_>, request: JoinGroupRequest) -> Reply<JoinGroupResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version, ctx.client).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: JoinGroupRequest,
    version: i16,
    client: Client<'_>,
) -> JoinGroupResponse {
    let refuse = |code: ErrorCode| JoinGroupResponse {
        error_code: code.code(),
        generation_id: -1,
        member_id: request.member_id.clone(),
        // "", as Kafka's coordinator answers (null is only its authorization refusal's).
        protocol_name: Some(String::new()),
        ..Default::default()
    };
    let names = [
        request.member_id.as_str(),
        request.group_instance_id.as_deref().unwrap_or_default(),
        client.id.unwrap_or_default(),
        request.protocol_type.as_str(),
    ];
    if let Some(code) = limits::group_id_refusal(&request.group_id)
        .or_else(|| limits::names_refusal(names))
        .or_else(|| limits::names_refusal(request.protocols.iter().map(|p| p.name.as_str())))
        .or_else(|| limits::metadata_refusal(request.protocols.iter().map(|p| &p.metadata)))
    {
        return refuse(code);
    }
    if !broker.coordinates(&request.group_id) {
        return refuse(ErrorCode::NotCoordinator);
    }
    let join = JoinRequest {
        member_id: request.member_id.clone(),
        instance_id: request.group_instance_id.clone(),
        client_id: client.id.unwrap_or_default().to_string(),
        client_host: client.host.to_string(),
        session_timeout_ms: i64::from(request.session_timeout_ms),
        // v0 has no rebalance timeout: Kafka uses the session timeout.
        rebalance_timeout_ms: i64::from(if version == 0 {
            request.session_timeout_ms
        } else {
            request.rebalance_timeout_ms
        }),
        protocol_type: request.protocol_type.clone(),
        protocols: request
            .protocols
            .iter()
            .map(|p| (p.name.clone(), p.metadata.clone()))
            .collect(),
        require_known_member_id: version >= 4,
    };
    let result = broker.groups.join(&request.group_id, join).await;
    JoinGroupResponse {
        error_code: result.error.code(),
        generation_id: result.generation,
        protocol_type: result.protocol_type,
        // An answer without a protocol (MEMBER_ID_REQUIRED, say) names "", as Kafka's
        // coordinator does (null is only its authorization refusal's, from v7).
        protocol_name: result.protocol_name.or_else(|| Some(String::new())),
        leader: result.leader,
        member_id: result.member_id,
        members: result
            .members
            .into_iter()
            .map(
                |(member_id, group_instance_id, metadata)| JoinGroupResponseMember {
                    member_id,
                    group_instance_id,
                    metadata,
                    ..Default::default()
                },
            )
            .collect(),
        ..Default::default()
    }
}
