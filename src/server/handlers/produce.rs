//! Produce (key 0): validate batches, queue them for the next object, answer after commit.
//!
//! Each batch is checked as Kafka checks a client's batches (`produce::validate`) before it is
//! accepted; a bad batch fails its partition with the matching Kafka error and never reaches
//! the object store.

use crate::ids::{Offset, ProducerEpoch, ProducerId, TopicPartition};
use crate::metadata::state::AddPartitionsToTxn;
use crate::metadata::state::BatchOutcome;
use crate::metadata::state::{TxnError, TxnStatus};
use crate::produce::batcher::Standing;
use crate::produce::settings::TopicSettings;
use crate::produce::validate::{Checks, validate};
use crate::produce::{BatchResult, ProduceError};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ProduceRequest;
use crate::protocol::messages::ProduceResponse;
use crate::protocol::messages::produce_response::{
    BatchIndexAndErrorMessage, PartitionProduceResponse, TopicProduceResponse,
};
use crate::protocol::record_batch::Batches;
use crate::protocol::spliced::Records;
use crate::quotas::meter::{QuotaKind, Who};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::Broker;
use crate::server::error_codes;
use crate::server::throttling;
use crate::telemetry::BrokerMetrics;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::oneshot;

pub struct Produce;

impl Api for Produce {
    type Request = ProduceRequest;
    type Response = ProduceResponse;
    const KEY: ApiKey = ApiKey::Produce;
    const VERSIONS: (i16, i16) = (3, 12);
    const NEEDS: Needs = Needs::Acls(&[Acl::TXN_WRITE, Acl::TOPIC_WRITE]);

    fn coordinator(_: &ProduceRequest) -> Option<&str> {
        None
    }

    /// A transactional id the client may not write refuses every topic (53); otherwise each
    /// topic it may not write is refused (29).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut ProduceRequest,
        version: i16,
    ) -> Authorized<ProduceResponse> {
        let txn_ok = request
            .transactional_id
            .as_deref()
            .is_none_or(|id| gate.allowed(Acl::TXN_WRITE, id));
        let error = match txn_ok {
            true => ErrorCode::TopicAuthorizationFailed,
            false => ErrorCode::TransactionalIdAuthorizationFailed,
        };
        let mut refused = take_refused(&mut request.topic_data, |t| {
            txn_ok && gate.allowed(Acl::TOPIC_WRITE, &gate.topic_name(&t.name, &t.topic_id))
        });
        // Only the names and partitions are kept until the answer, not the refused batches.
        for partition in refused.iter_mut().flat_map(|t| &mut t.partition_data) {
            partition.records = None;
        }
        let refused = ProduceRequest {
            topic_data: refused,
            ..Default::default()
        };
        Authorized::restoring_items(refused, version, error)
    }

    /// Batches are queued in request order; the wait for their commits runs concurrently.
    /// The request's size counts against the client's `producer_byte_rate` (Kafka counts it
    /// whether or not its batches are accepted); a client over it is answered with the
    /// throttle time and held for it.
    async fn handle(ctx: Ctx<'_>, request: ProduceRequest) -> Reply<ProduceResponse> {
        let bytes = ctx.request_bytes as f64;
        let who = ctx.client.who();
        // A request its answer will throttle, or one of a tenant sending far more than the
        // others here, does not take the PUT kept for light tenants (`produce::batcher`).
        let now_ms = ctx.broker.clock.monotonic_ms();
        let pipeline = &ctx.broker.pipeline;
        let outsized = pipeline.count_tenant(who.user, who.client_id, bytes, now_ms);
        let over_quota = throttling::would_exceed(ctx.broker, QuotaKind::Produce, who, bytes);
        let standing = match outsized || over_quota {
            true => Standing::Heavy,
            false => Standing::Light,
        };
        let enqueued = enqueue(ctx.broker, request, ctx.version, standing).await;
        let broker = Arc::clone(ctx.broker);
        let started = ctx.started;
        let (user, client_id) = (who.user.to_string(), who.client_id.to_string());
        let throttle = ctx.throttle.clone();
        Reply::Later(Box::pin(async move {
            let mut response = complete(&broker, enqueued).await;
            broker
                .metrics
                .produce_latency
                .observe(started.elapsed().as_secs_f64());
            // Counted when answered, as Kafka counts it: the hold then starts when the tokens
            // were taken.
            let who = Who {
                user: &user,
                client_id: &client_id,
            };
            throttle.at_least(throttling::record(&broker, QuotaKind::Produce, who, bytes));
            if let Some(response) = &mut response {
                response.throttle_time_ms = throttle.field();
            }
            response
        }))
    }
}

