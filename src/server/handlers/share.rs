//! What ShareFetch and ShareAcknowledge share (KIP-932): a member's acknowledgements as the
//! state takes them, reading a share group's partitions from the log, and the round that
//! applies acknowledgements and acquires records in one replicated write
//! (`state::ShareRound`).

use crate::fetch::planner::{FetchPlan, plan_fetch};
use crate::fetch::reader::{ReadBatch, read_batches};
use crate::fetch::runs::{locate, runs_for_fetch};
use crate::groups::group_config::{AutoOffsetReset, ShareGroupConfig};
use crate::ids::{Offset, TopicPartition};
use crate::metadata::state::share::{AckBatch, AckError, AckType, Read, ShareRules};
use crate::metadata::state::{ReleaseShareMember, RoundPartition, RoundResult, ShareRound};
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::spliced::Records;
use crate::server::authorize::{Acl, Authorized, Gate};
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::telemetry::ErrorChain;
use bytes::Bytes;
use std::collections::BTreeMap;

/// Kafka's bound on share member ids (4.2: not empty, at most 36 characters).
pub const MEMBER_ID_BYTES_MAX: usize = 36;

/// ShareFetch's and ShareAcknowledge's authorization: READ on the group first, else the whole
/// request is refused (Kafka's order); topics are checked per partition by the handlers, since
/// a session's partitions outlive the request naming them.
pub fn authorize_group<Q: ErrorResponse>(
    gate: &Gate<'_>,
    group: Option<&str>,
    request: &Q,
    version: i16,
) -> Authorized<Q::Response> {
    Authorized::run_or_refuse(
        gate.allowed(Acl::GROUP_READ, group.unwrap_or_default()),
        request,
        version,
        ErrorCode::GroupAuthorizationFailed,
    )
}

/// Whether a share group's offsets may be altered or deleted (Kafka's
/// `validateOffsetsAlterable`): its id names no group of another kind and it has no members.
/// `Ok(false)`: no share group of that id exists (neither members nor records' state).
pub fn offsets_alterable(broker: &Broker, group: &str) -> Result<bool, (ErrorCode, String)> {
    group_refusal(broker, group, true).map_or(Ok(()), Err)?;
    if broker.groups.is_consumer_group(group) || broker.groups.is_classic_group(group) {
        return Err((
            ErrorCode::GroupIdNotFound,
            format!("Group {group} is not a share group."),
        ));
    }
    if broker.groups.has_members(group) {
        return Err((ErrorCode::NonEmptyGroup, "The group is not empty.".into()));
    }
    let has_records = broker.metadata.read(|s| s.share().has_group(group));
    Ok(has_records || broker.groups.is_share_group(group))
}

/// Why a request about a share group is refused before anything is looked up, in Kafka's
/// order: an empty id, then the caller not `allowed` to describe it, then a group this agent
/// does not coordinate.
pub fn group_refusal(broker: &Broker, group: &str, allowed: bool) -> Option<(ErrorCode, String)> {
    if group.is_empty() {
        return Some((ErrorCode::InvalidGroupId, "the group id is empty".into()));
    }
    if !allowed {
        let code = ErrorCode::GroupAuthorizationFailed;
        return Some((code, format!("not authorized to describe group {group}")));
    }
    if !broker.coordinates(group) {
        let message = format!("this agent does not coordinate group {group}");
        return Some((ErrorCode::NotCoordinator, message));
    }
    None
}

/// A request's acknowledgements by partition; `Err` refuses all of a partition's.
pub type Acks = BTreeMap<TopicPartition, Result<Vec<AckBatch>, AckError>>;

