//! Share groups' partition states (KIP-932): for each (share group, partition), which records
//! the group has handed out, to which member, until when, how often, and what is done with.
//!
//! A share-partition tracks a window of the log, `[start, end)`: below `start` every record is
//! done with (acknowledged, archived, or before the group started reading); from `end` on no
//! record was ever handed out. Inside the window every offset has a state, held as spans of
//! consecutive offsets that share it (Kafka's in-flight batches; its persister merges them the
//! same way), so the state grows with the window's fragments, never per record:
//!
//! ```text
//! Available ─acquire─► Acquired ─accept──────────► Acknowledged  (terminal)
//!     ▲                   │      ─reject, gap─────► Archived      (terminal)
//!     └── release, lock ──┘      ─release at the delivery limit ─► Archived
//!         expiry, member gone
//! ```
//!
//! `start` moves past a contiguous prefix of terminal records. The window is at most the
//! group's `record_locks_max` records wide (Kafka's group.share.partition.max.record.locks),
//! which bounds what one share-partition holds.
//!
//! Floe keeps acquisitions here, in the replicated state, where Kafka keeps them in the
//! partition leader's memory: floe has no partition leader (any agent serves any partition),
//! and one record must go to one member at a time whichever agents the members reach. Locks
//! end at a time of the state's clock ("One clock decides").

use imbl::OrdMap;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The most share-partitions the state holds (a new one past it is refused).
pub const SHARE_PARTITIONS_MAX: usize = 100_000;
/// Kafka's upper bound of group.share.partition.max.record.locks: the widest window.
pub const RECORD_LOCKS_MAX: u32 = 10_000;
/// Kafka's upper bound of group.share.delivery.count.limit.
pub const DELIVERY_COUNT_LIMIT_MAX: u16 = 10;
/// The longest acquisition lock (Kafka's upper bound of group.share.record.lock.duration.ms).
pub const LOCK_MS_MAX: i64 = 3_600_000;

/// A record's state, with Kafka's ids (`RecordState`; ACQUIRED is never persisted by Kafka).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RecordState {
    Available,
    Acquired,
    Acknowledged,
    Archived,
}

impl RecordState {
    pub fn is_terminal(self) -> bool {
        matches!(self, RecordState::Acknowledged | RecordState::Archived)
    }
}

/// How a member acknowledges records (ShareFetch and ShareAcknowledge `AcknowledgeTypes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AckType {
    /// 0: offsets with no record (compacted away, or a control record).
    Gap,
    /// 1: processed.
    Accept,
    /// 2: give it back to be delivered again.
    Release,
    /// 3: unprocessable, never deliver again.
    Reject,
}

impl AckType {
    pub fn from_code(code: i8) -> Option<AckType> {
        Some(match code {
            0 => AckType::Gap,
            1 => AckType::Accept,
            2 => AckType::Release,
            3 => AckType::Reject,
            _ => return None,
        })
    }
}

/// What a read of the log found for a share group: it read `[from, to]`, and `batches`
/// (`(first, last)`, in order) are the records to hand out; the rest of the range holds none
/// (compacted away, transaction markers, aborted transactions for read_committed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Read {
    pub from: i64,
    pub to: i64,
    pub batches: Vec<(i64, i64)>,
}

/// Consecutive offsets in one state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// The last offset of the span (inclusive).
    pub last: i64,
    pub state: RecordState,
    /// How many times its records were acquired.
    pub deliveries: u16,
    /// The member holding them, while acquired.
    pub owner: Option<String>,
    /// While acquired: the state time the lock ends at.
    pub locked_until_ms: i64,
}

impl Span {
    fn same_as(&self, other: &Span) -> bool {
        self.state == other.state
            && self.deliveries == other.deliveries
            && self.owner == other.owner
            && self.locked_until_ms == other.locked_until_ms
    }
}

/// Records acquired by one request, as ShareFetch's `AcquiredRecords` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acquired {
    pub first: i64,
    pub last: i64,
    pub deliveries: u16,
}

