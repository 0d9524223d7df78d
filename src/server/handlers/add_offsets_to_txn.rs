//! AddOffsetsToTxn (key 25): the group's offsets may be committed in the producer's
//! transaction (TxnOffsetCommit to the group's coordinator follows).

use crate::ids::{ProducerEpoch, ProducerId};
use crate::protocol::ErrorCode;
use crate::protocol::messages::AddOffsetsToTxnRequest;
use crate::protocol::messages::AddOffsetsToTxnResponse;
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, txn_refused};

pub async fn handle(
    broker: &Broker,
    request: AddOffsetsToTxnRequest,
    version: i16,
) -> AddOffsetsToTxnResponse {
    let producer = (
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    );
    let code = match broker
        .metadata
        .add_offsets_to_txn(request.transactional_id, producer, request.group_id)
        .await
    {
        Ok(Ok(())) => ErrorCode::None,
        // PRODUCER_FENCED exists for this API from v2 (KIP-588).
        Ok(Err(e)) => txn_refused(e, version < 2),
        Err(e) => failed_write(&e, Role::Coordinator),
    };
    AddOffsetsToTxnResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
