//! DeleteGroups (key 42): forgets groups' committed offsets, once no member is left.

use crate::metadata::{Command, Outcome};
use crate::protocol::ErrorCode;
use crate::protocol::messages::DeleteGroupsRequest;
use crate::protocol::messages::DeleteGroupsResponse;
use crate::protocol::messages::delete_groups_response::DeletableGroupResult;
use crate::server::broker::Broker;

pub async fn handle(broker: &Broker, request: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let mut results = Vec::new();
    for group in request.groups_names {
        let code = if !broker.coordinates(&group) {
            ErrorCode::NotCoordinator
        } else if broker.groups.has_members(&group) {
            ErrorCode::NonEmptyGroup
        } else {
            match broker
                .metadata
                .apply_one(Command::DeleteGroupOffsets {
                    group: group.clone(),
                    partitions: None,
                })
                .await
            {
                Ok(Outcome::GroupOffsetsDeleted(true)) => ErrorCode::None,
                Ok(_) => ErrorCode::GroupIdNotFound,
                Err(e) => {
                    tracing::error!(error = %e, "group deletion failed");
                    ErrorCode::CoordinatorNotAvailable
                }
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
