//! A checker for what Kafka clients did and saw, in the spirit of Jepsen's Kafka workload
//! and Elle: the broker is judged by its clients' observations, not by its own account.
//!
//! A test or chaos runner records every send, acknowledgement, failed send, poll, offset
//! commit and high watermark observation as an [`Event`] with the time it happened, appending
//! them to one [`History`] in the order they happened. Once the run is over, [`check`] reads
//! the whole history and returns a [`Report`] with a count and a few examples of each
//! anomaly:
//!
//! ```text
//!  producers ──send/ack/failed──┐
//!  consumers ──poll/commit──────┼──▶ History ──check──▶ Report (counts + examples)
//!  admin     ──high watermark───┘
//! ```
//!
//! Every sent value is unique in a history, so a value names one logical write, and every
//! place it was acknowledged or read at is evidence about the log. The checks follow from
//! two facts Kafka promises: a partition's log is one sequence of offsets, each holding one
//! record forever (until retention or compaction), and an acknowledged write is in it.
//! Some things that look odd are allowed and counted only for context: an acknowledged value
//! beyond everything read (the run may have ended before consumers caught up), and a read of
//! a value whose send failed (an idempotent retry can write a record whose ack was lost).
//!
//! Pure code: no I/O and no clock. `at_ms` is the recorder's clock, used only in examples;
//! order comes from the history itself.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// How many examples each finding keeps: enough to start debugging, few enough that the
/// report of a long chaos run stays readable.
pub const EXAMPLES_MAX: usize = 10;

/// A partition of a topic, by name, as clients know it (the broker's own `TopicPartition`
/// names the topic by id).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> TopicPartition {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// One thing a client did or saw. `at_ms` is the recorder's clock: only for ordering within
/// one process and for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A producer offered `value` (unique per history) to a partition.
    Send {
        at_ms: i64,
        producer: u32,
        partition: TopicPartition,
        value: u64,
    },
    /// The broker acknowledged `value` at `offset`.
    Ack {
        at_ms: i64,
        producer: u32,
        partition: TopicPartition,
        value: u64,
        offset: i64,
    },
    /// The send of `value` failed for good (the client gave up): the record may or may not
    /// have been written.
    SendFailed {
        at_ms: i64,
        producer: u32,
        partition: TopicPartition,
        value: u64,
        error: String,
    },
    /// A consumer poll returned these `(offset, value)` records of one partition, in the
    /// order returned. `session` identifies one consumer's continuous reading of a partition:
    /// a new session starts at each assignment or seek. `group`: the consumer group it reads
    /// for, whose committed offsets a new session must start from.
    Poll {
        at_ms: i64,
        consumer: u32,
        session: u64,
        partition: TopicPartition,
        records: Vec<(i64, u64)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
    },
    /// A group offset commit a member sent, before its answer: it may be in force even if
    /// the answer never came (a timeout), so a session may start from it.
    CommitSent {
        at_ms: i64,
        group: String,
        partition: TopicPartition,
        offset: i64,
    },
    /// A group offset commit that the broker acknowledged.
    Commit {
        at_ms: i64,
        group: String,
        partition: TopicPartition,
        offset: i64,
    },
    /// A high watermark observed (from ListOffsets latest or a fetch response, say).
    HighWatermark {
        at_ms: i64,
        partition: TopicPartition,
        offset: i64,
    },
}

/// Every event of a run, in the order they happened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    pub events: Vec<Event>,
}

impl History {
    pub fn new() -> History {
        History::default()
    }

    pub fn push(&mut self, event: Event) {
        self.events.push(event);
    }
}

/// How often one kind of finding occurred, with the first few occurrences described.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub count: u64,
    pub examples: Vec<String>,
}

impl Finding {
    /// Counts one occurrence. The description is built only while examples are still kept,
    /// so a run with a million lost writes does not format a million strings.
    fn record(&mut self, describe: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < EXAMPLES_MAX {
            self.examples.push(describe());
        }
    }
}

