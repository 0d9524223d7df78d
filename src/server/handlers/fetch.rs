//! Fetch (key 1): plan from the partition index, read byte ranges, patch headers; long-poll.
//!
//! A client that names its rack (KIP-392, Fetch v11+) and reaches an agent outside it is sent
//! to the agent of its rack that serves the partition (`preferred_read_replica`), so reads stay
//! in the zone.
//!
//! A read_committed fetch (isolation level 1) returns data only below the partition's last
//! stable offset, with the aborted transactions in the range it returns, so the client drops
//! their batches; the broker never looks inside them.
//!
//! When less than `min_bytes` is available the request waits, up to `max_wait_ms`, for a commit
//! to one of its partitions to make more visible: it sleeps on those partitions' signals
//! (`metadata::partition_signals`), not in a polling loop and not on every commit.

use crate::fetch::planner::{FetchPlan, plan_fetch};
use crate::fetch::reader::Run;
use crate::fetch::reader::read_batches;
use crate::fetch::runs::{Located, locate, runs_for_fetch};
use crate::ids::{Offset, TopicPartition};
use crate::metadata::MetadataState;
use crate::metadata::partition_signals::Listener;
use crate::metadata::state::{AbortedTxn, PartitionState, Topic};
use crate::placement;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::FetchRequest;
use crate::protocol::messages::FetchResponse;
use crate::protocol::messages::fetch_request::FetchTopic;
use crate::protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use crate::quotas::meter::{QuotaKind, Who};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::server::fresh_copy::{LocalCopy, catch_up};
use crate::server::throttling;
use crate::telemetry::BrokerMetrics;
use crate::telemetry::ErrorChain;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A long poll never waits longer than this, whatever the client asks.
const MAX_WAIT_CAP: Duration = Duration::from_secs(30);

pub struct Fetch;

impl Api for Fetch {
    type Request = FetchRequest;
    type Response = FetchResponse;
    const KEY: ApiKey = ApiKey::Fetch;
    const VERSIONS: (i16, i16) = (4, 18);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_READ]);

    fn coordinator(_: &FetchRequest) -> Option<&str> {
        None
    }

    /// A topic the client may not read is answered with TOPIC_AUTHORIZATION_FAILED.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut FetchRequest,
        version: i16,
    ) -> Authorized<FetchResponse> {
        let refused = FetchRequest {
            topics: take_refused(&mut request.topics, |t| {
                gate.allowed(Acl::TOPIC_READ, &gate.topic_name(&t.topic, &t.topic_id))
            }),
            ..Default::default()
        };
        Authorized::restoring_items(refused, version, ErrorCode::TopicAuthorizationFailed)
    }

    /// Fetches may long-poll, so they run concurrently with later requests.
    ///
    /// Under a `consumer_byte_rate` quota (as Kafka): a fetch asks for no more than the
    /// quota allows at once, what it returns counts against the quota, and a fetch that puts
    /// the client over it is answered empty with the throttle time (and not counted), so the
    /// records are read again once the client's hold is over.
    async fn handle(ctx: Ctx<'_>, mut request: FetchRequest) -> Reply<FetchResponse> {
        let broker = Arc::clone(ctx.broker);
        let (version, started) = (ctx.version, ctx.started);
        let who = ctx.client.who();
        if let Some(most) = throttling::most_at_once(&broker, QuotaKind::Fetch, who) {
            let most = most.min(i32::MAX as f64) as i32;
            request.max_bytes = request.max_bytes.min(most);
            request.min_bytes = request.min_bytes.min(request.max_bytes);
        }
        let (user, client_id) = (who.user.to_string(), who.client_id.to_string());
        let (throttle, busy) = (ctx.throttle.clone(), ctx.busy.clone());
        Reply::Later(Box::pin(async move {
            let mut response = handle(&broker, request, version).await;
            broker
                .metrics
                .fetch_latency
                .observe(started.elapsed().as_secs_f64());
            let who = Who {
                user: &user,
                client_id: &client_id,
            };
            let bytes = records_bytes(&response) as f64;
            // Over either quota (bytes, or the request time a `request_percentage` bounds),
            // the fetch is answered empty, as Kafka answers it.
            let held = throttling::record(&broker, QuotaKind::Fetch, who, bytes)
                .max(throttling::charge_request(&broker, who, &busy));
            if held > 0 {
                throttling::unrecord(&broker, QuotaKind::Fetch, who, bytes);
                throttle.at_least(held);
                response = FetchResponse {
                    throttle_time_ms: throttle.field(),
                    ..Default::default()
                };
            } else {
                throttling::count_served_fetch(&broker, who, bytes);
            }
            Some(response)
        }))
    }
}

