//! SyncGroup (key 14): the leader hands out assignments; followers wait for theirs.

use crate::groups::limits;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::SyncGroupRequest;
use crate::protocol::messages::SyncGroupResponse;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

pub struct SyncGroup;

impl Api for SyncGroup {
    type Request = SyncGroupRequest;
    type Response = SyncGroupResponse;
    const KEY: ApiKey = ApiKey::SyncGroup;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ]);

    fn coordinator(request: &SyncGroupRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut SyncGroupRequest,
        version: i16,
    ) -> Authorized<SyncGroupResponse> {
        let allowed = gate.allowed(Acl::GROUP_READ, &request.group_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(ctx: Ctx<'_>, request: SyncGroupRequest) -> Reply<SyncGroupResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(broker: &Broker, request: SyncGroupRequest) -> SyncGroupResponse {
    if !broker.coordinates(&request.group_id) {
        return SyncGroupResponse {
            error_code: ErrorCode::NotCoordinator.code(),
            ..Default::default()
        };
    }
    let refusal = limits::group_id_refusal(&request.group_id)
        .or_else(|| limits::names_refusal(request.assignments.iter().map(|a| a.member_id.as_str())))
        .or_else(|| {
            request
                .assignments
                .iter()
                .find_map(|a| limits::metadata_refusal([&a.assignment]))
        })
        .or_else(|| {
            (request.assignments.len() > limits::CLASSIC_MEMBERS_MAX)
                .then_some(ErrorCode::InvalidRequest)
        })
        .or_else(|| {
            let instance = request.group_instance_id.as_deref();
            broker
                .groups
                .is_fenced(&request.group_id, &request.member_id, instance)
                .then_some(ErrorCode::FencedInstanceId)
        });
    if let Some(code) = refusal {
        return SyncGroupResponse {
            error_code: code.code(),
            ..Default::default()
        };
    }
    let assignments = request
        .assignments
        .into_iter()
        .map(|a| (a.member_id, a.assignment))
        .collect();
    let result = broker
        .groups
        .sync(
            &request.group_id,
            &request.member_id,
            request.generation_id,
            assignments,
        )
        .await;
    SyncGroupResponse {
        error_code: result.error.code(),
        protocol_type: result.protocol_type,
        protocol_name: result.protocol_name,
        assignment: result.assignment,
        ..Default::default()
    }
}