/// What the history holds, in distinct values for sends, acknowledgements, failures and
/// reads, and in events for polls and commits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub sent: u64,
    pub acknowledged: u64,
    pub failed: u64,
    pub read: u64,
    pub polls: u64,
    pub commits: u64,
}

/// What [`check`] found. Every field but `totals`, `unread_acknowledged` and
/// `read_after_failed_send` is an anomaly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub totals: Totals,
    /// Acknowledged, never read, though readers of its partition got past its offset.
    pub lost_write: Finding,
    /// One value at two or more positions (acknowledged or read).
    pub duplicate: Finding,
    /// One position holding two or more values.
    pub inconsistent_offset: Finding,
    /// A value read, but never at the position its acknowledgement gave. Such a value is at
    /// two positions, so it is also a `duplicate`; this is the more specific finding.
    pub ack_mismatch: Finding,
    /// A consumer session stepped over an offset known to hold a record; or a group member's
    /// session started beyond every offset its group committed at or below its start,
    /// stepping over records between (an offset reset to `latest`).
    pub poll_skip: Finding,
    /// A consumer session read an offset at or before the one it read last.
    pub nonmonotonic_poll: Finding,
    /// A group member's session started below an offset its group had committed (and had
    /// been told so) before: records the group had processed are read again.
    pub read_below_committed: Finding,
    /// A group committed an offset lower than one it had committed before.
    pub commit_regression: Finding,
    /// A high watermark lower than one observed before.
    pub high_watermark_regression: Finding,
    /// A value read that no one ever sent.
    pub phantom_read: Finding,
    /// Not an anomaly: acknowledged beyond everything read of its partition.
    pub unread_acknowledged: Finding,
    /// Not an anomaly: read though never acknowledged, after its send failed or while it
    /// was still in flight.
    pub read_after_failed_send: Finding,
}

impl Report {
    /// The number of real anomalies found.
    pub fn anomalies(&self) -> u64 {
        self.anomaly_findings()
            .iter()
            .map(|(_, finding)| finding.count)
            .sum()
    }

    pub fn is_clean(&self) -> bool {
        self.anomalies() == 0
    }

    /// The findings that are anomalies, by name, in the order the summary prints them.
    fn anomaly_findings(&self) -> [(&'static str, &Finding); 10] {
        [
            ("lost_write", &self.lost_write),
            ("duplicate", &self.duplicate),
            ("inconsistent_offset", &self.inconsistent_offset),
            ("ack_mismatch", &self.ack_mismatch),
            ("poll_skip", &self.poll_skip),
            ("nonmonotonic_poll", &self.nonmonotonic_poll),
            ("read_below_committed", &self.read_below_committed),
            ("commit_regression", &self.commit_regression),
            ("high_watermark_regression", &self.high_watermark_regression),
            ("phantom_read", &self.phantom_read),
        ]
    }

    /// The findings counted for context only.
    fn allowed_findings(&self) -> [(&'static str, &Finding); 2] {
        [
            ("unread_acknowledged", &self.unread_acknowledged),
            ("read_after_failed_send", &self.read_after_failed_send),
        ]
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let totals = &self.totals;
        writeln!(
            f,
            "{} sent, {} acknowledged, {} failed, {} read, {} polls, {} commits",
            totals.sent,
            totals.acknowledged,
            totals.failed,
            totals.read,
            totals.polls,
            totals.commits
        )?;
        for (name, finding) in self.anomaly_findings() {
            write_finding(f, name, finding, "")?;
        }
        for (name, finding) in self.allowed_findings() {
            write_finding(f, name, finding, " (allowed)")?;
        }
        write!(f, "anomalies: {}", self.anomalies())
    }
}

fn write_finding(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    finding: &Finding,
    note: &str,
) -> fmt::Result {
    write!(f, "{name}: {}{note}", finding.count)?;
    if let Some(example) = finding.examples.first() {
        write!(f, ", e.g. {example}")?;
    }
    writeln!(f)
}

/// Checks a whole history; see the module doc for what counts as an anomaly.
#[must_use]
pub fn check(history: &History) -> Report {
    let seen = Observations::gather(&history.events);
    let mut report = Report {
        totals: seen.totals(),
        ..Report::default()
    };
    check_acknowledged(&seen, &mut report);
    check_unacknowledged_reads(&seen, &mut report);
    check_positions(&seen, &mut report);
    check_sessions(&seen, &mut report);
    check_session_starts(&history.events, &seen, &mut report);
    check_regressions(&history.events, &mut report);
    report
}

/// Where a record sits: an offset of a partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Position {
    partition: TopicPartition,
    offset: i64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.partition, self.offset)
    }
}