/// Adds a partition's acknowledgement batches, `(first, last, types)` as sent, to `acks` (a
/// partition may be named more than once). An unknown type refuses the partition's
/// acknowledgements with INVALID_REQUEST, as Kafka's `validateAcknowledgementBatches` does
/// (RENEW is a version 2 type, not served).
pub fn add_acks<'a>(
    acks: &mut Acks,
    tp: TopicPartition,
    batches: impl Iterator<Item = (i64, i64, &'a [i8])>,
) {
    let slot = acks.entry(tp).or_insert(Ok(Vec::new()));
    for (first, last, types) in batches {
        let Ok(all) = slot else { return };
        match types.iter().map(|t| AckType::from_code(*t)).collect() {
            Some(types) => all.push(AckBatch { first, last, types }),
            None => *slot = Err(AckError::InvalidRequest),
        }
    }
}

pub fn ack_error_code(error: AckError) -> (ErrorCode, String) {
    match error {
        AckError::InvalidRecordState => (
            ErrorCode::InvalidRecordState,
            "records not acquired by this member (released, lock expired, or another's)".into(),
        ),
        AckError::InvalidRequest => (
            ErrorCode::InvalidRequest,
            "invalid acknowledgement batches".into(),
        ),
        AckError::UnknownPartition => (
            ErrorCode::UnknownTopicOrPartition,
            "the partition does not exist".into(),
        ),
    }
}

/// The group's settings for its reads, from its configs over the broker's.
pub fn group_settings(broker: &Broker, group: &str) -> (ShareGroupConfig, ShareRules) {
    let config = broker
        .metadata
        .read(|s| ShareGroupConfig::of(s.group_configs(group), &broker.config.share));
    let rules = ShareRules {
        delivery_count_limit: broker.config.share.delivery_count_limit,
        record_locks_max: broker.config.share.partition_max_record_locks,
    };
    (config, rules)
}

/// One partition's read for a share group: what to offer the state, and the bytes to answer
/// with once the state says what was acquired.
pub struct PartitionRead {
    pub read: Read,
    pub start_if_new: i64,
    bytes: Bytes,
    batches: Vec<ReadBatch>,
}

impl PartitionRead {
    /// The bytes the read holds (what it takes of the request's byte budget).
    pub fn read_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the read found records to hand out (not only a start for a new group).
    pub fn has_records(&self) -> bool {
        !self.read.batches.is_empty()
    }

    /// The read's batches that hold acquired records, whole (the client keeps only the
    /// acquired offsets, as Kafka's slicing at batch bounds expects).
    pub fn records_for(&self, acquired: &[crate::metadata::state::share::Acquired]) -> Records {
        let (Some(first), Some(last)) = (
            acquired.iter().map(|a| a.first).min(),
            acquired.iter().map(|a| a.last).max(),
        ) else {
            return Records::default();
        };
        let kept: Vec<&ReadBatch> = self
            .batches
            .iter()
            .filter(|b| b.last >= first && b.first <= last)
            .collect();
        match (kept.first(), kept.last()) {
            (Some(a), Some(b)) => Records::from(self.bytes.slice(a.bytes.start..b.bytes.end)),
            _ => Records::default(),
        }
    }
}

/// Why a partition could not be read.
pub enum ReadFailure {
    UnknownTopicId,
    Storage,
}

