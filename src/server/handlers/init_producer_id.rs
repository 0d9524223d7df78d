//! InitProducerId (key 22): idempotent producer ids and epochs, issued by metadata.

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state::InitProducerIdError;
use crate::protocol::ErrorCode;
use crate::protocol::messages::InitProducerIdRequest;
use crate::protocol::messages::InitProducerIdResponse;
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

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
    let existing = (request.producer_id >= 0).then_some((
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    ));
    match broker.metadata.init_producer_id(existing).await {
        Ok(Ok((id, epoch))) => {
            response.producer_id = id.0;
            response.producer_epoch = epoch.0;
        }
        Ok(Err(InitProducerIdError::InvalidProducerEpoch)) => {
            response.error_code = ErrorCode::InvalidProducerEpoch.code();
        }
        Ok(Err(InitProducerIdError::TooManyProducers)) => {
            // Retriable: an idle producer id expires and frees a place.
            tracing::warn!(
                max = crate::metadata::state::PRODUCERS_MAX,
                "InitProducerId refused: the cluster holds its maximum of producer ids"
            );
            response.error_code = ErrorCode::CoordinatorNotAvailable.code();
        }
        Err(e) => response.error_code = failed_write(&e, Role::Coordinator).code(),
    }
    response
}
