//! Heartbeat (key 12): keeps a member's session; tells it when to rejoin.

use crate::protocol::ErrorCode;
use crate::protocol::messages::HeartbeatRequest;
use crate::protocol::messages::HeartbeatResponse;
use crate::server::broker::Broker;

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
