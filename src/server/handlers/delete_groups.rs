//! DeleteGroups (key 42): forgets groups' committed offsets, once no member is left.

use crate::metadata::state::{DeleteGroupOffsets, ForgetShareState};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::DeleteGroupsRequest;
use crate::protocol::messages::DeleteGroupsResponse;
use crate::protocol::messages::delete_groups_response::DeletableGroupResult;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

pub struct DeleteGroups;

impl Api for DeleteGroups {
    type Request = DeleteGroupsRequest;
    type Response = DeleteGroupsResponse;
    const KEY: ApiKey = ApiKey::DeleteGroups;
    const VERSIONS: (i16, i16) = (0, 2);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DELETE]);

    fn coordinator(request: &DeleteGroupsRequest) -> Option<&str> {
        request.groups_names.first().map(String::as_str)
    }

    /// A group the client may not delete is answered with GROUP_AUTHORIZATION_FAILED.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut DeleteGroupsRequest,
        version: i16,
    ) -> Authorized<DeleteGroupsResponse> {
        let refused = DeleteGroupsRequest {
            groups_names: take_refused(&mut request.groups_names, |g| {
                gate.allowed(Acl::GROUP_DELETE, g)
            }),
            ..Default::default()
        };
        Authorized::restoring_items(refused, version, ErrorCode::GroupAuthorizationFailed)
    }

    async fn handle(ctx: Ctx<'_>, request: DeleteGroupsRequest) -> Reply<DeleteGroupsResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(broker: &Broker, request: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let mut results = Vec::new();
    for group in request.groups_names {
        let code = if !broker.coordinates(&group) {
            ErrorCode::NotCoordinator
        } else if broker.groups.has_members(&group) {
            ErrorCode::NonEmptyGroup
        } else {
            broker.groups.forget_emptied(&group);
            let offsets = broker
                .metadata
                .write(DeleteGroupOffsets {
                    group: group.clone(),
                    partitions: None,
                })
                .await;
            // A share group's records go with it.
            let shared = broker
                .metadata
                .write(ForgetShareState {
                    group: group.clone(),
                    topics: None,
                })
                .await;
            match (offsets, shared) {
                (Ok(had_offsets), Ok(share_partitions)) => {
                    if had_offsets || share_partitions > 0 {
                        ErrorCode::None
                    } else {
                        ErrorCode::GroupIdNotFound
                    }
                }
                (Err(e), _) | (_, Err(e)) => failed_write(&e, Role::Coordinator),
            }
        };
        results.push(DeletableGroupResult {
            group_id: group,
            error_code: code.code(),
            ..Default::default()
        });
    }
    DeleteGroupsResponse {
        results,
        ..Default::default()
    }
}
