//! AddOffsetsToTxn (key 25): the group's offsets may be committed in the producer's
//! transaction (TxnOffsetCommit to the group's coordinator follows).

use crate::ids::{ProducerEpoch, ProducerId};
use crate::protocol::messages::AddOffsetsToTxnRequest;
use crate::protocol::messages::AddOffsetsToTxnResponse;
use crate::server::broker::Broker;
use crate::server::error_codes::txn_answer;

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
        .add_offsets_to_txn(request.transactional_id, producer, request.group_id)
        .await;
    // PRODUCER_FENCED exists for this API from v2 (KIP-588).
    let code = txn_answer(added, version < 2);
    AddOffsetsToTxnResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