/// One acknowledgement batch: a type for the whole range, or one per offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckBatch {
    pub first: i64,
    pub last: i64,
    pub types: Vec<AckType>,
}

/// Why acknowledgements of a partition were refused (all of them: a partition's batches are
/// applied together or not at all, as Kafka does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AckError {
    /// A record not acquired by this member (released, expired, another member's, done).
    InvalidRecordState,
    /// Malformed batches, or offsets the group never handed out.
    InvalidRequest,
    /// The group has no state for the partition.
    UnknownPartition,
}

/// What the group does with records when they come back, and how wide its window may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareRules {
    /// A record released or expired this many deliveries in is archived.
    pub delivery_count_limit: u16,
    /// The widest window, in records.
    pub record_locks_max: u32,
}

impl ShareRules {
    fn bounded(self) -> ShareRules {
        ShareRules {
            delivery_count_limit: self.delivery_count_limit.clamp(1, DELIVERY_COUNT_LIMIT_MAX),
            record_locks_max: self.record_locks_max.clamp(1, RECORD_LOCKS_MAX),
        }
    }
}

/// One (share group, partition)'s records: see the module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharePartition {
    pub start: i64,
    pub end: i64,
    /// The group's rules as its latest round gave them (lock expiry applies them at a tick).
    pub rules: ShareRules,
    /// Keyed by first offset; they cover `[start, end)` exactly, adjacent spans differ.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    spans: OrdMap<i64, Span>,
}

impl SharePartition {
    pub fn new(start: i64, rules: ShareRules) -> SharePartition {
        SharePartition {
            start,
            end: start,
            rules: rules.bounded(),
            spans: OrdMap::new(),
        }
    }

    pub fn spans(&self) -> impl Iterator<Item = (i64, &Span)> {
        self.spans.iter().map(|(first, span)| (*first, span))
    }

    /// Where the next read for this group starts: the first available record in the window,
    /// else the window's end.
    pub fn next_fetch_offset(&self) -> i64 {
        self.spans
            .iter()
            .find(|(_, s)| s.state == RecordState::Available)
            .map_or(self.end, |(first, _)| *first)
    }

    /// Whether a read could acquire anything: an available record in the window, or room to
    /// widen it.
    pub fn can_acquire(&self) -> bool {
        self.window() < i64::from(self.rules.record_locks_max)
            || self
                .spans
                .values()
                .any(|s| s.state == RecordState::Available)
    }

    /// How many records past the start are done with (acknowledged or archived): what a
    /// group's lag leaves out (Kafka's delivery-complete count, KIP-1226).
    pub fn done_in_window(&self) -> i64 {
        self.spans
            .iter()
            .filter(|(_, s)| s.state.is_terminal())
            .map(|(first, s)| s.last - first + 1)
            .sum()
    }

    fn window(&self) -> i64 {
        self.end - self.start
    }

    /// Makes `offset` (inside the window) the first offset of a span.
    fn split_at(&mut self, offset: i64) {
        if offset <= self.start || offset >= self.end {
            return;
        }
        let Some((first, span)) = self.spans.range(..=offset).next_back() else {
            return;
        };
        if *first == offset || span.last < offset {
            return;
        }
        let (first, mut head) = (*first, span.clone());
        let tail = Span {
            last: head.last,
            ..head.clone()
        };
        head.last = offset - 1;
        self.spans.insert(first, head);
        self.spans.insert(offset, tail);
    }

    /// The spans within `[first, last]` (clipped to the window), each split to lie inside.
    fn isolate(&mut self, first: i64, last: i64) -> Vec<i64> {
        let (first, last) = (first.max(self.start), last.min(self.end - 1));
        if first > last {
            return Vec::new();
        }
        self.split_at(first);
        self.split_at(last + 1);
        self.spans.range(first..=last).map(|(k, _)| *k).collect()
    }

