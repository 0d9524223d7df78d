//! InitProducerId (key 22): idempotent producer ids and epochs, issued by metadata.

use crate::metadata::state::InitProducerIdError;
use crate::metadata::{Command, Outcome};
use crate::protocol::ErrorCode;
use crate::protocol::messages::InitProducerIdRequest;
use crate::protocol::messages::InitProducerIdResponse;
use crate::server::broker::Broker;

pub async fn handle(broker: &Broker, request: InitProducerIdRequest) -> InitProducerIdResponse {
    let mut response = InitProducerIdResponse {
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    if request.transactional_id.is_some() {
        // Transactions are not implemented: say so instead of pretending.
        response.error_code = ErrorCode::TransactionalIdNotFound.code();
        return response;
    }
    let existing =
        (request.producer_id >= 0).then_some((request.producer_id, request.producer_epoch));
    match broker
        .metadata
        .apply_one(Command::InitProducerId { existing })
        .await
    {
        Ok(Outcome::ProducerId(Ok((id, epoch)))) => {
            response.producer_id = id;
            response.producer_epoch = epoch;
        }
        Ok(Outcome::ProducerId(Err(InitProducerIdError::InvalidProducerEpoch))) => {
            response.error_code = ErrorCode::InvalidProducerEpoch.code();
        }
        Ok(_) | Err(_) => response.error_code = ErrorCode::CoordinatorNotAvailable.code(),
    }
    response
}