/// One consumer's continuous reading of one partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SessionKey {
    consumer: u32,
    session: u64,
    partition: TopicPartition,
}

/// One record a session read, with the time of the poll that returned it.
struct SessionRead {
    at_ms: i64,
    offset: i64,
}

/// The history regrouped by value, by position and by consumer session.
#[derive(Default)]
struct Observations {
    sent: BTreeSet<u64>,
    failed: BTreeSet<u64>,
    acknowledged_at: BTreeMap<u64, BTreeSet<Position>>,
    read_at: BTreeMap<u64, BTreeSet<Position>>,
    /// Every position each value was acknowledged or read at.
    positions_of: BTreeMap<u64, BTreeSet<Position>>,
    /// Every value acknowledged or read at each offset of each partition: the offsets known
    /// to hold a record.
    values_at: BTreeMap<TopicPartition, BTreeMap<i64, BTreeSet<u64>>>,
    /// The highest offset any poll of each partition returned: how far its readers got.
    read_frontier: BTreeMap<TopicPartition, i64>,
    sessions: BTreeMap<SessionKey, Vec<SessionRead>>,
    polls: u64,
    commits: u64,
}

impl Observations {
    fn gather(events: &[Event]) -> Observations {
        let mut seen = Observations::default();
        for event in events {
            match event {
                Event::Send { value, .. } => {
                    seen.sent.insert(*value);
                }
                Event::SendFailed { value, .. } => {
                    seen.failed.insert(*value);
                }
                Event::Ack {
                    partition,
                    value,
                    offset,
                    ..
                } => {
                    let position = seen.note_position(*value, partition, *offset);
                    seen.acknowledged_at
                        .entry(*value)
                        .or_default()
                        .insert(position);
                }
                Event::Poll {
                    at_ms,
                    consumer,
                    session,
                    partition,
                    records,
                    group: _,
                } => {
                    seen.polls += 1;
                    for &(offset, value) in records {
                        let position = seen.note_position(value, partition, offset);
                        seen.read_at.entry(value).or_default().insert(position);
                        let frontier = seen
                            .read_frontier
                            .entry(partition.clone())
                            .or_insert(offset);
                        *frontier = (*frontier).max(offset);
                    }
                    if !records.is_empty() {
                        let key = SessionKey {
                            consumer: *consumer,
                            session: *session,
                            partition: partition.clone(),
                        };
                        seen.sessions
                            .entry(key)
                            .or_default()
                            .extend(records.iter().map(|&(offset, _)| SessionRead {
                                at_ms: *at_ms,
                                offset,
                            }));
                    }
                }
                Event::Commit { .. } => seen.commits += 1,
                Event::CommitSent { .. } | Event::HighWatermark { .. } => {}
            }
        }
        seen
    }

    /// Records that `value` was seen at `offset` of `partition`, and returns that position.
    fn note_position(&mut self, value: u64, partition: &TopicPartition, offset: i64) -> Position {
        let position = Position {
            partition: partition.clone(),
            offset,
        };
        self.values_at
            .entry(partition.clone())
            .or_default()
            .entry(offset)
            .or_default()
            .insert(value);
        self.positions_of
            .entry(value)
            .or_default()
            .insert(position.clone());
        position
    }

