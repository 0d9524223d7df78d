//! ShareFetch (key 78): a share consumer's reads (KIP-932). One request acknowledges what the
//! member processed and acquires the next records of every partition in its share session;
//! both happen in one replicated write (`handlers::share`), so a record goes to one member at
//! a time whichever agents the members reach. Version 1 (Kafka 4.1's first stable one).
//!
//! Order of work, as Kafka's `handleShareFetchRequest`: the session (its epoch, its
//! partitions), authorization per partition, acknowledgements, then reads. With nothing to
//! acquire the request waits, up to `max_wait_ms`, for a commit to its partitions or records
//! given back (released, or their locks expired), listening on the partitions' signals.

use super::share::{
    Acks, MEMBER_ID_BYTES_MAX, PartitionRead, ReadFailure, ack_error_code, add_acks,
    authorize_group, group_settings, read_partition, release_member,
};
use crate::ids::TopicPartition;
use crate::metadata::state::RoundPartition;
use crate::metadata::state::share::AckError;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ShareFetchRequest;
use crate::protocol::messages::ShareFetchResponse;
use crate::protocol::messages::share_fetch_response::{
    AcquiredRecords, LeaderIdAndEpoch, PartitionData, ShareFetchableTopicResponse,
};
use crate::quotas::meter::QuotaKind;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::share_sessions::{Context, INITIAL_EPOCH};
use crate::server::throttling;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A long poll never waits longer than this, whatever the client asks.
const MAX_WAIT_CAP: Duration = Duration::from_secs(30);
/// Reads that lost every record to another member's acquisition, retried at once before
/// waiting (the state moved on; the next read starts past what was taken).
const LOST_RACES_MAX: usize = 3;

pub struct ShareFetch;

impl Api for ShareFetch {
    type Request = ShareFetchRequest;
    type Response = ShareFetchResponse;
    const KEY: ApiKey = ApiKey::ShareFetch;
    const VERSIONS: (i16, i16) = (1, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_READ, Acl::TOPIC_READ]);

    fn coordinator(_: &ShareFetchRequest) -> Option<&str> {
        None
    }

    /// READ on the group, else the whole request is refused; topics are checked per
    /// partition by the handler, since a session's partitions outlive the request naming them.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut ShareFetchRequest,
        version: i16,
    ) -> Authorized<ShareFetchResponse> {
        authorize_group(gate, request.group_id.as_deref(), request, version)
    }

    /// Under a `consumer_byte_rate` quota a share fetch asks for no more than the quota
    /// allows at once, as Kafka caps it (Kafka does not count what share fetches return
    /// against the quota).
    async fn handle(ctx: Ctx<'_>, mut request: ShareFetchRequest) -> Reply<ShareFetchResponse> {
        let who = ctx.client.who();
        if let Some(most) = throttling::most_at_once(ctx.broker, QuotaKind::Fetch, who) {
            request.max_bytes = request.max_bytes.min(most.min(i32::MAX as f64) as i32);
        }
        let gate = Gate::new(ctx.broker, &ctx.client, Self::NEEDS);
        let prepared = prepare(ctx.broker, &request, ctx.client.lane, &gate);
        let broker = Arc::clone(ctx.broker);
        Reply::Later(Box::pin(async move {
            Some(match prepared {
                Ok(prepared) => serve(&broker, &request, prepared).await,
                Err(response) => response,
            })
        }))
    }
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> ShareFetchResponse {
    ShareFetchResponse {
        error_code: code.code(),
        error_message: Some(message.into()),
        ..Default::default()
    }
}

/// The request checked against its session and authorization, before anything waits.
struct Prepared {
    group: String,
    member: String,
    /// The acknowledgements, by partition (checked: `Err` answers the partition).
    acks: Acks,
    /// The session's partitions to read (none when the session closed).
    reads: Vec<TopicPartition>,
    /// Partitions answered with an error instead (unknown topic id, not authorized).
    refused: Vec<(TopicPartition, ErrorCode)>,
    /// The session closed: the partitions whose records the member gives back.
    closed: Option<Vec<TopicPartition>>,
}