/// Reads a partition for a share group from where its next records to hand out begin, up to
/// `budget` bytes (at least one batch). `None`: nothing to read now.
pub async fn read_partition(
    broker: &Broker,
    group: &str,
    tp: &TopicPartition,
    config: &ShareGroupConfig,
    budget: usize,
    max_records: u32,
) -> Result<Option<PartitionRead>, ReadFailure> {
    let window_max = broker.config.share.partition_max_record_locks;
    let Some((log_start, high_watermark)) = broker.metadata.read(|s| {
        s.partition(tp)
            .map(|p| (p.log_start_offset.0, p.high_watermark.0))
    }) else {
        return Err(ReadFailure::UnknownTopicId);
    };
    let start_if_new = match config.auto_offset_reset {
        AutoOffsetReset::Earliest => log_start,
        AutoOffsetReset::Latest => high_watermark,
        AutoOffsetReset::ByDuration(ms) => {
            // By the state's time, as every agent reads it.
            let target = broker.metadata.read(|s| s.now_ms()).saturating_sub(ms);
            super::list_offsets::first_offset_at_or_after(broker, tp, target)
                .await
                .map_or(high_watermark, |o| o.0)
        }
    };
    // Planned under the read lock: only the runs are copied.
    let planned = broker.metadata.read(|s| {
        let part = s.partition(tp)?;
        let share = s.share().get(group, &tp.topic_id, tp.partition);
        if share.is_some_and(|p| !p.can_acquire()) {
            return Some(None);
        }
        let from = share
            .map_or(start_if_new, |p| p.next_fetch_offset())
            .max(part.log_start_offset.0);
        let lso = s.last_stable_offset(tp).unwrap_or(part.high_watermark);
        let stable = if config.read_committed {
            lso
        } else {
            part.high_watermark
        };
        let aborted = if config.read_committed {
            s.transactions().aborted_between(tp, Offset(from), stable)
        } else {
            Vec::new()
        };
        let entries = match plan_fetch(part, Offset(from), budget as u64, stable) {
            FetchPlan::Read(entries) => entries
                .iter()
                .map(|e| locate(s.objects(), e))
                .collect::<Option<Vec<_>>>()?,
            // Nothing to read yet: a group that has not started on the partition starts
            // now, where its reset says (Kafka initializes a share-partition at its first
            // fetch), so records written from here on are its to read.
            FetchPlan::Empty | FetchPlan::OutOfRange if share.is_none() => {
                return Some(Some((from, stable, aborted, Vec::new())));
            }
            FetchPlan::Empty | FetchPlan::OutOfRange => return Some(None),
        };
        Some(Some((from, stable, aborted, entries)))
    });
    let Some(Some((from, stable, aborted, entries))) = planned else {
        return match planned {
            None => Err(ReadFailure::Storage),
            Some(_) => Ok(None),
        };
    };
    if entries.is_empty() {
        return Ok(Some(PartitionRead {
            read: Read {
                from,
                to: from - 1,
                batches: Vec::new(),
            },
            start_if_new,
            bytes: Bytes::new(),
            batches: Vec::new(),
        }));
    }
    let runs = runs_for_fetch(
        &broker.segment_indexes,
        &broker.read_cache,
        &entries,
        Offset(from),
        budget as u64,
    )
    .await
    .map_err(|e| {
        tracing::warn!(error = %ErrorChain(&e), ?tp, "share fetch planning failed");
        ReadFailure::Storage
    })?;
    let got = read_batches(
        &broker.read_cache,
        &runs,
        Offset(from),
        stable,
        budget.max(1),
        LEADER_EPOCH,
    )
    .await
    .map_err(|e| {
        tracing::warn!(error = %ErrorChain(&e), ?tp, "share fetch read failed");
        ReadFailure::Storage
    })?;
    let Some(to) = got.batches.last().map(|b| b.last) else {
        return Ok(None);
    };
    // The records to hand out: not control batches, not aborted transactions' batches when
    // the group reads committed data only.
    let is_aborted = |b: &ReadBatch| {
        b.transactional
            && aborted.iter().any(|a| {
                a.producer_id.0 == b.producer_id
                    && a.first_offset.0 <= b.first
                    && b.first < a.last_offset.0
            })
    };
    let handed_out: Vec<(i64, i64)> = got
        .batches
        .iter()
        .filter(|b| !b.control && !is_aborted(b))
        .map(|b| (b.first, b.last))
        .collect();
    // What the state is offered stops where the member could take no more (its records
    // budget) or the group's window could not widen: a read of many small batches does not
    // become a large replicated command.
    let (handed_out, to) = offered(handed_out, to, from, max_records, window_max);
    Ok(Some(PartitionRead {
        read: Read {
            from,
            to,
            batches: handed_out,
        },
        start_if_new,
        bytes: got.bytes.to_bytes(),
        batches: got.batches,
    }))
}