    /// How far readers of the position's partition got, if they reached or passed it.
    fn read_past(&self, position: &Position) -> Option<i64> {
        self.read_frontier
            .get(&position.partition)
            .copied()
            .filter(|&frontier| frontier >= position.offset)
    }

    fn totals(&self) -> Totals {
        Totals {
            sent: self.sent.len() as u64,
            acknowledged: self.acknowledged_at.len() as u64,
            failed: self.failed.len() as u64,
            read: self.read_at.len() as u64,
            polls: self.polls,
            commits: self.commits,
        }
    }
}

/// Lost writes, unread acknowledged values and acknowledgements that gave the wrong place.
fn check_acknowledged(seen: &Observations, report: &mut Report) {
    for (value, acknowledged_at) in &seen.acknowledged_at {
        let Some(read_at) = seen.read_at.get(value) else {
            // A write is only lost once readers have gone past it. If no poll of its
            // partition returned its offset or a later one, the consumers may simply not
            // have caught up before the run ended; a runner that wants these to count drains
            // every partition to its high watermark before checking.
            let passed = acknowledged_at
                .iter()
                .find_map(|position| Some((position, seen.read_past(position)?)));
            match passed {
                Some((position, frontier)) => report.lost_write.record(|| {
                    format!("value {value} acknowledged at {position}, never read though readers reached offset {frontier}")
                }),
                None => report.unread_acknowledged.record(|| {
                    format!("value {value} acknowledged at {}, beyond every read", list(acknowledged_at))
                }),
            }
            continue;
        };
        // A value also read elsewhere (a retry's duplicate, say) counts as a duplicate; it is
        // a mismatch only if no read found it where its acknowledgement said.
        if read_at.is_disjoint(acknowledged_at) {
            report.ack_mismatch.record(|| {
                format!(
                    "value {value} acknowledged at {}, read at {}",
                    list(acknowledged_at),
                    list(read_at)
                )
            });
        }
    }
}

/// Values read that were never acknowledged: allowed if they were sent (the send failed or
/// was still in flight, and a retry may have written the record whose ack was lost), phantoms
/// if not.
fn check_unacknowledged_reads(seen: &Observations, report: &mut Report) {
    for (value, read_at) in &seen.read_at {
        if seen.acknowledged_at.contains_key(value) {
            continue;
        }
        if seen.sent.contains(value) || seen.failed.contains(value) {
            report.read_after_failed_send.record(|| {
                format!(
                    "value {value} read at {}, never acknowledged",
                    list(read_at)
                )
            });
        } else {
            report
                .phantom_read
                .record(|| format!("value {value} read at {}, never sent", list(read_at)));
        }
    }
}

/// Values at more than one position, and positions with more than one value.
fn check_positions(seen: &Observations, report: &mut Report) {
    for (value, positions) in &seen.positions_of {
        if positions.len() > 1 {
            report
                .duplicate
                .record(|| format!("value {value} at {}", list(positions)));
        }
    }
    for (partition, offsets) in &seen.values_at {
        for (offset, values) in offsets {
            if values.len() > 1 {
                report
                    .inconsistent_offset
                    .record(|| format!("{partition}@{offset} holds values {}", list(values)));
            }
        }
    }
}

