//! LeaveGroup (key 13): removes members (v3+: a batch, by member or instance id).

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::LeaveGroupRequest;
use crate::protocol::messages::LeaveGroupResponse;
use crate::protocol::messages::leave_group_response::MemberResponse;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

pub struct LeaveGroup;

impl Api for LeaveGroup {
    type Request = LeaveGroupRequest;
    type Response = LeaveGroupResponse;
    const KEY: ApiKey = ApiKey::LeaveGroup;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ]);

    fn coordinator(request: &LeaveGroupRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut LeaveGroupRequest,
        version: i16,
    ) -> Authorized<LeaveGroupResponse> {
        let allowed = gate.allowed(Acl::GROUP_READ, &request.group_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(ctx: Ctx<'_>, request: LeaveGroupRequest) -> Reply<LeaveGroupResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version))
    }
}

pub fn handle(broker: &Broker, request: LeaveGroupRequest, version: i16) -> LeaveGroupResponse {
    if !broker.coordinates(&request.group_id) {
        return LeaveGroupResponse {
            error_code: ErrorCode::NotCoordinator.code(),
            ..Default::default()
        };
    }
    let leaving: Vec<(String, Option<String>)> = if version >= 3 {
        request
            .members
            .iter()
            .map(|m| (m.member_id.clone(), m.group_instance_id.clone()))
            .collect()
    } else {
        vec![(request.member_id.clone(), None)]
    };
    let codes = broker.groups.leave(&request.group_id, &leaving);
    if version < 3 {
        return LeaveGroupResponse {
            error_code: codes.first().copied().unwrap_or(ErrorCode::None).code(),
            ..Default::default()
        };
    }
    LeaveGroupResponse {
        members: leaving
            .into_iter()
            .zip(codes)
            .map(|((member_id, group_instance_id), code)| MemberResponse {
                member_id,
                group_instance_id,
                error_code: code.code(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