/// The batches of a read worth offering the state: up to the one that reaches `max_records`
/// records, and none starting `window_max` records past `from`; the read's end moves back
/// with them.
fn offered(
    batches: Vec<(i64, i64)>,
    to: i64,
    from: i64,
    max_records: u32,
    window_max: u32,
) -> (Vec<(i64, i64)>, i64) {
    let mut kept = Vec::new();
    let mut records = 0i64;
    for (first, last) in batches {
        if records >= i64::from(max_records) || first - from >= i64::from(window_max) {
            let end = kept.last().map_or(from - 1, |(_, l): &(i64, i64)| *l);
            return (kept, end);
        }
        records += last - first.max(from) + 1;
        kept.push((first, last));
    }
    (kept, to)
}

/// Applies a member's acknowledgements and acquisitions in one write. `Err`: the write did
/// not complete (the quorum is unavailable).
pub async fn apply_round(
    broker: &Broker,
    group: &str,
    member: &str,
    partitions: Vec<RoundPartition>,
    max_records: u32,
    config: &ShareGroupConfig,
    rules: ShareRules,
) -> Result<Vec<RoundResult>, ()> {
    if partitions.is_empty() {
        return Ok(Vec::new());
    }
    let round = ShareRound {
        group: group.to_string(),
        member: member.to_string(),
        partitions,
        max_records,
        lock_ms: config.record_lock_duration_ms,
        rules,
    };
    // What each partition asked, for the debug log of the round (`floe::server::handlers::share`).
    let asked: Vec<String> = if tracing::enabled!(tracing::Level::DEBUG) {
        round
            .partitions
            .iter()
            .map(|p| {
                let acks: Vec<(i64, i64)> = p.acks.iter().map(|a| (a.first, a.last)).collect();
                let read = p.read.as_ref().map(|r| (r.from, r.to));
                format!("partition {} acks {acks:?} read {read:?}", p.partition)
            })
            .collect()
    } else {
        Vec::new()
    };
    let results = broker.metadata.write(round).await.map_err(|e| {
        tracing::warn!(error = %ErrorChain(&e), group, "share round not written");
    })?;
    for (asked, result) in asked.iter().zip(&results) {
        tracing::debug!(
            group,
            member,
            asked,
            acked = ?result.acked,
            acquired = ?result.acquired,
            "share round"
        );
    }
    Ok(results)
}

/// Gives back the records a member holds in a closed share session's partitions.
pub async fn release_member(
    broker: &Broker,
    group: &str,
    member: &str,
    partitions: Vec<TopicPartition>,
) {
    if partitions.is_empty() {
        return;
    }
    let command = ReleaseShareMember {
        group: group.to_string(),
        member: member.to_string(),
        partitions,
    };
    if let Err(e) = broker.metadata.write(command).await {
        tracing::warn!(error = %ErrorChain(&e), group, member, "share member's records not released");
    }
}

/// A round's partitions for acknowledgements alone.
pub fn ack_partitions(acks: BTreeMap<TopicPartition, Vec<AckBatch>>) -> Vec<RoundPartition> {
    acks.into_iter()
        .map(|(tp, acks)| RoundPartition {
            topic_id: tp.topic_id,
            partition: tp.partition,
            acks,
            read: None,
            start_if_new: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::offered;

    #[test]
    fn a_read_is_offered_up_to_the_records_a_member_may_take() {
        let batches = vec![(0, 9), (10, 19), (20, 29), (30, 39)];
        // 15 records: the second batch reaches them and is offered whole.
        assert_eq!(
            offered(batches.clone(), 41, 0, 15, 2_000),
            (vec![(0, 9), (10, 19)], 19)
        );
        // Everything fits: the read's own end (a marker after the last batch) stays.
        assert_eq!(
            offered(batches.clone(), 41, 0, 500, 2_000),
            (batches.clone(), 41)
        );
        // The window stops at 20 records past the start of the read.
        assert_eq!(
            offered(batches.clone(), 41, 0, 500, 20),
            (vec![(0, 9), (10, 19)], 19)
        );
        // A read starting inside a batch counts from where it starts.
        assert_eq!(
            offered(batches, 41, 5, 6, 2_000),
            (vec![(0, 9), (10, 19)], 19)
        );
    }
}