    /// A record coming back (released, expired, its member gone): available again, or
    /// archived at the delivery limit.
    fn returned(span: &mut Span, rules: ShareRules) {
        span.state = if span.deliveries >= rules.delivery_count_limit {
            RecordState::Archived
        } else {
            RecordState::Available
        };
        span.owner = None;
        span.locked_until_ms = 0;
    }

    /// Moves the start past records the log no longer has (retention, DeleteRecords): those
    /// are done with, whatever their state.
    pub fn advance_to_log_start(&mut self, log_start: i64) {
        if log_start <= self.start {
            return;
        }
        self.split_at(log_start);
        let gone: Vec<i64> = self.spans.range(..log_start).map(|(k, _)| *k).collect();
        for first in gone {
            self.spans.remove(&first);
        }
        self.start = log_start;
        self.end = self.end.max(log_start);
    }

    /// Acquires for `member` what is available among the batches a read of the log found
    /// (`batches`, `(first, last)` in order, read from offset `from`), at most about `budget`
    /// records: released records in the window, new records a whole batch at a time (Kafka
    /// respects batch boundaries, so a budget is exceeded by the rest of a batch), while the
    /// window has room. Available offsets the read passed over hold no record any more
    /// (compacted away) and are archived, as Kafka archives stale batches. Returns the
    /// acquired ranges; `budget` is what is left.
    pub fn acquire(
        &mut self,
        member: &str,
        read: &Read,
        budget: &mut u32,
        locked_until_ms: i64,
    ) -> Vec<Acquired> {
        let rules = self.rules;
        let mut acquired = Vec::new();
        let batches = &read.batches[..];
        self.archive_passed_over(read.from, read.to, batches);
        let (Some(&(read_first, _)), Some(&(_, read_last))) = (batches.first(), batches.last())
        else {
            self.archive_gap_to(read.to, rules);
            self.settle();
            return acquired;
        };
        // Released records inside the window.
        let in_window: Vec<(i64, i64)> = self
            .spans
            .range(..=read_last)
            .filter(|(_, s)| s.state == RecordState::Available && s.last >= read_first)
            .map(|(first, s)| ((*first).max(read_first), s.last.min(read_last)))
            .collect();
        for (first, last) in in_window {
            if *budget == 0 {
                break;
            }
            let last = last.min(first.saturating_add(i64::from(*budget) - 1));
            for key in self.isolate(first, last) {
                if let Some(span) = self.spans.get_mut(&key) {
                    span.state = RecordState::Acquired;
                    span.deliveries = span.deliveries.saturating_add(1);
                    span.owner = Some(member.to_string());
                    span.locked_until_ms = locked_until_ms;
                    acquired.push(Acquired {
                        first: key,
                        last: span.last,
                        deliveries: span.deliveries,
                    });
                }
            }
            *budget = budget.saturating_sub(count(first, last));
        }
        // New records, a whole batch at a time, while the window has room.
        let mut all_taken = true;
        for &(first, last) in batches {
            if *budget == 0 || self.window() >= i64::from(rules.record_locks_max) {
                all_taken = last < self.end;
                if !all_taken {
                    break;
                }
                continue;
            }
            if last < self.end {
                continue;
            }
            if first > self.end {
                // Offsets the log does not hold (compacted away): nothing to deliver.
                let gap = Span {
                    last: first - 1,
                    state: RecordState::Archived,
                    deliveries: 0,
                    owner: None,
                    locked_until_ms: 0,
                };
                self.spans.insert(self.end, gap);
                self.end = first;
            }
            let from = self.end;
            let span = Span {
                last,
                state: RecordState::Acquired,
                deliveries: 1,
                owner: Some(member.to_string()),
                locked_until_ms,
            };
            self.spans.insert(from, span);
            self.end = last + 1;
            acquired.push(Acquired {
                first: from,
                last,
                deliveries: 1,
            });
            *budget = budget.saturating_sub(count(from, last));
        }
        if all_taken {
            self.archive_gap_to(read.to, rules);
        }
        self.settle();
        merge_acquired(acquired)
    }