fn prepare(
    broker: &Broker,
    request: &ShareFetchRequest,
    lane: u16,
    gate: &Gate<'_>,
) -> Result<Prepared, ShareFetchResponse> {
    let group = request.group_id.clone().unwrap_or_default();
    let member = request.member_id.clone().unwrap_or_default();
    if member.is_empty() || member.len() > MEMBER_ID_BYTES_MAX {
        return Err(refuse(ErrorCode::InvalidRequest, "Invalid member id"));
    }
    // The same topic may appear more than once (librdkafka lists added partitions and
    // acknowledged ones apart): merged here.
    let mut add = Vec::new();
    let mut acks: Acks = BTreeMap::new();
    for topic in &request.topics {
        for p in &topic.partitions {
            let tp = TopicPartition {
                topic_id: topic.topic_id,
                partition: p.partition_index,
            };
            if !add.contains(&tp) {
                add.push(tp);
            }
            if p.acknowledgement_batches.is_empty() {
                continue;
            }
            let batches = p.acknowledgement_batches.iter();
            add_acks(
                &mut acks,
                tp,
                batches.map(|b| (b.first_offset, b.last_offset, &b.acknowledge_types[..])),
            );
        }
    }
    if request.share_session_epoch == INITIAL_EPOCH && !acks.is_empty() {
        return Err(refuse(
            ErrorCode::InvalidRequest,
            "Acknowledge data present on initial share fetch request",
        ));
    }
    let forget: Vec<TopicPartition> = request
        .forgotten_topics_data
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(|p| TopicPartition {
                topic_id: t.topic_id,
                partition: *p,
            })
        })
        .collect();
    let context = broker
        .share_sessions
        .fetch(
            (&group, &member, lane),
            request.share_session_epoch,
            &add,
            &forget,
        )
        .map_err(|code| refuse(code, format!("share session of member {member}: {code:?}")))?;
    let (mut reads, closed) = match context {
        Context::Fetch(partitions) => (partitions, None),
        Context::Final(partitions) => (Vec::new(), Some(partitions)),
        Context::Acknowledge => (Vec::new(), Some(Vec::new())),
    };
    // Topic ids this agent does not know, and topics the client may not read.
    let names: BTreeMap<uuid::Uuid, Option<String>> = broker.metadata.read(|s| {
        reads
            .iter()
            .chain(acks.keys())
            .map(|tp| {
                (
                    tp.topic_id,
                    s.topic_by_id(&tp.topic_id).map(|t| t.name.clone()),
                )
            })
            .collect()
    });
    let mut refused = Vec::new();
    let verdict = |tp: &TopicPartition| match names.get(&tp.topic_id) {
        Some(Some(name)) if !gate.enforced() || gate.allowed(Acl::TOPIC_READ, name) => None,
        Some(Some(_)) => Some(ErrorCode::TopicAuthorizationFailed),
        _ => Some(ErrorCode::UnknownTopicId),
    };
    reads.retain(|tp| match verdict(tp) {
        None => true,
        Some(code) => {
            refused.push((*tp, code));
            false
        }
    });
    for (tp, ack) in acks.iter_mut() {
        if let Some(code) = verdict(tp) {
            *ack = Err(match code {
                ErrorCode::TopicAuthorizationFailed => AckError::InvalidRecordState,
                _ => AckError::UnknownPartition,
            });
            if !refused.iter().any(|(r, _)| r == tp) {
                refused.push((*tp, code));
            }
        }
    }
    // Rotated by the session's epoch, so one partition does not always take the budget.
    if !reads.is_empty() {
        let turn = request.share_session_epoch.unsigned_abs() as usize % reads.len();
        reads.rotate_left(turn);
    }
    Ok(Prepared {
        group,
        member,
        acks,
        reads,
        refused,
        closed,
    })
}

/// One partition's answer as it builds up.
#[derive(Default)]
struct Answer {
    data: Option<PartitionData>,
}

impl Answer {
    fn data(&mut self, partition: i32) -> &mut PartitionData {
        self.data.get_or_insert_with(|| PartitionData {
            partition_index: partition,
            current_leader: LeaderIdAndEpoch {
                leader_id: -1,
                leader_epoch: -1,
                ..Default::default()
            },
            // librdkafka refuses a null record set: empty, never null.
            records: Some(Default::default()),
            ..Default::default()
        })
    }
}

