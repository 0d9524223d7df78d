//! Heartbeat (key 12): keeps a member's session; tells it when to rejoin.

use crate::protocol::ErrorCode;
use crate::protocol::messages::HeartbeatRequest;
use crate::protocol::messages::HeartbeatResponse;
use crate::server::broker::Broker;

pub fn handle(broker: &Broker, request: HeartbeatRequest) -> HeartbeatResponse {
    let code = if broker.coordinates(&request.group_id) {
        broker
            .groups
            .heartbeat(&request.group_id, &request.member_id, request.generation_id)
    } else {
        ErrorCode::NotCoordinator
    };
    HeartbeatResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