/// Each consumer session must read offsets in increasing order, stepping over no offset that
/// is known to hold a record. Offsets no one ever saw are gaps Kafka allows (transaction
/// markers, compaction, aborted batches), so stepping over those is no skip.
fn check_sessions(seen: &Observations, report: &mut Report) {
    for (key, reads) in &seen.sessions {
        let SessionKey {
            consumer,
            session,
            partition,
        } = key;
        let known_offsets = seen.values_at.get(partition);
        for (previous, next) in reads.iter().zip(reads.iter().skip(1)) {
            if next.offset <= previous.offset {
                report.nonmonotonic_poll.record(|| {
                    format!(
                        "consumer {consumer} session {session} read {partition} offset {} after offset {} at {} ms",
                        next.offset, previous.offset, next.at_ms
                    )
                });
                continue;
            }
            // `next.offset > previous.offset`, so the range is well formed and `+ 1` cannot
            // overflow.
            let skipped = known_offsets
                .and_then(|offsets| offsets.range(previous.offset + 1..next.offset).next());
            if let Some((skipped_offset, values)) = skipped {
                report.poll_skip.record(|| {
                    format!(
                        "consumer {consumer} session {session} read {partition} offset {} then {} at {} ms, skipping offset {skipped_offset} (value {})",
                        previous.offset,
                        next.offset,
                        next.at_ms,
                        list(values)
                    )
                });
            }
        }
    }
}

/// A group member's session starts where its group's committed offset stands: never below an
/// offset the group was told it had committed before the session's first read (the group
/// would process records again), and never beyond the committed offsets at or below its
/// start with records between (the group would skip records it never processed, as a reset
/// to `latest` does). Commits sent before the session's first read count for the second check
/// even if their answer never came: the broker may have applied them. A session of a group
/// that had sent no commit for the partition starts where the client's reset policy says, so
/// it is not judged.
fn check_session_starts(events: &[Event], seen: &Observations, report: &mut Report) {
    // Offsets each group sent for each partition so far, and the highest it was told it had
    // committed so far, in history order.
    let mut sent: BTreeMap<(&str, &TopicPartition), BTreeSet<i64>> = BTreeMap::new();
    let mut acknowledged: BTreeMap<(&str, &TopicPartition), i64> = BTreeMap::new();
    let mut started = BTreeSet::new();
    for event in events {
        match event {
            Event::CommitSent {
                group,
                partition,
                offset,
                ..
            } => {
                sent.entry((group, partition)).or_default().insert(*offset);
            }
            Event::Commit {
                group,
                partition,
                offset,
                ..
            } => {
                sent.entry((group, partition)).or_default().insert(*offset);
                let highest = acknowledged.entry((group, partition)).or_insert(*offset);
                *highest = (*highest).max(*offset);
            }
            Event::Poll {
                at_ms,
                consumer,
                session,
                partition,
                records,
                group: Some(group),
            } => {
                let Some(&(first, _)) = records.first() else {
                    continue;
                };
                if !started.insert((*consumer, *session, partition)) {
                    continue;
                }
                let key = (group.as_str(), partition);
                if let Some(&committed) = acknowledged.get(&key)
                    && first < committed
                {
                    report.read_below_committed.record(|| {
                        format!("consumer {consumer} session {session} of group {group} started {partition} at offset {first} at {at_ms} ms, after the group committed offset {committed}")
                    });
                    continue;
                }
                let nearest = sent
                    .get(&key)
                    .and_then(|offsets| offsets.range(..=first).next_back());
                let skipped = nearest.and_then(|&nearest| {
                    seen.values_at
                        .get(partition)?
                        .range(nearest..first)
                        .next()
                        .map(|(offset, values)| (nearest, *offset, values))
                });
                if let Some((nearest, offset, values)) = skipped {
                    report.poll_skip.record(|| {
                        format!("consumer {consumer} session {session} of group {group} started {partition} at offset {first} at {at_ms} ms, beyond the group's committed offset {nearest}, skipping offset {offset} (value {})", list(values))
                    });
                }
            }
            Event::Poll { group: None, .. }
            | Event::Send { .. }
            | Event::Ack { .. }
            | Event::SendFailed { .. }
            | Event::HighWatermark { .. } => {}
        }
    }
}

