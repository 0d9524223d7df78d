//! Heartbeat (key 12): keeps a member's session; tells it when to rejoin.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::HeartbeatRequest;
use crate::protocol::messages::HeartbeatResponse;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

pub struct Heartbeat;

impl Api for Heartbeat {
    type Request = HeartbeatRequest;
    type Response = HeartbeatResponse;
    const KEY: ApiKey = ApiKey::Heartbeat;
    const VERSIONS: (i16, i16) = (0, 4);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ]);

    fn coordinator(request: &HeartbeatRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut HeartbeatRequest,
        version: i16,
    ) -> Authorized<HeartbeatResponse> {
        let allowed = gate.allowed(Acl::GROUP_READ, &request.group_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(ctx: Ctx<'_>, request: HeartbeatRequest) -> Reply<HeartbeatResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(broker: &Broker, request: HeartbeatRequest) -> HeartbeatResponse {
    let instance = request.group_instance_id.as_deref();
    let code = if !broker.coordinates(&request.group_id) {
        ErrorCode::NotCoordinator
    } else if broker
        .groups
        .is_fenced(&request.group_id, &request.member_id, instance)
    {
        ErrorCode::FencedInstanceId
    } else {
        broker
            .groups
            .heartbeat(&request.group_id, &request.member_id, request.generation_id)
    };
    HeartbeatResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