pub async fn handle(broker: &Broker, request: FetchRequest, version: i16) -> FetchResponse {
    let redirect = RackRedirect::new(broker, &request, version);
    let wait = Duration::from_millis(request.max_wait_ms.max(0) as u64).min(MAX_WAIT_CAP);
    // A fetch that does not wait never listens: it answers after one look.
    let mut commits = match wait.is_zero() {
        true => broker.metadata.partition_signals().listen(&[]),
        false => listen(broker, &request, version),
    };
    let deadline = broker.clock.now() + wait;
    let copy = if beyond_high_watermark(broker, &request, version) {
        catch_up(broker).await
    } else {
        LocalCopy::Current
    };
    loop {
        commits.mark_seen();
        let (response, bytes) = fetch_once(broker, &request, version, &redirect, copy).await;
        let enough = bytes >= request.min_bytes.max(1) as usize;
        if enough || has_news(&response) || broker.clock.now() >= deadline {
            return response;
        }
        // Wake on the next commit to one of these partitions, or give up at the deadline.
        let woken = {
            let _waiting = Waiting::start(&broker.metrics);
            broker.clock.timeout_at(deadline, commits.raised()).await
        };
        match woken {
            Ok(raised) => {
                if let Some(at) = raised {
                    let latency = broker.clock.now().saturating_duration_since(at);
                    broker
                        .metrics
                        .fetch_wake_latency
                        .observe(latency.as_secs_f64());
                }
            }
            Err(_) => {
                return fetch_once(broker, &request, version, &redirect, copy)
                    .await
                    .0;
            }
        }
    }
}

/// Counts a fetch in `fetches_waiting` while it lives: however its wait ends, the request
/// dropped mid-wait (its connection closed) included.
struct Waiting<'m>(&'m BrokerMetrics);

