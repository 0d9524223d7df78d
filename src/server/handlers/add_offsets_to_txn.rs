//! AddOffsetsToTxn (key 25): the group's offsets may be committed in the producer's
//! transaction (TxnOffsetCommit to the group's coordinator follows).

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state;
use crate::protocol::ApiKey;
use crate::protocol::messages::AddOffsetsToTxnRequest;
use crate::protocol::messages::AddOffsetsToTxnResponse;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, transactional_offsets_refusal};
use crate::server::broker::Broker;
use crate::server::error_codes::txn_answer;

pub struct AddOffsetsToTxn;

impl Api for AddOffsetsToTxn {
    type Request = AddOffsetsToTxnRequest;
    type Response = AddOffsetsToTxnResponse;
    const KEY: ApiKey = ApiKey::AddOffsetsToTxn;
    const VERSIONS: (i16, i16) = (0, 4);
    const NEEDS: Needs = Needs::Acls(&[Acl::TXN_WRITE, Acl::GROUP_READ]);

    fn coordinator(_: &AddOffsetsToTxnRequest) -> Option<&str> {
        None
    }

    /// The group is checked only once the transactional id passed: 53, else 30.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut AddOffsetsToTxnRequest,
        version: i16,
    ) -> Authorized<AddOffsetsToTxnResponse> {
        match transactional_offsets_refusal(gate, &request.transactional_id, &request.group_id) {
            None => Authorized::run(),
            Some(error) => Authorized::refuse(request, version, error),
        }
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: AddOffsetsToTxnRequest,
    ) -> Reply<AddOffsetsToTxnResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: AddOffsetsToTxnRequest,
    version: i16,
) -> AddOffsetsToTxnResponse {
    let producer = (
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    );
    let added = broker
        .metadata
        .write(state::AddOffsetsToTxn {
            transactional_id: request.transactional_id,
            producer_id: producer.0,
            producer_epoch: producer.1,
            group: request.group_id,
        })
        .await;
    // PRODUCER_FENCED exists for this API from v2 (KIP-588).
    let code = txn_answer(added, version < 2);
    AddOffsetsToTxnResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
