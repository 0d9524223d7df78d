//! DeleteGroups (key 42): forgets groups' committed offsets, once no member is left.

use crate::protocol::ErrorCode;
use crate::protocol::messages::DeleteGroupsRequest;
use crate::protocol::messages::DeleteGroupsResponse;
use crate::protocol::messages::delete_groups_response::DeletableGroupResult;
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

pub async fn handle(broker: &Broker, request: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let mut results = Vec::new();
    for group in request.groups_names {
        let code = if !broker.coordinates(&group) {
            ErrorCode::NotCoordinator
        } else if broker.groups.has_members(&group) {
            ErrorCode::NonEmptyGroup
        } else {
            broker.groups.forget_emptied(&group);
            match broker
                .metadata
                .delete_group_offsets(group.clone(), None)
                .await
            {
                Ok(true) => ErrorCode::None,
                Ok(false) => ErrorCode::GroupIdNotFound,
                Err(e) => failed_write(&e, Role::Coordinator),
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