impl<'m> Waiting<'m> {
    fn start(metrics: &'m BrokerMetrics) -> Waiting<'m> {
        metrics.fetches_waiting.fetch_add(1, Ordering::Relaxed);
        Waiting(metrics)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetches_waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

// A fetch beyond this agent's high watermark catches up first (`fresh_copy`): the offset may
// be within the quorum's, and Kafka's answer to an offset beyond the log, OFFSET_OUT_OF_RANGE,
// would make the client reset to earliest (reading everything again) or latest (skipping
// records).

/// Whether the request asks any partition for an offset beyond this agent's high watermark.
fn beyond_high_watermark(broker: &Broker, request: &FetchRequest, version: i16) -> bool {
    broker.metadata.read(|s| {
        request.topics.iter().any(|topic| {
            requested_topic(s, topic, version).is_some_and(|t| {
                topic.partitions.iter().any(|p| {
                    partition_state(t, p.partition)
                        .is_some_and(|state| p.fetch_offset > state.high_watermark.0)
                })
            })
        })
    })
}

/// Whether a partition's answer is an error or a redirect (KIP-392), which Kafka sends at
/// once rather than after `max_wait_ms`.
/// The record bytes a response returns: what the fetch quota counts (Kafka counts the whole
/// response; the rest is a few dozen bytes a partition).
fn records_bytes(response: &FetchResponse) -> usize {
    response
        .responses
        .iter()
        .flat_map(|t| &t.partitions)
        .filter_map(|p| p.records.as_ref())
        .map(|r| r.len())
        .sum()
}

fn has_news(response: &FetchResponse) -> bool {
    response
        .responses
        .iter()
        .flat_map(|t| &t.partitions)
        .any(|p| p.error_code != 0 || p.preferred_read_replica >= 0)
}

/// The topic a request names: from v13 by id (KIP-516), before by name.
fn requested_topic<'s>(
    s: &'s MetadataState,
    topic: &FetchTopic,
    version: i16,
) -> Option<&'s Topic> {
    if version >= 13 {
        s.topic_by_id(&topic.topic_id)
    } else {
        s.topic(&topic.topic)
    }
}

/// A partition of a topic by its index, if the topic has it.
fn partition_state(topic: &Topic, partition: i32) -> Option<&PartitionState> {
    usize::try_from(partition)
        .ok()
        .and_then(|i| topic.partitions.get(i))
}

/// A listener to commits of the partitions the request names (those the state knows).
fn listen(broker: &Broker, request: &FetchRequest, version: i16) -> Listener {
    let partitions: Vec<TopicPartition> = broker.metadata.read(|s| {
        request
            .topics
            .iter()
            .filter_map(|t| requested_topic(s, t, version).map(|found| (found.id, t)))
            .flat_map(|(topic_id, t)| {
                t.partitions.iter().map(move |p| TopicPartition {
                    topic_id,
                    partition: p.partition,
                })
            })
            .collect()
    });
    broker.metadata.partition_signals().listen(&partitions)
}

/// Where a rack-aware client should fetch instead, if not here.
struct RackRedirect {
    rack: Option<String>,
    shown: Vec<crate::placement::Shown>,
    own_id: i32,
}

impl RackRedirect {
    fn new(broker: &Broker, request: &FetchRequest, version: i16) -> RackRedirect {
        let rack = (version >= 11 && !request.rack_id.is_empty())
            .then(|| request.rack_id.clone())
            .filter(|rack| broker.config.zone.as_ref() != Some(rack));
        // Only a rack-aware client outside its rack needs the registry: plain fetches skip it.
        let shown = match rack {
            Some(_) => broker.shown_brokers(),
            None => Vec::new(),
        };
        let own_id = broker.shown_id_in(&shown);
        RackRedirect {
            rack,
            shown,
            own_id,
        }
    }

