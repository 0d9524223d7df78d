//! AddPartitionsToTxn (key 24): partitions join a producer's open transaction, which the
//! state machine opens with the first one. v0–v3 carry one transaction (what producers
//! send); v4+ batch several, and a `verify_only` transaction is only checked (KIP-890 part 1:
//! whether the partitions are in the open transaction), never changed.

use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state;
use crate::metadata::state::{TxnError, TxnStatus};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::AddPartitionsToTxnRequest;
use crate::protocol::messages::AddPartitionsToTxnResponse;
use crate::protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use crate::protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write, txn_refused};

pub struct AddPartitionsToTxn;

impl Api for AddPartitionsToTxn {
    type Request = AddPartitionsToTxnRequest;
    type Response = AddPartitionsToTxnResponse;
    const KEY: ApiKey = ApiKey::AddPartitionsToTxn;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_ACTION, Acl::TXN_WRITE]);

    fn coordinator(_: &AddPartitionsToTxnRequest) -> Option<&str> {
        None
    }

    /// Any transactional id denied refuses the whole request (53).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut AddPartitionsToTxnRequest,
        version: i16,
    ) -> Authorized<AddPartitionsToTxnResponse> {
        // From v4 the request is the brokers' own (KIP-890: a partition leader verifying a
        // transaction), so Kafka first requires CLUSTER_ACTION on the cluster.
        if version >= 4 && !gate.on_cluster(Operation::ClusterAction) {
            return Authorized::refuse(request, version, ErrorCode::ClusterAuthorizationFailed);
        }
        // v4+ batch several transactions; v0-v3 carry one.
        let ids: Vec<&str> = if request.transactions.is_empty() {
            vec![request.v3_and_below_transactional_id.as_str()]
        } else {
            request
                .transactions
                .iter()
                .map(|t| t.transactional_id.as_str())
                .collect()
        };
        let error = ErrorCode::TransactionalIdAuthorizationFailed;
        all_or_refuse(
            gate,
            Acl::TXN_WRITE,
            ids.into_iter(),
            request,
            version,
            error,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: AddPartitionsToTxnRequest,
    ) -> Reply<AddPartitionsToTxnResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: AddPartitionsToTxnRequest,
    version: i16,
) -> AddPartitionsToTxnResponse {
    // PRODUCER_FENCED exists for this API from v2 (KIP-588).
    let fenced_is_epoch = version < 2;
    if version <= 3 {
        let producer = (
            ProducerId(request.v3_and_below_producer_id),
            ProducerEpoch(request.v3_and_below_producer_epoch),
        );
        let results = add(
            broker,
            request.v3_and_below_transactional_id,
            producer,
            &request.v3_and_below_topics,
            fenced_is_epoch,
        )
        .await;
        return AddPartitionsToTxnResponse {
            results_by_topic_v3_and_below: results,
            ..Default::default()
        };
    }
    let mut response = AddPartitionsToTxnResponse::default();
    for txn in request.transactions {
        let producer = (
            ProducerId(txn.producer_id),
            ProducerEpoch(txn.producer_epoch),
        );
        let topic_results = if txn.verify_only {
            verify(broker, &txn.transactional_id, producer, &txn.topics)
        } else {
            add(
                broker,
                txn.transactional_id.clone(),
                producer,
                &txn.topics,
                fenced_is_epoch,
            )
            .await
        };
        response
            .results_by_transaction
            .push(AddPartitionsToTxnResult {
                transactional_id: txn.transactional_id,
                topic_results,
                ..Default::default()
            });
    }
    response
}

async fn add(
    broker: &Broker,
    transactional_id: String,
    producer: (ProducerId, ProducerEpoch),
    topics: &[AddPartitionsToTxnTopic],
    fenced_is_epoch: bool,
) -> Vec<AddPartitionsToTxnTopicResult> {
    let partitions: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.name.clone(), *p)))
        .collect();
    let codes: Vec<ErrorCode> = match broker
        .metadata
        .write(state::AddPartitionsToTxn {
            transactional_id,
            producer_id: producer.0,
            producer_epoch: producer.1,
            partitions: partitions.clone(),
        })
        .await
    {
        Ok(results) => results
            .into_iter()
            .map(|r| r.map_or_else(|e| txn_refused(e, fenced_is_epoch), |()| ErrorCode::None))
            .collect(),
        Err(e) => vec![failed_write(&e, Role::Coordinator); partitions.len()],
    };
    shape(partitions.into_iter().zip(codes))
}

/// KIP-890's verification: each partition is in the open transaction of this producer.
fn verify(
    broker: &Broker,
    transactional_id: &str,
    producer: (ProducerId, ProducerEpoch),
    topics: &[AddPartitionsToTxnTopic],
) -> Vec<AddPartitionsToTxnTopicResult> {
    let results: Vec<((String, i32), ErrorCode)> = broker.metadata.read(|s| {
        let txn = s.transactions().get(transactional_id);
        topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(move |p| (t.name.clone(), *p)))
            .map(|(topic, partition)| {
                let tp = s.topic(&topic).map(|t| crate::ids::TopicPartition {
                    topic_id: t.id,
                    partition,
                });
                let code = match txn {
                    None => ErrorCode::InvalidProducerIdMapping,
                    Some(t) if t.producer_id != producer.0 => ErrorCode::InvalidProducerIdMapping,
                    Some(t) if t.producer_epoch != producer.1 => {
                        txn_refused(TxnError::ProducerFenced, false)
                    }
                    Some(t)
                        if t.status == TxnStatus::Ongoing
                            && tp.is_some_and(|tp| t.partitions.contains(&tp)) =>
                    {
                        ErrorCode::None
                    }
                    // Kafka's answer for a partition the transaction has not added.
                    Some(_) => ErrorCode::TransactionAbortable,
                };
                ((topic, partition), code)
            })
            .collect()
    });
    shape(results)
}

/// Per-partition codes in the response's shape (topics in first-seen order).
fn shape(
    results: impl IntoIterator<Item = ((String, i32), ErrorCode)>,
) -> Vec<AddPartitionsToTxnTopicResult> {
    let mut topics: Vec<AddPartitionsToTxnTopicResult> = Vec::new();
    for ((name, partition), code) in results {
        let entry = AddPartitionsToTxnPartitionResult {
            partition_index: partition,
            partition_error_code: code.code(),
            ..Default::default()
        };
        match topics.iter_mut().find(|t| t.name == name) {
            Some(t) => t.results_by_partition.push(entry),
            None => topics.push(AddPartitionsToTxnTopicResult {
                name,
                results_by_partition: vec![entry],
                ..Default::default()
            }),
        }
    }
    topics
}