    /// Past the last record handed out, offsets up to `to` hold no record to deliver: they
    /// join the window as archived, so the start can move past them.
    fn archive_gap_to(&mut self, to: i64, rules: ShareRules) {
        if to < self.end || self.window() >= i64::from(rules.record_locks_max) {
            return;
        }
        let gap = Span {
            last: to,
            state: RecordState::Archived,
            deliveries: 0,
            owner: None,
            locked_until_ms: 0,
        };
        self.spans.insert(self.end, gap);
        self.end = to + 1;
    }

    /// Archives the available offsets in `[from, to]` that no batch holds.
    fn archive_passed_over(&mut self, from: i64, read_last: i64, batches: &[(i64, i64)]) {
        // Batches are in offset order: the one that may hold `offset` is the last starting at
        // or before it.
        let holds = |offset: i64| {
            let at = batches.partition_point(|(first, _)| *first <= offset);
            at > 0 && batches[at - 1].1 >= offset
        };
        let available: Vec<(i64, i64)> = self
            .spans
            .range(..=read_last)
            .filter(|(_, s)| s.state == RecordState::Available && s.last >= from)
            .map(|(first, s)| ((*first).max(from), s.last.min(read_last)))
            .collect();
        for (first, last) in available {
            let mut offset = first;
            while offset <= last {
                if holds(offset) {
                    offset += 1;
                    continue;
                }
                let mut end = offset;
                while end < last && !holds(end + 1) {
                    end += 1;
                }
                for key in self.isolate(offset, end) {
                    if let Some(span) = self.spans.get_mut(&key) {
                        span.state = RecordState::Archived;
                    }
                }
                offset = end + 1;
            }
        }
    }

    /// Applies a member's acknowledgements, all or none. A batch wholly below the start is
    /// refused: its records were done with before it came (another member finished them once
    /// this member's lock ended), and answering it as applied would tell two members their
    /// acceptance counted. The part of a batch below the start is skipped, as Kafka skips it.
    pub fn acknowledge(&mut self, member: &str, batches: &[AckBatch]) -> Result<(), AckError> {
        let rules = self.rules;
        let mut next = self.clone();
        let mut previous_last = i64::MIN;
        for batch in batches {
            if batch.first > batch.last
                || batch.first <= previous_last
                || batch.types.is_empty()
                || (batch.types.len() > 1
                    && batch.types.len() as i64 != batch.last - batch.first + 1)
            {
                return Err(AckError::InvalidRequest);
            }
            previous_last = batch.last;
            if batch.last < next.start {
                // Kafka: "Batch record not found".
                return Err(AckError::InvalidRecordState);
            }
            if batch.last >= next.end {
                return Err(AckError::InvalidRequest);
            }
            // Runs of one type: the whole batch, or runs of equal per-offset types.
            let mut runs: Vec<(i64, i64, AckType)> = Vec::new();
            for (i, ty) in batch.types.iter().enumerate() {
                let offset = if batch.types.len() == 1 {
                    batch.first
                } else {
                    batch.first + i as i64
                };
                match runs.last_mut() {
                    Some((_, last, t)) if *t == *ty && *last + 1 == offset => *last = offset,
                    _ => runs.push((offset, offset, *ty)),
                }
            }
            if batch.types.len() == 1
                && let Some(run) = runs.first_mut()
            {
                run.1 = batch.last;
            }
            for (first, last, ty) in runs {
                for key in next.isolate(first, last) {
                    let Some(span) = next.spans.get_mut(&key) else {
                        continue;
                    };
                    if span.state != RecordState::Acquired || span.owner.as_deref() != Some(member)
                    {
                        return Err(AckError::InvalidRecordState);
                    }
                    match ty {
                        AckType::Accept => {
                            span.state = RecordState::Acknowledged;
                            span.owner = None;
                            span.locked_until_ms = 0;
                        }
                        AckType::Reject | AckType::Gap => {
                            span.state = RecordState::Archived;
                            span.owner = None;
                            span.locked_until_ms = 0;
                        }
                        AckType::Release => Self::returned(span, rules),
                    }
                }
            }
        }
        next.settle();
        *self = next;
        Ok(())
    }