async fn serve(
    broker: &Broker,
    request: &ShareFetchRequest,
    prepared: Prepared,
) -> ShareFetchResponse {
    let Prepared {
        group,
        member,
        acks,
        reads,
        refused,
        closed,
    } = prepared;
    let (config, rules) = group_settings(broker, &group);
    let mut answers: BTreeMap<TopicPartition, Answer> = BTreeMap::new();
    for (tp, code) in &refused {
        let data = answers.entry(*tp).or_default().data(tp.partition);
        data.error_code = code.code();
    }
    // Acknowledgements refused before the state sees them.
    let mut pending_acks = BTreeMap::new();
    for (tp, ack) in acks {
        match ack {
            Ok(batches) => {
                pending_acks.insert(tp, batches);
            }
            Err(e) => {
                let (code, message) = ack_error_code(e);
                let data = answers.entry(tp).or_default().data(tp.partition);
                data.acknowledge_error_code = code.code();
                data.acknowledge_error_message = Some(message);
            }
        }
    }
    let fetching = closed.is_none() && request.max_records > 0 && request.max_bytes > 0;
    let wait = Duration::from_millis(request.max_wait_ms.max(0) as u64).min(MAX_WAIT_CAP);
    let deadline = broker.clock.now() + wait;
    let mut signals =
        broker
            .metadata
            .partition_signals()
            .listen(if fetching { &reads[..] } else { &[] });
    let budget_bytes = (request.max_bytes.max(0) as usize).min(broker.config.fetch_bytes_max);
    let mut lost_races = 0;
    let mut last_look = false;
    loop {
        signals.mark_seen();
        // Read every partition of the session (the byte budget shared in order).
        let mut offered: Vec<(TopicPartition, PartitionRead)> = Vec::new();
        if fetching {
            let mut left = budget_bytes;
            for tp in &reads {
                if left == 0 && !offered.is_empty() {
                    break;
                }
                let max_records = request.max_records.max(0) as u32;
                match read_partition(broker, &group, tp, &config, left, max_records).await {
                    Ok(Some(read)) => {
                        left = left.saturating_sub(read.read_bytes());
                        offered.push((*tp, read));
                    }
                    Ok(None) => {}
                    Err(failure) => {
                        let code = match failure {
                            ReadFailure::UnknownTopicId => ErrorCode::UnknownTopicId,
                            ReadFailure::Storage => ErrorCode::KafkaStorageError,
                        };
                        answers
                            .entry(*tp)
                            .or_default()
                            .data(tp.partition)
                            .error_code = code.code();
                    }
                }
            }
        }
        let mut partitions: Vec<RoundPartition> = Vec::new();
        for (tp, batches) in std::mem::take(&mut pending_acks) {
            partitions.push(RoundPartition {
                topic_id: tp.topic_id,
                partition: tp.partition,
                acks: batches,
                read: None,
                start_if_new: 0,
            });
        }
        for (tp, read) in &offered {
            match partitions
                .iter_mut()
                .find(|p| p.topic_id == tp.topic_id && p.partition == tp.partition)
            {
                Some(p) => {
                    p.read = Some(read.read.clone());
                    p.start_if_new = read.start_if_new;
                }
                None => partitions.push(RoundPartition {
                    topic_id: tp.topic_id,
                    partition: tp.partition,
                    acks: Vec::new(),
                    read: Some(read.read.clone()),
                    start_if_new: read.start_if_new,
                }),
            }
        }
        let max_records = request.max_records.max(0) as u32;
        let mut acquired_any = false;
        if !partitions.is_empty() {
            let keys: Vec<TopicPartition> = partitions
                .iter()
                .map(|p| TopicPartition {
                    topic_id: p.topic_id,
                    partition: p.partition,
                })
                .collect();
            let had_acks: Vec<bool> = partitions.iter().map(|p| !p.acks.is_empty()).collect();
            match super::share::apply_round(
                broker,
                &group,
                &member,
                partitions,
                max_records,
                &config,
                rules,
            )
            .await
            {
                Ok(results) => {
                    for ((tp, result), had_ack) in keys.iter().zip(results).zip(had_acks) {
                        let answer = answers.entry(*tp).or_default();
                        if let Some(Err(e)) = result.acked {
                            let (code, message) = ack_error_code(e);
                            let data = answer.data(tp.partition);
                            data.acknowledge_error_code = code.code();
                            data.acknowledge_error_message = Some(message);
                        } else if had_ack {
                            answer.data(tp.partition);
                        }
                        if result.unknown {
                            answer.data(tp.partition).error_code =
                                ErrorCode::UnknownTopicOrPartition.code();
                        }
                        if result.acquired.is_empty() {
                            continue;
                        }
                        acquired_any = true;
                        let read = offered.iter().find(|(o, _)| o == tp).map(|(_, r)| r);
                        let data = answer.data(tp.partition);
                        if let Some(read) = read {
                            data.records = Some(read.records_for(&result.acquired));
                        }
                        data.acquired_records = result
                            .acquired
                            .iter()
                            .map(|a| AcquiredRecords {
                                first_offset: a.first,
                                last_offset: a.last,
                                delivery_count: a.deliveries as i16,
                                ..Default::default()
                            })
                            .collect();
                    }
                }
                Err(()) => {
                    for (tp, had_ack) in keys.iter().zip(had_acks) {
                        let data = answers.entry(*tp).or_default().data(tp.partition);
                        if had_ack {
                            data.acknowledge_error_code = ErrorCode::CoordinatorNotAvailable.code();
                        }
                        if offered.iter().any(|(o, _)| o == tp) {
                            data.error_code = ErrorCode::KafkaStorageError.code();
                        }
                    }
                    break;
                }
            }
        }
        // Errors are answered at once, as Kafka's delayed share fetch completes on them.
        let has_errors = answers
            .values()
            .filter_map(|a| a.data.as_ref())
            .any(|d| d.error_code != 0);
        if acquired_any || !fetching || last_look || has_errors {
            break;
        }
        if offered.iter().any(|(_, r)| r.has_records()) && lost_races < LOST_RACES_MAX {
            // Records were there but another member took them first: read again past them.
            lost_races += 1;
            continue;
        }
        if broker.clock.now() >= deadline {
            break;
        }
        if broker
            .clock
            .timeout_at(deadline, signals.raised())
            .await
            .is_err()
        {
            // One last look at the deadline, as Kafka's delayed fetch takes.
            last_look = true;
        }
    }
    if let Some(partitions) = closed {
        release_member(broker, &group, &member, partitions).await;
    }
    let mut responses: Vec<ShareFetchableTopicResponse> = Vec::new();
    for (tp, answer) in answers {
        let Some(data) = answer.data else { continue };
        match responses.last_mut() {
            Some(t) if t.topic_id == tp.topic_id => t.partitions.push(data),
            _ => responses.push(ShareFetchableTopicResponse {
                topic_id: tp.topic_id,
                partitions: vec![data],
                ..Default::default()
            }),
        }
    }
    ShareFetchResponse {
        acquisition_lock_timeout_ms: config.record_lock_duration_ms.clamp(0, i32::MAX as i64)
            as i32,
        responses,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use crate::protocol::messages::share_acknowledge_request::{
        AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckWire,
    };
    use crate::protocol::messages::share_fetch_request::{FetchPartition, FetchTopic};
    use crate::protocol::messages::{ProduceRequest, ShareAcknowledgeRequest};
    use crate::protocol::record_batch::build_test_batch;
    use crate::server::handlers::produce::Produce;
    use crate::server::handlers::share_acknowledge::ShareAcknowledge;
    use crate::server::handlers::testing::TestNode;

    fn fetch(topic: uuid::Uuid, member: &str, epoch: i32) -> ShareFetchRequest {
        ShareFetchRequest {
            group_id: Some("queue".into()),
            member_id: Some(member.into()),
            share_session_epoch: epoch,
            max_wait_ms: 0,
            min_bytes: 1,
            max_bytes: 1 << 20,
            max_records: 500,
            batch_size: 500,
            topics: vec![FetchTopic {
                topic_id: topic,
                partitions: vec![FetchPartition {
                    partition_index: 0,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn acknowledge(
        topic: uuid::Uuid,
        member: &str,
        epoch: i32,
        batches: &[(i64, i64, i8)],
    ) -> ShareAcknowledgeRequest {
        ShareAcknowledgeRequest {
            group_id: Some("queue".into()),
            member_id: Some(member.into()),
            share_session_epoch: epoch,
            topics: vec![AcknowledgeTopic {
                topic_id: topic,
                partitions: vec![AcknowledgePartition {
                    partition_index: 0,
                    acknowledgement_batches: batches
                        .iter()
                        .map(|&(first, last, ty)| AckWire {
                            first_offset: first,
                            last_offset: last,
                            acknowledge_types: vec![ty],
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn acquired(response: &ShareFetchResponse) -> Vec<(i64, i64, i16)> {
        response
            .responses
            .iter()
            .flat_map(|t| &t.partitions)
            .flat_map(|p| &p.acquired_records)
            .map(|a| (a.first_offset, a.last_offset, a.delivery_count))
            .collect()
    }

    fn ack_codes(response: &crate::protocol::messages::ShareAcknowledgeResponse) -> Vec<i16> {
        response
            .responses
            .iter()
            .flat_map(|t| &t.partitions)
            .map(|p| p.error_code)
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_go_to_one_member_and_come_back_when_released() {
        let node = TestNode::start().await;
        let topic = node.create_topic("queue", 1).await;
        // The group starts at the end (share.auto.offset.reset=latest): its first fetch
        // starts it there, before anything is written.
        let first = node.call::<ShareFetch>(&fetch(topic, "a", 0), 1).await;
        assert_eq!(first.error_code, 0, "{first:?}");
        assert!(acquired(&first).is_empty());
        let produce = ProduceRequest {
            acks: -1,
            timeout_ms: 10_000,
            topic_data: vec![TopicProduceData {
                name: "queue".into(),
                partition_data: vec![PartitionProduceData {
                    index: 0,
                    records: Some(build_test_batch(-1, -1, -1, 10, 10).into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let produced = node.call::<Produce>(&produce, 9).await;
        assert_eq!(produced.responses[0].partition_responses[0].error_code, 0);

        let got = node.call::<ShareFetch>(&fetch(topic, "a", 1), 1).await;
        assert_eq!(acquired(&got), vec![(0, 9, 1)], "{got:?}");
        assert!(
            got.responses[0].partitions[0]
                .records
                .as_ref()
                .is_some_and(|r| !r.is_empty())
        );
        // Another member gets nothing while "a" holds them.
        let other = node.call::<ShareFetch>(&fetch(topic, "b", 0), 1).await;
        assert!(acquired(&other).is_empty(), "{other:?}");

        // "a" releases 0-4 and accepts 5-9; "b" then gets 0-4, delivered a second time.
        let acked = node
            .call::<ShareAcknowledge>(&acknowledge(topic, "a", 2, &[(0, 4, 2), (5, 9, 1)]), 1)
            .await;
        assert_eq!(ack_codes(&acked), vec![0], "{acked:?}");
        let again = node.call::<ShareFetch>(&fetch(topic, "b", 1), 1).await;
        assert_eq!(acquired(&again), vec![(0, 4, 2)], "{again:?}");
        // "a" no longer holds them.
        let stale = node
            .call::<ShareAcknowledge>(&acknowledge(topic, "a", 3, &[(0, 4, 1)]), 1)
            .await;
        assert_eq!(
            ack_codes(&stale),
            vec![ErrorCode::InvalidRecordState.code()]
        );
        // "b" closes its session without acknowledging: the records go back.
        let closed = node
            .call::<ShareAcknowledge>(&acknowledge(topic, "b", -1, &[]), 1)
            .await;
        assert_eq!(closed.error_code, 0, "{closed:?}");
        let third = node.call::<ShareFetch>(&fetch(topic, "c", 0), 1).await;
        assert_eq!(acquired(&third), vec![(0, 4, 3)], "{third:?}");
        node.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn session_epochs_follow_kafkas_rules() {
        let node = TestNode::start().await;
        let topic = node.create_topic("sessions", 1).await;
        let code = |r: ShareFetchResponse| ErrorCode::from_code(r.error_code);
        // No session yet.
        let r = node.call::<ShareFetch>(&fetch(topic, "m", 1), 1).await;
        assert_eq!(code(r), Some(ErrorCode::ShareSessionNotFound));
        let r = node.call::<ShareFetch>(&fetch(topic, "m", 0), 1).await;
        assert_eq!(code(r), Some(ErrorCode::None));
        // The next request must carry 1.
        let r = node.call::<ShareFetch>(&fetch(topic, "m", 3), 1).await;
        assert_eq!(code(r), Some(ErrorCode::InvalidShareSessionEpoch));
        // Acknowledgements cannot open a session.
        let ack = node
            .call::<ShareAcknowledge>(&acknowledge(topic, "m", 0, &[]), 1)
            .await;
        assert_eq!(
            ErrorCode::from_code(ack.error_code),
            Some(ErrorCode::InvalidShareSessionEpoch)
        );
        // Nor carry acknowledgements on the opening fetch.
        let mut opening = fetch(topic, "n", 0);
        opening.topics[0].partitions[0].acknowledgement_batches = vec![
            crate::protocol::messages::share_fetch_request::AcknowledgementBatch {
                first_offset: 0,
                last_offset: 0,
                acknowledge_types: vec![1],
                ..Default::default()
            },
        ];
        let r = node.call::<ShareFetch>(&opening, 1).await;
        assert_eq!(code(r), Some(ErrorCode::InvalidRequest));
        // A member id Kafka refuses.
        let r = node
            .call::<ShareFetch>(&fetch(topic, &"x".repeat(37), 0), 1)
            .await;
        assert_eq!(code(r), Some(ErrorCode::InvalidRequest));
        node.stop().await;
    }
}
