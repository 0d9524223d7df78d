//! FindCoordinator (key 10): every agent coordinates every group (offsets live in metadata).

use crate::protocol::ErrorCode;
use crate::protocol::messages::FindCoordinatorRequest;
use crate::protocol::messages::FindCoordinatorResponse;
use crate::protocol::messages::find_coordinator_response::Coordinator;
use crate::server::broker::Broker;

pub fn handle(broker: &Broker, request: FindCoordinatorRequest) -> FindCoordinatorResponse {
    let (host, port) = broker.advertised();
    // Transaction coordinators (key type 1) do not exist: transactions are not implemented.
    let error = if request.key_type == 0 {
        ErrorCode::None
    } else {
        ErrorCode::CoordinatorNotAvailable
    };
    FindCoordinatorResponse {
        error_code: error.code(),
        node_id: broker.shown_id(),
        host: host.clone(),
        port,
        coordinators: request
            .coordinator_keys
            .iter()
            .map(|key| Coordinator {
                key: key.clone(),
                node_id: broker.shown_id(),
                host: host.clone(),
                port,
                error_code: error.code(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
