//! EndTxn (key 26): commits or aborts the producer's open transaction. One metadata write
//! writes every participating partition's marker and applies (or drops) the transaction's
//! offsets, so the answer comes once the transaction is complete everywhere. From v5
//! (transaction version 2, KIP-890 part 2) the end also moves the producer to its next
//! epoch, which the answer carries.

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::EndTxnRequest;
use crate::protocol::messages::EndTxnResponse;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, txn_refused};
use crate::telemetry::BrokerMetrics;

pub struct EndTxn;

impl Api for EndTxn {
    type Request = EndTxnRequest;
    type Response = EndTxnResponse;
    const KEY: ApiKey = ApiKey::EndTxn;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::TXN_WRITE]);

    fn coordinator(_: &EndTxnRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut EndTxnRequest,
        version: i16,
    ) -> Authorized<EndTxnResponse> {
        let allowed = gate.allowed(Acl::TXN_WRITE, &request.transactional_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::TransactionalIdAuthorizationFailed,
        )
    }

    async fn handle(ctx: Ctx<'_>, request: EndTxnRequest) -> Reply<EndTxnResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(broker: &Broker, request: EndTxnRequest, version: i16) -> EndTxnResponse {
    let producer = (
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    );
    let next_epoch = version >= 5;
    let mut response = EndTxnResponse {
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let code = match broker
        .metadata
        .write(state::EndTxn {
            transactional_id: request.transactional_id,
            producer_id: producer.0,
            producer_epoch: producer.1,
            commit: request.committed,
            next_epoch,
        })
        .await
    {
        Ok(Ok(end)) => {
            if next_epoch {
                response.producer_id = end.producer_id.0;
                response.producer_epoch = end.producer_epoch.0;
            }
            let counter = if request.committed {
                &broker.metrics.transactions_committed
            } else {
                &broker.metrics.transactions_aborted
            };
            BrokerMetrics::add(counter, 1);
            BrokerMetrics::add(&broker.metrics.transaction_markers, end.marked.len() as u64);
            ErrorCode::None
        }
        // PRODUCER_FENCED exists for this API from v2 (KIP-588).
        Ok(Err(e)) => txn_refused(e, version < 2),
        Err(e) => failed_write(&e, Role::Coordinator),
    };
    response.error_code = code.code();
    response
}