/// Committed offsets and high watermarks only move forward. Both are judged against the
/// highest seen before in history order, not just the previous one, so one low outlier
/// between two high values is still caught.
fn check_regressions(events: &[Event], report: &mut Report) {
    let mut committed = BTreeMap::new();
    let mut high_watermarks = BTreeMap::new();
    for event in events {
        match event {
            Event::Commit {
                at_ms,
                group,
                partition,
                offset,
            } => {
                let key = (group.as_str(), partition);
                if let Some(earlier) = regression(&mut committed, key, *offset) {
                    report.commit_regression.record(|| {
                        format!("group {group} committed {partition} offset {offset} at {at_ms} ms after offset {earlier}")
                    });
                }
            }
            Event::HighWatermark {
                at_ms,
                partition,
                offset,
            } => {
                if let Some(earlier) = regression(&mut high_watermarks, partition, *offset) {
                    report.high_watermark_regression.record(|| {
                        format!("{partition} high watermark {offset} at {at_ms} ms after {earlier}")
                    });
                }
            }
            Event::Send { .. }
            | Event::Ack { .. }
            | Event::SendFailed { .. }
            | Event::Poll { .. }
            | Event::CommitSent { .. } => {}
        }
    }
}

/// Raises the highest offset seen for `key` to `offset`; returns the earlier highest if
/// `offset` is below it.
fn regression<K: Ord>(highest_by_key: &mut BTreeMap<K, i64>, key: K, offset: i64) -> Option<i64> {
    let highest = highest_by_key.entry(key).or_insert(offset);
    let earlier = *highest;
    *highest = earlier.max(offset);
    (offset < earlier).then_some(earlier)
}