    /// The agent of the client's rack serving this partition, when that is another agent.
    fn preferred(&self, topic: &uuid::Uuid, partition: i32) -> Option<i32> {
        let rack = self.rack.as_deref()?;
        placement::zone_agent(&self.shown, rack, topic, partition).filter(|id| *id != self.own_id)
    }
}

/// What planning under the state's lock found for one partition.
enum Planned {
    Empty,
    OutOfRange,
    /// The index entries to read, with their objects.
    Read(Vec<Located>),
    /// An entry whose object the state does not hold (never expected).
    Missing,
}

/// A partition's last stable offset, where this fetch stops reading, and (read_committed)
/// the aborted transactions it may return.
struct Stability {
    lso: Offset,
    stable: Offset,
    aborted: Option<Vec<AbortedTxn>>,
}

/// One partition's planned read: its slot in the response and the runs to read.
struct PlannedRead {
    topic: usize,
    partition: usize,
    runs: Vec<Run>,
    fetch_offset: i64,
    /// Where the read stops: the last stable offset for read_committed, else the high
    /// watermark.
    stable: Offset,
    /// For read_committed: the aborted transactions from the fetch offset to `stable`.
    aborted: Option<Vec<AbortedTxn>>,
    budget: usize,
    /// Only the first read may return a batch larger than its budget (Kafka's rule).
    may_exceed: bool,
}

/// Plans every partition (in request order, so the request-wide byte budget is shared the way
/// Kafka shares it), then reads all planned ranges concurrently.
async fn fetch_once(
    broker: &Broker,
    request: &FetchRequest,
    version: i16,
    redirect: &RackRedirect,
    copy: LocalCopy,
) -> (FetchResponse, usize) {
    let mut response = FetchResponse::default();
    let mut planned_bytes = 0usize;
    let mut reads = Vec::new();
    // Kafka's broker-side fetch.max.bytes caps what a client may ask for.
    let request_budget = (request.max_bytes.max(0) as usize).min(broker.config.fetch_bytes_max);
    let read_committed = request.isolation_level == 1;
    for (topic_index, topic) in request.topics.iter().enumerate() {
        let mut out = FetchableTopicResponse {
            topic: topic.topic.clone(),
            topic_id: topic.topic_id,
            ..Default::default()
        };
        for p in &topic.partitions {
            // Kafka's rule: both budgets apply to every partition, but the first batch of the
            // first partition with data comes whatever its size (the reader always takes one
            // batch), so a consumer can always make progress.
            let budget = (p.partition_max_bytes.max(0) as usize)
                .min(request_budget.saturating_sub(planned_bytes));
            let first = reads.is_empty();
            // Plan under the read lock: only the planned runs are copied, not the index.
            let planned = broker.metadata.read(|s| {
                requested_topic(s, topic, version)
                    .and_then(|t| partition_state(t, p.partition).map(|state| (t, state)))
                    .map(|(t, state): (_, &PartitionState)| {
                        let tp = TopicPartition {
                            topic_id: t.id,
                            partition: p.partition,
                        };
                        let lso = s.last_stable_offset(&tp).unwrap_or(state.high_watermark);
                        let stable = if read_committed {
                            lso
                        } else {
                            state.high_watermark
                        };
                        let aborted = read_committed.then(|| {
                            s.transactions()
                                .aborted_between(&tp, Offset(p.fetch_offset), stable)
                        });
                        let plan = match redirect.preferred(&t.id, p.partition) {
                            Some(agent) => Err(agent),
                            None => Ok(
                                match plan_fetch(
                                    state,
                                    Offset(p.fetch_offset),
                                    budget as u64,
                                    stable,
                                ) {
                                    FetchPlan::Read(entries) => entries
                                        .iter()
                                        .map(|e| locate(s.objects(), e))
                                        .collect::<Option<Vec<_>>>()
                                        .map_or(Planned::Missing, Planned::Read),
                                    FetchPlan::Empty => Planned::Empty,
                                    FetchPlan::OutOfRange => Planned::OutOfRange,
                                },
                            ),
                        };
                        let marks = Stability {
                            lso,
                            stable,
                            aborted,
                        };
                        (state.high_watermark, state.log_start_offset, marks, plan)
                    })
            });
            let mut data = PartitionData {
                partition_index: p.partition,
                high_watermark: -1,
                last_stable_offset: -1,
                log_start_offset: -1,
                // Kafka sends empty records, never null, also with an error: librdkafka
                // refuses a null record set ("invalid MessageSetSize -1").
                records: Some(Default::default()),
                // Kafka: a list (maybe empty) for read_committed, null otherwise.
                aborted_transactions: read_committed.then(Vec::new),
                ..Default::default()
            };
            let Some((high_watermark, log_start_offset, marks, plan)) = planned else {
                let known = version >= 13
                    && broker
                        .metadata
                        .read(|s| s.topic_by_id(&topic.topic_id).is_some());
                data.error_code = if version >= 13 && !known {
                    ErrorCode::UnknownTopicId.code()
                } else {
                    ErrorCode::UnknownTopicOrPartition.code()
                };
                out.partitions.push(data);
                continue;
            };
            data.high_watermark = high_watermark.0;
            data.last_stable_offset = marks.lso.0;
            data.log_start_offset = log_start_offset.0;
            let plan = match plan {
                Ok(plan) => plan,
                Err(agent) => {
                    // KIP-392: no records; the client fetches from `agent` next.
                    data.preferred_read_replica = agent;
                    out.partitions.push(data);
                    continue;
                }
            };
            let plan = match plan {
                Planned::Read(entries) => match runs_for_fetch(
                    &broker.segment_indexes,
                    &broker.read_cache,
                    &entries,
                    Offset(p.fetch_offset),
                    budget as u64,
                )
                .await
                {
                    Ok(runs) => Ok(runs),
                    Err(e) => {
                        tracing::warn!(error = %ErrorChain(&e), topic = %topic.topic, partition = p.partition, "fetch planning failed");
                        Err(())
                    }
                },
                Planned::Missing => {
                    tracing::error!(topic = %topic.topic, partition = p.partition, "an index entry names an object the state does not hold");
                    Err(())
                }
                Planned::Empty => Ok(Vec::new()),
                Planned::OutOfRange => {
                    // Beyond a copy that may lag: not known to be out of range (librdkafka
                    // refreshes metadata and retries; so does the Java client).
                    let unconfirmed =
                        copy == LocalCopy::MayLag && p.fetch_offset > high_watermark.0;
                    data.error_code = if unconfirmed {
                        ErrorCode::OffsetNotAvailable.code()
                    } else {
                        ErrorCode::OffsetOutOfRange.code()
                    };
                    Ok(Vec::new())
                }
            };
            match plan {
                Err(()) => {
                    data.error_code = ErrorCode::KafkaStorageError.code();
                }
                Ok(runs) if runs.is_empty() => {}
                Ok(runs) if budget > 0 || first => {
                    // An upper bound of what the read returns: the budget (a later read that
                    // would exceed it is dropped), or for the first read up to its first run
                    // whole (a batch above the budget).
                    let run_bytes = runs.iter().map(|r| r.read_bytes()).sum::<u64>() as usize;
                    let first_run = runs.first().map_or(0, |r| r.read_bytes()) as usize;
                    planned_bytes += if first {
                        run_bytes.min(budget.max(first_run))
                    } else {
                        run_bytes.min(budget)
                    };
                    reads.push(PlannedRead {
                        topic: topic_index,
                        partition: out.partitions.len(),
                        runs,
                        fetch_offset: p.fetch_offset,
                        stable: marks.stable,
                        aborted: marks.aborted,
                        budget: budget.max(1),
                        may_exceed: first,
                    });
                }
                Ok(_) => {}
            }
            out.partitions.push(data);
        }
        response.responses.push(out);
    }

    // What the reads return is counted from before they start until the response is built;
    // across all fetches it stays within the fetch budget (a fetch waits here while others
    // hold it). Data served from the object cache is counted too: the response holds it.
    let _held = broker.fetch_budget.reserve(planned_bytes).await;
    let results = futures::future::join_all(reads.iter().map(|r| {
        read_batches(
            &broker.read_cache,
            &r.runs,
            Offset(r.fetch_offset),
            r.stable,
            r.budget,
            LEADER_EPOCH,
        )
    }))
    .await;
    let mut total = 0usize;
    for (read, result) in reads.iter().zip(results) {
        let topic = &mut response.responses[read.topic];
        let data = &mut topic.partitions[read.partition];
        match result {
            // A later partition whose first batch did not fit what was left: nothing for it
            // this time (the reader always returns at least one batch).
            Ok(got) if !read.may_exceed && got.bytes.len() > read.budget => {}
            Ok(got) => {
                total += got.bytes.len();
                BrokerMetrics::add(&broker.metrics.fetch_bytes, got.bytes.len() as u64);
                BrokerMetrics::add(&broker.metrics.fetch_records, got.records);
                if let Some(aborted) = &read.aborted {
                    // Those that began before the end of what is returned.
                    data.aborted_transactions = Some(
                        aborted
                            .iter()
                            .filter(|a| a.first_offset < got.end_offset)
                            .map(|a| AbortedTransaction {
                                producer_id: a.producer_id.0,
                                first_offset: a.first_offset.0,
                                ..Default::default()
                            })
                            .collect(),
                    );
                }
                data.records = Some(got.bytes);
            }
            Err(e) => {
                tracing::warn!(error = %ErrorChain(&e), topic = %topic.topic, partition = data.partition_index, "fetch read failed");
                data.error_code = ErrorCode::KafkaStorageError.code();
            }
        }
    }
    (response, total)
}
