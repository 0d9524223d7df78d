//! InitProducerId (key 22): idempotent producer ids and epochs, issued by metadata; with a
//! transactional id, the id's producer and its next epoch (fencing older instances and
//! aborting what they left open, see `metadata::state::txn_commands`).

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state::InitProducerIdError;
use crate::protocol::ErrorCode;
use crate::protocol::messages::InitProducerIdRequest;
use crate::protocol::messages::InitProducerIdResponse;
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, txn_refused};

pub async fn handle(
    broker: &Broker,
    request: InitProducerIdRequest,
    version: i16,
) -> InitProducerIdResponse {
    let mut response = InitProducerIdResponse {
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    if (request.producer_id == -1) != (request.producer_epoch == -1) {
        // KIP-360: an id and an epoch together, or neither.
        response.error_code = ErrorCode::InvalidRequest.code();
        return response;
    }
    let existing = (request.producer_id >= 0).then_some((
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    ));
    if let Some(transactional_id) = request.transactional_id {
        let timeout_ms = i64::from(request.transaction_timeout_ms);
        return transactional(broker, transactional_id, timeout_ms, existing, version).await;
    }
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

/// A transactional producer's id: its timeout checked against the broker's maximum first
/// (INVALID_TRANSACTION_TIMEOUT), as Kafka does before touching the transaction.
async fn transactional(
    broker: &Broker,
    transactional_id: String,
    timeout_ms: i64,
    existing: Option<(ProducerId, ProducerEpoch)>,
    version: i16,
) -> InitProducerIdResponse {
    let mut response = InitProducerIdResponse {
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    if timeout_ms <= 0 || timeout_ms > broker.config.transaction_max_timeout_ms {
        response.error_code = ErrorCode::InvalidTransactionTimeout.code();
        return response;
    }
    match broker
        .metadata
        .init_transactional_producer(transactional_id, timeout_ms, existing)
        .await
    {
        Ok(Ok((id, epoch))) => {
            response.producer_id = id.0;
            response.producer_epoch = epoch.0;
        }
        // PRODUCER_FENCED exists for InitProducerId from v4 (KIP-588).
        Ok(Err(e)) => response.error_code = txn_refused(e, version < 4).code(),
        Err(e) => response.error_code = failed_write(&e, Role::Coordinator).code(),
    }
    response
}
