//! OffsetDelete (key 47): forgets some of a group's committed offsets. Refused while the
//! group has members (Kafka allows it for topics the members do not subscribe to; floe does
//! not read subscriptions, so it asks for an empty group).

use crate::metadata::{Command, Outcome};
use crate::protocol::ErrorCode;
use crate::protocol::messages::OffsetDeleteRequest;
use crate::protocol::messages::OffsetDeleteResponse;
use crate::protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use crate::server::broker::Broker;

pub async fn handle(broker: &Broker, request: OffsetDeleteRequest) -> OffsetDeleteResponse {
    let refuse = |code: ErrorCode| OffsetDeleteResponse {
        error_code: code.code(),
        ..Default::default()
    };
    if !broker.coordinates(&request.group_id) {
        return refuse(ErrorCode::NotCoordinator);
    }
    if broker
        .groups
        .describe(&request.group_id)
        .is_some_and(|g| !g.members.is_empty())
    {
        return refuse(ErrorCode::NonEmptyGroup);
    }
    let known = broker
        .metadata
        .read(|s| s.groups().any(|g| g == request.group_id));
    if !known {
        return refuse(ErrorCode::GroupIdNotFound);
    }
    let partitions: Vec<(String, i32)> = request
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.clone(), p.partition_index))
        })
        .collect();
    let code = match broker
        .metadata
        .apply_one(Command::DeleteGroupOffsets {
            group: request.group_id.clone(),
            partitions: Some(partitions),
        })
        .await
    {
        Ok(Outcome::GroupOffsetsDeleted(_)) => ErrorCode::None,
        Ok(_) => ErrorCode::UnknownServerError,
        Err(e) => {
            tracing::error!(error = %e, "offset deletion failed");
            return refuse(ErrorCode::CoordinatorNotAvailable);
        }
    };
    OffsetDeleteResponse {
        topics: request
            .topics
            .iter()
            .map(|t| OffsetDeleteResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| OffsetDeleteResponsePartition {
                        partition_index: p.partition_index,
                        error_code: code.code(),
                    })
                    .collect(),
            })
            .collect(),
        ..Default::default()
    }
}