/// `a, b, c`, for examples.
fn list<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|item| item.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn orders() -> TopicPartition {
        TopicPartition::new("orders", 0)
    }

    fn send(value: u64) -> Event {
        Event::Send {
            at_ms: 0,
            producer: 1,
            partition: orders(),
            value,
        }
    }

    fn ack(value: u64, offset: i64) -> Event {
        Event::Ack {
            at_ms: 1,
            producer: 1,
            partition: orders(),
            value,
            offset,
        }
    }

    fn send_failed(value: u64) -> Event {
        Event::SendFailed {
            at_ms: 1,
            producer: 1,
            partition: orders(),
            value,
            error: "request timed out".to_string(),
        }
    }

    fn poll(session: u64, records: &[(i64, u64)]) -> Event {
        Event::Poll {
            at_ms: 2,
            consumer: 1,
            session,
            partition: orders(),
            records: records.to_vec(),
            group: None,
        }
    }

    /// A poll by consumer 1, a member of group `g`.
    fn member_poll(session: u64, records: &[(i64, u64)]) -> Event {
        Event::Poll {
            at_ms: 2,
            consumer: 1,
            session,
            partition: orders(),
            records: records.to_vec(),
            group: Some("g".to_string()),
        }
    }

    fn commit_sent(group: &str, offset: i64) -> Event {
        Event::CommitSent {
            at_ms: 3,
            group: group.to_string(),
            partition: orders(),
            offset,
        }
    }

    fn commit(group: &str, offset: i64) -> Event {
        Event::Commit {
            at_ms: 3,
            group: group.to_string(),
            partition: orders(),
            offset,
        }
    }

    fn high_watermark(offset: i64) -> Event {
        Event::HighWatermark {
            at_ms: 3,
            partition: orders(),
            offset,
        }
    }

    /// Values `0..count`, each sent and acknowledged at the offset equal to the value.
    fn written(count: u64) -> Vec<Event> {
        (0..count)
            .flat_map(|value| {
                [
                    send(value),
                    ack(value, i64::try_from(value).expect("small test values")),
                ]
            })
            .collect()
    }

    fn check_events(events: Vec<Event>) -> Report {
        check(&History { events })
    }

    #[test]
    fn a_clean_history_has_no_anomalies() {
        let mut events = written(3);
        events.extend([
            poll(1, &[(0, 0), (1, 1)]),
            commit("g", 2),
            high_watermark(3),
            poll(1, &[(2, 2)]),
            commit("g", 3),
            high_watermark(3),
        ]);
        let report = check_events(events);
        assert!(report.is_clean(), "{report}");
        assert_eq!(report.anomalies(), 0);
        assert_eq!(
            report.totals,
            Totals {
                sent: 3,
                acknowledged: 3,
                failed: 0,
                read: 3,
                polls: 2,
                commits: 2
            }
        );
        assert!(report.to_string().ends_with("anomalies: 0"));
        let json = serde_json::to_string(&report).expect("a report serializes to JSON");
        assert!(json.contains(r#""lost_write":{"count":0,"examples":[]}"#));
    }

    #[test]
    fn an_acknowledged_value_readers_got_past_is_lost() {
        let mut events = written(3);
        // Two sessions (a seek in between), so no session steps over offset 1.
        events.extend([poll(1, &[(0, 0)]), poll(2, &[(2, 2)])]);
        let report = check_events(events);
        assert_eq!(report.lost_write.count, 1, "{report}");
        assert_eq!(report.unread_acknowledged.count, 0);
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn an_acknowledged_value_beyond_every_read_is_unread_not_lost() {
        let mut events = written(3);
        events.push(poll(1, &[(0, 0), (1, 1)]));
        let report = check_events(events);
        assert_eq!(report.unread_acknowledged.count, 1, "{report}");
        assert_eq!(report.lost_write.count, 0);
        assert!(report.is_clean());
    }

    #[test]
    fn a_value_read_at_two_offsets_is_a_duplicate() {
        // The first attempt wrote offset 0, its ack was lost, the retry was acknowledged at 1.
        let report = check_events(vec![send(7), ack(7, 1), poll(1, &[(0, 7), (1, 7)])]);
        assert_eq!(report.duplicate.count, 1, "{report}");
        assert_eq!(report.ack_mismatch.count, 0);
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn two_values_at_one_offset_are_inconsistent() {
        // Both sends failed, so reading them is allowed; reading both at offset 0 is not.
        let report = check_events(vec![
            send(1),
            send_failed(1),
            send(2),
            send_failed(2),
            poll(1, &[(0, 1)]),
            poll(2, &[(0, 2)]),
        ]);
        assert_eq!(report.inconsistent_offset.count, 1, "{report}");
        assert_eq!(report.read_after_failed_send.count, 2);
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn a_value_read_away_from_its_acknowledged_offset_is_a_mismatch() {
        let report = check_events(vec![send(7), ack(7, 0), poll(1, &[(1, 7)])]);
        assert_eq!(report.ack_mismatch.count, 1, "{report}");
        // Acknowledged at 0 and read at 1: the value is at two offsets, so also a duplicate.
        assert_eq!(report.duplicate.count, 1);
        assert_eq!(report.anomalies(), 2);
    }

    #[test]
    fn a_session_stepping_over_a_known_offset_skips() {
        let mut events = written(3);
        events.extend([poll(1, &[(0, 0)]), poll(1, &[(2, 2)]), poll(2, &[(1, 1)])]);
        let report = check_events(events);
        assert_eq!(report.poll_skip.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn a_session_stepping_over_offsets_no_one_saw_does_not_skip() {
        // Offsets 1 to 4 could be transaction markers.
        let report = check_events(vec![
            send(0),
            ack(0, 0),
            send(1),
            ack(1, 5),
            poll(1, &[(0, 0), (5, 1)]),
        ]);
        assert!(report.is_clean(), "{report}");
    }

    #[test]
    fn a_session_going_backwards_is_nonmonotonic() {
        let mut events = written(2);
        events.extend([poll(1, &[(1, 1)]), poll(1, &[(0, 0)])]);
        let report = check_events(events);
        assert_eq!(report.nonmonotonic_poll.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn a_member_session_starting_at_the_committed_offset_is_clean() {
        let mut events = written(6);
        events.extend([
            // Nothing committed yet: the reset policy decides where the first session starts.
            member_poll(1, &[(2, 2), (3, 3)]),
            commit_sent("g", 4),
            commit("g", 4),
            member_poll(2, &[(4, 4)]),
            // A commit whose answer was lost may still be where the next session starts.
            commit_sent("g", 5),
            member_poll(3, &[(5, 5)]),
            // A last reader without a group reads what the group's first session started past.
            poll(4, &[(0, 0), (1, 1)]),
        ]);
        let report = check_events(events);
        assert!(report.is_clean(), "{report}");
    }

    #[test]
    fn a_member_session_starting_below_an_acknowledged_commit_reads_below_committed() {
        let mut events = written(4);
        events.extend([
            member_poll(1, &[(0, 0), (1, 1), (2, 2)]),
            commit("g", 3),
            // Reset to the log start after the group had committed 3.
            member_poll(2, &[(0, 0)]),
        ]);
        let report = check_events(events);
        assert_eq!(report.read_below_committed.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn a_member_session_starting_beyond_the_committed_offset_skips() {
        let mut events = written(6);
        events.extend([
            member_poll(1, &[(0, 0), (1, 1)]),
            commit("g", 2),
            // Reset to the end: offsets 2 to 4 were never processed by the group.
            member_poll(2, &[(5, 5)]),
            poll(3, &[(2, 2), (3, 3), (4, 4)]),
        ]);
        let report = check_events(events);
        assert_eq!(report.poll_skip.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn a_lower_commit_by_the_same_group_regresses() {
        let report = check_events(vec![
            commit("a", 5),
            commit("b", 2),
            commit("a", 5),
            commit("a", 3),
        ]);
        assert_eq!(report.commit_regression.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn a_lower_high_watermark_regresses() {
        let report = check_events(vec![
            high_watermark(5),
            high_watermark(5),
            high_watermark(4),
        ]);
        assert_eq!(report.high_watermark_regression.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
    }

    #[test]
    fn reading_a_failed_or_unacknowledged_send_is_allowed() {
        let report = check_events(vec![
            send(0),
            send_failed(0),
            send(1),
            poll(1, &[(0, 0), (1, 1)]),
        ]);
        assert_eq!(report.read_after_failed_send.count, 2, "{report}");
        assert!(report.is_clean());
    }

    #[test]
    fn reading_a_value_never_sent_is_a_phantom() {
        let report = check_events(vec![poll(1, &[(0, 42)])]);
        assert_eq!(report.phantom_read.count, 1, "{report}");
        assert_eq!(report.anomalies(), 1);
        assert!(
            report
                .to_string()
                .contains("phantom_read: 1, e.g. value 42 read at orders-0@0")
        );
    }

    #[test]
    fn examples_are_capped() {
        let events = (0..20_i64)
            .map(|offset| poll(1, &[(offset, 1000 + offset.unsigned_abs())]))
            .collect();
        let report = check_events(events);
        assert_eq!(report.phantom_read.count, 20);
        assert_eq!(report.phantom_read.examples.len(), EXAMPLES_MAX);
    }

    #[test]
    fn a_history_round_trips_through_json() {
        let mut history = History::new();
        for event in written(1) {
            history.push(event);
        }
        history.push(send_failed(1));
        history.push(poll(1, &[(0, 0)]));
        history.push(member_poll(2, &[(0, 0)]));
        history.push(commit_sent("g", 1));
        history.push(commit("g", 1));
        history.push(high_watermark(1));
        let json = serde_json::to_string(&history).expect("a history serializes");
        assert!(json.contains(r#""type":"send_failed""#));
        let decoded: History = serde_json::from_str(&json).expect("a history deserializes");
        assert_eq!(decoded, history);
    }
}