enum Pending {
    /// Refused: the code, a message, and Kafka's per-record errors (index, message).
    Failed(ErrorCode, Option<String>, Vec<(i32, String)>),
    /// The batches' commits, and the time they were stamped with on a LogAppendTime topic.
    Queued(Vec<oneshot::Receiver<BatchResult>>, Option<i64>),
}

/// A produce request whose batches are queued in the pipeline, awaiting their commit.
pub struct Enqueued {
    acks: i16,
    /// acks=all answers REQUEST_TIMED_OUT for partitions not committed by then (Kafka's
    /// `timeout_ms`); their batches may still commit, as in Kafka.
    deadline: Option<crate::clock::Instant>,
    early: Option<ProduceResponse>,
    partitions: Vec<(String, i32, Pending)>,
}

/// Validates and queues the request's batches. The connection runs this before it reads its
/// next request, so one connection's batches reach the pipeline in request order (an
/// idempotent producer with several requests in flight depends on it); the wait for commits
/// happens afterwards, concurrently, in `complete`.
pub async fn enqueue(
    broker: &Broker,
    request: ProduceRequest,
    version: i16,
    standing: Standing,
) -> Enqueued {
    let timeout = std::time::Duration::from_millis(request.timeout_ms.max(0) as u64);
    let mut enqueued = Enqueued {
        acks: request.acks,
        deadline: (request.acks == -1).then(|| broker.clock.now() + timeout),
        early: None,
        partitions: Vec::new(),
    };
    if !matches!(request.acks, -1..=1) {
        enqueued.early = Some(fail_all(&request, ErrorCode::InvalidRequiredAcks));
        return enqueued;
    }
    // Transaction version 2: the request's partitions join its transaction first.
    let refused_joins = if version >= 12 {
        join_transaction(broker, &request).await
    } else {
        BTreeMap::new()
    };
    // A topic may raise its max.message.bytes up to what a request and the buffer can hold.
    let ceiling = broker
        .config
        .produce_buffer_bytes_max
        .min(broker.config.frame_bytes_max.saturating_sub(1024));
    for topic in &request.topic_data {
        let topic_id = broker.metadata.read(|s| {
            s.topic(&topic.name).map(|t| {
                let settings =
                    TopicSettings::of(&t.configs, broker.config.batch_bytes_max, ceiling);
                (t.id, t.partitions.len(), settings)
            })
        });
        for partition in &topic.partition_data {
            let refused = refused_joins.get(&(topic.name.clone(), partition.index));
            let pending = match topic_id {
                _ if refused.is_some() => Pending::Failed(
                    refused.copied().unwrap_or(ErrorCode::InvalidTxnState),
                    Some("the partition could not join the transaction".into()),
                    Vec::new(),
                ),
                Some((id, count, settings))
                    if partition.index >= 0 && (partition.index as usize) < count =>
                {
                    let tp = TopicPartition {
                        topic_id: id,
                        partition: partition.index,
                    };
                    let checks = Checks {
                        settings,
                        version,
                        transactional: request.transactional_id.is_some(),
                        now_ms: broker.clock.now_ms(),
                        partition: format!("{}-{}", topic.name, partition.index),
                    };
                    let mut record_errors = Vec::new();
                    let records = partition
                        .records
                        .as_ref()
                        .map(Records::to_bytes)
                        .unwrap_or_default();
                    match validate(records, &checks, &mut record_errors) {
                        Ok(batches) => {
                            let mut receivers = Vec::with_capacity(batches.len());
                            for batch in batches {
                                BrokerMetrics::add(
                                    &broker.metrics.produce_bytes,
                                    batch.size() as u64,
                                );
                                BrokerMetrics::add(
                                    &broker.metrics.produce_records,
                                    batch.record_count().max(0) as u64,
                                );
                                receivers.push(broker.pipeline.append(tp, batch, standing).await);
                            }
                            let stamped = settings.log_append_time.then_some(checks.now_ms);
                            Pending::Queued(receivers, stamped)
                        }
                        Err((code, message)) => Pending::Failed(code, Some(message), record_errors),
                    }
                }
                _ => Pending::Failed(ErrorCode::UnknownTopicOrPartition, None, Vec::new()),
            };
            enqueued
                .partitions
                .push((topic.name.clone(), partition.index, pending));
        }
    }
    enqueued
}

