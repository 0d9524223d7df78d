//! InitProducerId (key 22): idempotent producer ids and epochs, issued by metadata; with a
//! transactional id, the id's producer and its next epoch (fencing older instances and
//! aborting what they left open, see `metadata::state::commands::transaction`).

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state;
use crate::metadata::state::InitProducerIdError;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::InitProducerIdRequest;
use crate::protocol::messages::InitProducerIdResponse;
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, txn_refused};

pub struct InitProducerId;

impl Api for InitProducerId {
    type Request = InitProducerIdRequest;
    type Response = InitProducerIdResponse;
    const KEY: ApiKey = ApiKey::InitProducerId;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[
        Acl::TXN_WRITE,
        Acl::CLUSTER_IDEMPOTENT_WRITE,
        Acl::TOPIC_WRITE,
    ]);

    fn coordinator(_: &InitProducerIdRequest) -> Option<&str> {
        None
    }

    /// Without a transactional id: Cluster IDEMPOTENT_WRITE or WRITE on some topic (KIP-679).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut InitProducerIdRequest,
        version: i16,
    ) -> Authorized<InitProducerIdResponse> {
        let (allowed, error) = match request.transactional_id.as_deref() {
            Some(id) => (
                gate.allowed(Acl::TXN_WRITE, id),
                ErrorCode::TransactionalIdAuthorizationFailed,
            ),
            None => (
                gate.on_cluster(Operation::IdempotentWrite) || gate.any_topic_writable(),
                ErrorCode::ClusterAuthorizationFailed,
            ),
        };
        Authorized::run_or_refuse(allowed, request, version, error)
    }

    async fn handle(ctx: Ctx<'_>, request: InitProducerIdRequest) -> Reply<InitProducerIdResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: InitProducerIdRequest,
    version: i16,
) -> InitProducerIdResponse {
    let issued = issue(broker, request, version).await;
    let (producer_id, producer_epoch) = issued.map_or((-1, -1), |(id, epoch)| (id.0, epoch.0));
    InitProducerIdResponse {
        error_code: issued.err().unwrap_or(ErrorCode::None).code(),
        producer_id,
        producer_epoch,
        ..Default::default()
    }
}

/// The producer id and epoch the request gets, or the code it is refused with.
async fn issue(
    broker: &Broker,
    request: InitProducerIdRequest,
    version: i16,
) -> Result<(ProducerId, ProducerEpoch), ErrorCode> {
    if (request.producer_id == -1) != (request.producer_epoch == -1) {
        // KIP-360: an id and an epoch together, or neither.
        return Err(ErrorCode::InvalidRequest);
    }
    let existing = (request.producer_id >= 0).then_some((
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    ));
    if let Some(transactional_id) = request.transactional_id {
        // The timeout is checked against the broker's maximum first, as Kafka does before
        // touching the transaction.
        let timeout_ms = i64::from(request.transaction_timeout_ms);
        if timeout_ms <= 0 || timeout_ms > broker.config.transaction_max_timeout_ms {
            return Err(ErrorCode::InvalidTransactionTimeout);
        }
        return match broker
            .metadata
            .write(state::InitTransactionalProducer {
                transactional_id,
                timeout_ms,
                existing,
            })
            .await
        {
            Ok(Ok(issued)) => Ok(issued),
            // PRODUCER_FENCED exists for InitProducerId from v4 (KIP-588).
            Ok(Err(e)) => Err(txn_refused(e, version < 4)),
            Err(e) => Err(failed_write(&e, Role::Coordinator)),
        };
    }
    match broker
        .metadata
        .write(state::InitProducerId { existing })
        .await
    {
        Ok(Ok(issued)) => Ok(issued),
        Ok(Err(InitProducerIdError::InvalidProducerEpoch)) => Err(ErrorCode::InvalidProducerEpoch),
        Ok(Err(InitProducerIdError::TooManyProducers)) => {
            // Retriable: an idle producer id expires and frees a place.
            tracing::warn!(
                max = crate::metadata::state::PRODUCERS_MAX,
                "InitProducerId refused: the cluster holds its maximum of producer ids"
            );
            Err(ErrorCode::CoordinatorNotAvailable)
        }
        Err(e) => Err(failed_write(&e, Role::Coordinator)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::handlers::testing::TestNode;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_idempotent_producer_gets_a_new_id_each_time_and_a_transactional_one_is_bumped() {
        let node = TestNode::start().await;
        let idempotent = InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: -1,
            ..Default::default()
        };
        let first = node.call::<InitProducerId>(&idempotent, 4).await;
        let second = node.call::<InitProducerId>(&idempotent, 4).await;
        assert_eq!(
            (first.error_code, first.producer_epoch),
            (0, 0),
            "{first:?}"
        );
        assert!(first.producer_id >= 0);
        assert_ne!(first.producer_id, second.producer_id);

        let transactional = InitProducerIdRequest {
            transactional_id: Some("tx".into()),
            transaction_timeout_ms: 60_000,
            ..Default::default()
        };
        let once = node.call::<InitProducerId>(&transactional, 4).await;
        let again = node.call::<InitProducerId>(&transactional, 4).await;
        assert_eq!(once.error_code, 0, "{once:?}");
        // The same id, its epoch bumped: the first producer is fenced.
        assert_eq!(again.producer_id, once.producer_id);
        assert_eq!(again.producer_epoch, once.producer_epoch + 1);
        node.stop().await;
    }
}