    /// Gives back every record `member` holds; whether any became available.
    pub fn release_member(&mut self, member: &str) -> bool {
        self.give_back(|span| span.owner.as_deref() == Some(member))
    }

    /// Gives back every record whose lock ended by `now_ms`; whether any became available.
    pub fn expire_locks(&mut self, now_ms: i64) -> bool {
        self.give_back(|span| span.locked_until_ms <= now_ms)
    }

    /// The earliest lock end among acquired records.
    pub fn next_lock_end(&self) -> Option<i64> {
        self.spans
            .values()
            .filter(|s| s.state == RecordState::Acquired)
            .map(|s| s.locked_until_ms)
            .min()
    }

    fn give_back(&mut self, which: impl Fn(&Span) -> bool) -> bool {
        let rules = self.rules;
        let keys: Vec<i64> = self
            .spans
            .iter()
            .filter(|(_, s)| s.state == RecordState::Acquired && which(s))
            .map(|(k, _)| *k)
            .collect();
        let mut available = false;
        for key in &keys {
            if let Some(span) = self.spans.get_mut(key) {
                Self::returned(span, rules);
                available |= span.state == RecordState::Available;
            }
        }
        if !keys.is_empty() {
            self.settle();
        }
        available
    }

    /// Merges equal neighbours and moves the start past the terminal records that begin the
    /// window.
    fn settle(&mut self) {
        let mut merged: OrdMap<i64, Span> = OrdMap::new();
        let mut current: Option<(i64, Span)> = None;
        for (first, span) in self.spans.iter() {
            match &mut current {
                Some((_, c)) if c.same_as(span) && c.last + 1 == *first => c.last = span.last,
                _ => {
                    if let Some((k, s)) = current.take() {
                        merged.insert(k, s);
                    }
                    current = Some((*first, span.clone()));
                }
            }
        }
        if let Some((k, s)) = current {
            merged.insert(k, s);
        }
        while let Some((first, span)) = merged.get_min().map(|(k, s)| (*k, s.clone())) {
            if !span.state.is_terminal() {
                break;
            }
            merged.remove(&first);
            self.start = span.last + 1;
        }
        if merged.is_empty() {
            self.start = self.end;
        }
        self.spans = merged;
    }
}

/// The records in `[first, last]`, as a budget counts them.
fn count(first: i64, last: i64) -> u32 {
    u32::try_from(last - first + 1).unwrap_or(u32::MAX)
}

/// Adjacent ranges with the same delivery count become one (as Kafka's response lists them).
fn merge_acquired(ranges: Vec<Acquired>) -> Vec<Acquired> {
    let mut sorted = ranges;
    sorted.sort_by_key(|a| a.first);
    let mut out: Vec<Acquired> = Vec::with_capacity(sorted.len());
    for a in sorted {
        match out.last_mut() {
            Some(prev) if prev.last + 1 == a.first && prev.deliveries == a.deliveries => {
                prev.last = a.last
            }
            _ => out.push(a),
        }
    }
    out
}

/// A share-partition's key: the group, then the partition (so a group's are adjacent).
pub type ShareKey = (String, Uuid, i32);

/// Every share group's partition states.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharePartitions {
    #[serde(deserialize_with = "super::persistent::ord_map")]
    by_key: OrdMap<ShareKey, SharePartition>,
}

impl SharePartitions {
    pub fn get(&self, group: &str, topic_id: &Uuid, partition: i32) -> Option<&SharePartition> {
        self.by_key.get(&(group.to_string(), *topic_id, partition))
    }