/// Transaction version 2 (Produce v12, KIP-890 part 2): the existing partitions of a
/// transactional request that its open transaction does not hold yet join it (opening it),
/// as an AddPartitionsToTxn would, before their batches are queued. Returns the partitions
/// that could not join, with the code their produce answer carries.
async fn join_transaction(
    broker: &Broker,
    request: &ProduceRequest,
) -> BTreeMap<(String, i32), ErrorCode> {
    let Some(transactional_id) = &request.transactional_id else {
        return BTreeMap::new();
    };
    // The producer of the request's transactional batches: none, or several, join nothing
    // (validation and the commit check refuse such batches on their own).
    let mut producers = request
        .topic_data
        .iter()
        .flat_map(|t| &t.partition_data)
        .filter_map(|p| {
            let batch = Batches::new(p.records.as_ref()?.to_bytes()).next()?.ok()?;
            (batch.is_transactional() && batch.producer_id() >= 0).then(|| {
                (
                    ProducerId(batch.producer_id()),
                    ProducerEpoch(batch.producer_epoch()),
                )
            })
        });
    let Some(producer) = producers.next() else {
        return BTreeMap::new();
    };
    if producers.any(|other| other != producer) {
        return BTreeMap::new();
    }
    let wanted = || {
        request.topic_data.iter().flat_map(|t| {
            t.partition_data
                .iter()
                .map(move |p| (t.name.clone(), p.index))
        })
    };
    let (fenced, missing): (bool, Vec<(String, i32)>) = broker.metadata.read(|s| {
        let txn = s.transactions().get(transactional_id);
        // An epoch older than the id's is fenced for good (epochs only grow): answered here,
        // without a metadata write that could only fail.
        let fenced =
            txn.is_some_and(|t| t.producer_id == producer.0 && t.producer_epoch > producer.1);
        let open = txn.filter(|t| {
            t.status == TxnStatus::Ongoing && (t.producer_id, t.producer_epoch) == producer
        });
        let missing = wanted()
            .filter(|(name, index)| {
                let Some(topic) = s.topic(name) else {
                    return false;
                };
                let exists = *index >= 0 && (*index as usize) < topic.partitions.len();
                let tp = TopicPartition {
                    topic_id: topic.id,
                    partition: *index,
                };
                exists && !open.is_some_and(|t| t.partitions.contains(&tp))
            })
            .collect();
        (fenced, missing)
    });
    if fenced {
        return wanted()
            .map(|partition| (partition, ErrorCode::InvalidProducerEpoch))
            .collect();
    }
    if missing.is_empty() {
        return BTreeMap::new();
    }
    let codes: Vec<Option<ErrorCode>> = match broker
        .metadata
        .write(AddPartitionsToTxn {
            transactional_id: transactional_id.clone(),
            producer_id: producer.0,
            producer_epoch: producer.1,
            partitions: missing.clone(),
        })
        .await
    {
        // Produce answers a fenced producer INVALID_PRODUCER_EPOCH, as Kafka does; a join
        // not attempted because another partition's failed (its topic deleted meanwhile) is
        // retriable, as Kafka answers a failed verification.
        Ok(results) => results
            .into_iter()
            .map(|r| {
                r.err().map(|e| match e {
                    TxnError::OperationNotAttempted => ErrorCode::NotEnoughReplicas,
                    e => error_codes::txn_refused(e, true),
                })
            })
            .collect(),
        Err(e) => {
            vec![Some(error_codes::failed_write(&e, error_codes::Role::Partition)); missing.len()]
        }
    };
    missing
        .into_iter()
        .zip(codes)
        .filter_map(|(partition, code)| Some((partition, code?)))
        .collect()
}

