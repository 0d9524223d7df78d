//! TxnOffsetCommit (key 28): a transactional producer commits a group's offsets into its
//! transaction; they become the group's committed offsets when the transaction commits (and
//! are dropped if it aborts). Sent to the group's coordinator, which checks the member and
//! generation the producer presents (KIP-447) as it checks an OffsetCommit's. From v5
//! (transaction version 2) the group joins the transaction implicitly, with no
//! AddOffsetsToTxn first.

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state;
use crate::metadata::state::GroupOffset;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::TxnOffsetCommitRequest;
use crate::protocol::messages::TxnOffsetCommitResponse;
use crate::protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, transactional_offsets_refusal};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, txn_answer, txn_refused};

pub struct TxnOffsetCommit;

impl Api for TxnOffsetCommit {
    type Request = TxnOffsetCommitRequest;
    type Response = TxnOffsetCommitResponse;
    const KEY: ApiKey = ApiKey::TxnOffsetCommit;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::TXN_WRITE, Acl::GROUP_READ]);

    fn coordinator(request: &TxnOffsetCommitRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    /// The group is checked only once the transactional id passed: 53, else 30.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut TxnOffsetCommitRequest,
        version: i16,
    ) -> Authorized<TxnOffsetCommitResponse> {
        match transactional_offsets_refusal(gate, &request.transactional_id, &request.group_id) {
            None => Authorized::run(),
            Some(error) => Authorized::refuse(request, version, error),
        }
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: TxnOffsetCommitRequest,
    ) -> Reply<TxnOffsetCommitResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: TxnOffsetCommitRequest,
    version: i16,
) -> TxnOffsetCommitResponse {
    let now_ms = broker.clock.now_ms();
    let offsets: Vec<(String, i32, GroupOffset)> = request
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| {
                (
                    t.name.clone(),
                    p.partition_index,
                    GroupOffset {
                        offset: crate::ids::Offset(p.committed_offset),
                        leader_epoch: p.committed_leader_epoch,
                        metadata: p.committed_metadata.clone(),
                        commit_timestamp: now_ms,
                    },
                )
            })
        })
        .collect();
    let producer = (
        ProducerId(request.producer_id),
        ProducerEpoch(request.producer_epoch),
    );
    let membership = match membership(broker, &request) {
        ErrorCode::None if version >= 5 => implicit_add(broker, &request, producer).await,
        code => code,
    };
    let codes = match membership {
        ErrorCode::None => {
            match broker
                .metadata
                .write(state::TxnOffsetCommit {
                    transactional_id: request.transactional_id.clone(),
                    producer_id: producer.0,
                    producer_epoch: producer.1,
                    group: request.group_id.clone(),
                    offsets: offsets.clone(),
                })
                .await
            {
                // A fenced producer hears INVALID_PRODUCER_EPOCH here at every version, as
                // from Kafka (its offsets go through a log append).
                Ok(results) => results
                    .into_iter()
                    .map(|r| r.map_or_else(|e| txn_refused(e, true), |()| ErrorCode::None))
                    .collect(),
                Err(e) => vec![failed_write(&e, Role::Coordinator); offsets.len()],
            }
        }
        code => vec![code; offsets.len()],
    };
    let mut response = TxnOffsetCommitResponse::default();
    for ((name, partition, _), code) in offsets.into_iter().zip(codes) {
        let entry = TxnOffsetCommitResponsePartition {
            partition_index: partition,
            error_code: code.code(),
            ..Default::default()
        };
        match response.topics.iter_mut().find(|t| t.name == name) {
            Some(t) => t.partitions.push(entry),
            None => response.topics.push(TxnOffsetCommitResponseTopic {
                name,
                partitions: vec![entry],
                ..Default::default()
            }),
        }
    }
    response
}

/// Transaction version 2: the group joins the transaction (as AddOffsetsToTxn would) unless
/// it is in it already.
async fn implicit_add(
    broker: &Broker,
    request: &TxnOffsetCommitRequest,
    producer: (ProducerId, ProducerEpoch),
) -> ErrorCode {
    let joined = broker.metadata.read(|s| {
        s.transactions()
            .get(&request.transactional_id)
            .is_some_and(|t| {
                t.status == crate::metadata::state::TxnStatus::Ongoing
                    && t.groups.contains(&request.group_id)
            })
    });
    if joined {
        return ErrorCode::None;
    }
    let added = broker
        .metadata
        .write(state::AddOffsetsToTxn {
            transactional_id: request.transactional_id.clone(),
            producer_id: producer.0,
            producer_epoch: producer.1,
            group: request.group_id.clone(),
        })
        .await;
    txn_answer(added, true)
}

/// This agent coordinates the group, and the member (if the producer names one, KIP-447) is
/// in its current generation. A producer that names no member is not checked, as in Kafka.
fn membership(broker: &Broker, request: &TxnOffsetCommitRequest) -> ErrorCode {
    if !broker.coordinates(&request.group_id) {
        return ErrorCode::NotCoordinator;
    }
    if request.generation_id < 0
        && request.member_id.is_empty()
        && request.group_instance_id.is_none()
    {
        return ErrorCode::None;
    }
    if broker.groups.is_fenced(
        &request.group_id,
        &request.member_id,
        request.group_instance_id.as_deref(),
    ) {
        return ErrorCode::FencedInstanceId;
    }
    // As an OffsetCommit v9 would be checked (classic generations and KIP-848 member
    // epochs), except that a transactional commit is never held up by a rebalance (Kafka's
    // transactional offset commit validation).
    match broker.groups.check_commit(
        &request.group_id,
        &request.member_id,
        request.generation_id,
        9,
        &[],
    ) {
        ErrorCode::RebalanceInProgress => ErrorCode::None,
        code => code,
    }
}