    /// A group's share-partitions, in key order.
    pub fn of_group<'a>(
        &'a self,
        group: &'a str,
    ) -> impl Iterator<Item = (&'a ShareKey, &'a SharePartition)> + 'a {
        let from = (group.to_string(), Uuid::nil(), i32::MIN);
        self.by_key
            .range(from..)
            .take_while(move |((g, _, _), _)| g == group)
    }

    /// Whether the group has share-partition state.
    pub fn has_group(&self, group: &str) -> bool {
        self.of_group(group).next().is_some()
    }

    /// The groups with share-partition state.
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = self.by_key.keys().map(|(g, _, _)| g.clone()).collect();
        groups.dedup();
        groups
    }

    pub(super) fn get_mut(&mut self, key: &ShareKey) -> Option<&mut SharePartition> {
        self.by_key.get_mut(key)
    }

    /// The partition's state, made at `start` if new; `None` when the state is full.
    pub(super) fn get_or_start(
        &mut self,
        key: ShareKey,
        start: i64,
        rules: ShareRules,
    ) -> Option<&mut SharePartition> {
        if !self.by_key.contains_key(&key) {
            if self.by_key.len() >= SHARE_PARTITIONS_MAX {
                return None;
            }
            self.by_key
                .insert(key.clone(), SharePartition::new(start, rules));
        }
        let partition = self.by_key.get_mut(&key)?;
        partition.rules = rules.bounded();
        Some(partition)
    }

    /// The partition's state made anew at `start`; false when the state is full.
    pub(super) fn start_again(&mut self, key: ShareKey, start: i64, rules: ShareRules) -> bool {
        if !self.by_key.contains_key(&key) && self.by_key.len() >= SHARE_PARTITIONS_MAX {
            return false;
        }
        self.by_key.insert(key, SharePartition::new(start, rules));
        true
    }

    /// Forgets a group's state: all of it, or of the listed topics.
    pub(super) fn forget(&mut self, group: &str, topics: Option<&[Uuid]>) -> usize {
        let keys: Vec<ShareKey> = self
            .of_group(group)
            .filter(|((_, t, _), _)| topics.is_none_or(|ts| ts.contains(t)))
            .map(|(k, _)| k.clone())
            .collect();
        for key in &keys {
            self.by_key.remove(key);
        }
        keys.len()
    }

    /// Forgets every group's state of a deleted topic.
    pub(super) fn forget_topic(&mut self, topic_id: &Uuid) {
        let keys: Vec<ShareKey> = self
            .by_key
            .keys()
            .filter(|(_, t, _)| t == topic_id)
            .cloned()
            .collect();
        for key in &keys {
            self.by_key.remove(key);
        }
    }

    /// Gives back a member's records in the listed partitions of its group; the partitions
    /// where records became available.
    pub(super) fn release_member(
        &mut self,
        group: &str,
        member: &str,
        partitions: &[crate::ids::TopicPartition],
    ) -> Vec<(Uuid, i32)> {
        let keys: Vec<ShareKey> = partitions
            .iter()
            .map(|tp| (group.to_string(), tp.topic_id, tp.partition))
            .collect();
        let mut freed = Vec::new();
        for key in keys {
            if let Some(p) = self.by_key.get_mut(&key)
                && p.release_member(member)
            {
                freed.push((key.1, key.2));
            }
        }
        freed
    }

    /// Ends the locks that ran out by `now_ms`; the partitions where records became
    /// available.
    pub(super) fn expire_locks(&mut self, now_ms: i64) -> Vec<(Uuid, i32)> {
        let due: Vec<ShareKey> = self
            .by_key
            .iter()
            .filter(|(_, p)| p.next_lock_end().is_some_and(|end| end <= now_ms))
            .map(|(k, _)| k.clone())
            .collect();
        let mut freed = Vec::new();
        for key in due {
            if let Some(p) = self.by_key.get_mut(&key)
                && p.expire_locks(now_ms)
            {
                freed.push((key.1, key.2));
            }
        }
        freed
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
#[path = "share_tests.rs"]
mod tests;