/// Waits for the queued batches' commits and builds the response (`None` for acks=0).
pub async fn complete(broker: &Broker, enqueued: Enqueued) -> Option<ProduceResponse> {
    if let Some(response) = enqueued.early {
        return (enqueued.acks != 0).then_some(response);
    }
    let mut response = ProduceResponse::default();
    for (name, index, pending) in enqueued.partitions {
        let mut log_append_time_ms = -1;
        let mut record_errors = Vec::new();
        let (error, base_offset, error_message) = match pending {
            Pending::Failed(code, message, errors) => {
                record_errors = errors;
                (code, Offset::NONE, message)
            }
            Pending::Queued(receivers, stamped) => match enqueued.deadline {
                None => {
                    log_append_time_ms = stamped.unwrap_or(-1);
                    let (code, offset) = wait(receivers).await;
                    (code, offset, None)
                }
                Some(deadline) => match broker.clock.timeout_at(deadline, wait(receivers)).await {
                    Ok((code, offset)) => {
                        log_append_time_ms = stamped.unwrap_or(-1);
                        (code, offset, None)
                    }
                    Err(_) => (
                        ErrorCode::RequestTimedOut,
                        Offset::NONE,
                        Some("the commit did not complete within the request's timeout".into()),
                    ),
                },
            },
        };
        let log_start_offset = if error == ErrorCode::None {
            broker
                .metadata
                .read(|s| {
                    s.topic(&name)
                        .and_then(|t| t.partitions.get(index as usize))
                        .map(|p| p.log_start_offset)
                })
                .unwrap_or(Offset::NONE)
        } else {
            Offset::NONE
        };
        let partition = PartitionProduceResponse {
            index,
            error_code: error.code(),
            base_offset: base_offset.0,
            log_start_offset: log_start_offset.0,
            log_append_time_ms: if error == ErrorCode::None {
                log_append_time_ms
            } else {
                -1
            },
            error_message,
            record_errors: record_errors
                .into_iter()
                .map(|(batch_index, message)| BatchIndexAndErrorMessage {
                    batch_index,
                    batch_index_error_message: Some(message),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        match response.responses.iter_mut().find(|t| t.name == name) {
            Some(topic) => topic.partition_responses.push(partition),
            None => response.responses.push(TopicProduceResponse {
                name,
                partition_responses: vec![partition],
                ..Default::default()
            }),
        }
    }
    if enqueued.acks == 0 {
        None
    } else {
        Some(response)
    }
}

/// The partition's result: its first batch's offset, or the first error.
async fn wait(receivers: Vec<oneshot::Receiver<BatchResult>>) -> (ErrorCode, Offset) {
    let mut base_offset = Offset::NONE;
    for (i, receiver) in receivers.into_iter().enumerate() {
        let outcome = receiver.await.unwrap_or(Err(ProduceError::ShuttingDown));
        let offset = match outcome {
            Ok(BatchOutcome::Appended { base_offset })
            | Ok(BatchOutcome::Duplicate { base_offset }) => base_offset,
            Ok(refused) => return (error_codes::batch_refused(refused), Offset::NONE),
            // A retry is safe: a failed PUT committed nothing, and a commit that timed out
            // may have landed but its retry is recognised by the producer's sequence.
            Err(e) => return (error_codes::produce_error(&e), Offset::NONE),
        };
        if i == 0 {
            base_offset = offset;
        }
    }
    (ErrorCode::None, base_offset)
}

fn fail_all(request: &ProduceRequest, code: ErrorCode) -> ProduceResponse {
    ProduceResponse {
        responses: request
            .topic_data
            .iter()
            .map(|t| TopicProduceResponse {
                name: t.name.clone(),
                partition_responses: t
                    .partition_data
                    .iter()
                    .map(|p| PartitionProduceResponse {
                        index: p.index,
                        error_code: code.code(),
                        base_offset: -1,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
