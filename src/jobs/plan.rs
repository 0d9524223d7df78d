//! Pure decisions of the background jobs: which runs of a partition to compact into a segment,
//! which dead objects are due for deletion, which listed keys are orphans.
//!
//! Compaction keeps each partition's index small without rewriting data over and over:
//! - Runs in produce objects younger than the lag stay where they are (the tail the index
//!   keeps per partition). Once the oldest is older than twice the lag, or the eligible runs
//!   fill a segment, they are compacted: each segment covers at least a lag of data.
//! - Segments below the target size are merged with what follows them only once what follows
//!   is at least as large (a binary counter): a partition holds O(log) small segments, and a
//!   byte is rewritten O(log) times on its way into a full segment.

use crate::ids::{ObjectKey, Offset};
use crate::metadata::state::markers::{Marker, read_bytes};
use crate::metadata::state::{BatchRef, ObjectId, Objects, PartitionState};
use crate::object::key::{created_ms, delete_horizon, is_cleaned_segment};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
pub struct CompactionSettings {
    /// A segment's target size.
    pub segment_bytes: u64,
    pub lag_ms: i64,
    /// Entries one swap replaces at most (bounds the Raft entry).
    pub entries_max: usize,
}

/// The consecutive entries of `partition` to compact into one segment now, if any.
pub fn runs_to_compact(
    partition: &PartitionState,
    objects: &Objects,
    now_ms: i64,
    s: &CompactionSettings,
) -> Option<Vec<BatchRef>> {
    let young = now_ms.saturating_sub(s.lag_ms);
    let overdue = now_ms.saturating_sub(s.lag_ms.saturating_mul(2));
    // What each entry is: a produce run (with its commit time) or a segment, and whether it
    // may be merged at all (an old enough run, or a segment below the target size).
    let kind = |r: &BatchRef| -> Option<Option<i64>> {
        // A transaction marker is a run like any, stamped when the transaction ended.
        if Marker::of(r).is_some() {
            return (r.max_timestamp <= young).then_some(Some(r.max_timestamp));
        }
        let object = objects.get(r.object)?;
        // A compacted topic's clean section is the cleaner's to rewrite (`LogToClean`).
        if is_cleaned_segment(object.key.as_str()) {
            return None;
        }
        match object.is_segment() {
            true => (r.byte_len < s.segment_bytes).then_some(None),
            false => (object.committed_ms <= young).then_some(Some(object.committed_ms)),
        }
    };
    let entries: Vec<&BatchRef> = partition.index.iter().collect();
    let mut at = 0;
    while at < entries.len() {
        if kind(entries[at]).is_none() {
            at += 1;
            continue;
        }
        // A group: consecutive mergeable entries, within the target size and entry bound.
        let mut group = Vec::new();
        let mut bytes = 0u64;
        while at < entries.len() && group.len() < s.entries_max.max(1) {
            let r = entries[at];
            let Some(k) = kind(r) else { break };
            if !group.is_empty() && bytes.saturating_add(r.byte_len) > s.segment_bytes {
                break;
            }
            bytes = bytes.saturating_add(r.byte_len);
            group.push((r, k));
            at += 1;
        }
        // The binary counter: a leading segment waits until what follows it is as large.
        while group.len() >= 2 && group[0].1.is_none() {
            let rest = group[1..]
                .iter()
                .fold(0u64, |sum, (r, _)| sum.saturating_add(r.byte_len));
            if rest >= group[0].0.byte_len {
                break;
            }
            bytes = bytes.saturating_sub(group[0].0.byte_len);
            group.remove(0);
        }
        let oldest_run = group.iter().filter_map(|(_, k)| *k).min();
        let segments = group.iter().filter(|(_, k)| k.is_none()).count();
        let due = match oldest_run {
            Some(oldest) => bytes >= s.segment_bytes || oldest <= overdue,
            None => segments >= 2,
        };
        if due {
            return Some(group.into_iter().map(|(r, _)| r.clone()).collect());
        }
    }
    None
}

/// A compacted topic's cleaner settings: the topic's own configs, else Kafka's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanSettings {
    /// `min.cleanable.dirty.ratio`: the dirty share of the log that makes a pass due.
    pub min_cleanable_ratio: f64,
    /// `min.compaction.lag.ms`: records younger than this are not cleaned.
    pub min_lag_ms: i64,
    /// `max.compaction.lag.ms`: a dirty record older than this makes a pass due whatever the
    /// ratio.
    pub max_lag_ms: i64,
    /// `delete.retention.ms`: how long tombstones stay once a pass has seen them.
    pub delete_retention_ms: i64,
}

impl CleanSettings {
    /// The settings of a topic whose `cleanup.policy` includes `compact`; `None` otherwise.
    pub fn of(configs: &BTreeMap<String, String>) -> Option<CleanSettings> {
        let compacts = configs
            .get("cleanup.policy")
            .is_some_and(|p| p.split(',').any(|p| p.trim() == "compact"));
        if !compacts {
            return None;
        }
        let long = |key: &str, default: i64| {
            configs
                .get(key)
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Some(CleanSettings {
            min_cleanable_ratio: configs
                .get("min.cleanable.dirty.ratio")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.5),
            min_lag_ms: long("min.compaction.lag.ms", 0).max(0),
            max_lag_ms: long("max.compaction.lag.ms", i64::MAX).max(1),
            delete_retention_ms: long("delete.retention.ms", 86_400_000).max(0),
        })
    }
}

/// A cleaning pass due on a compacted partition: its entries from the log start to the end of
/// what may be cleaned, and where the dirty section (what no pass has cleaned) starts.
#[derive(Debug, Clone, PartialEq)]
pub struct CleanSection {
    pub entries: Vec<BatchRef>,
    pub first_dirty: Offset,
    /// The dirty share of the section's bytes (Kafka's cleanable ratio).
    pub dirty_ratio: f64,
}

/// Where a compacted partition's cleaning stands, read from the state (Kafka's `LogToClean`):
/// what decides whether a pass is due (`section`), and what `/v1/topics` and `/metrics` show.
///
/// What may be cleaned ends before the first entry that reaches past the last stable offset,
/// holds records younger than `min.compaction.lag.ms` (by their timestamps, as Kafka reads
/// them), or is the partition's last entry (as Kafka never cleans the active segment, the
/// log's end stays where its records are). The clean section is the leading entries in
/// segments a pass wrote; the rest of what may be cleaned is dirty, and a pass takes at most
/// `entries_max` dirty entries (the clean section whole, however long: a pass reads from the
/// log start).
#[derive(Debug, Clone, PartialEq)]
pub struct LogToClean {
    /// The entries a pass cleans, from the log start: the clean section and at most
    /// `entries_max` dirty entries.
    pub entries: Vec<BatchRef>,
    /// How many of `entries` are clean.
    pub clean: usize,
    pub clean_bytes: u64,
    pub dirty_bytes: u64,
    /// Bytes past what may be cleaned yet (the last entry, young records, open transactions).
    pub uncleanable_bytes: u64,
    /// The dirty share of what may be cleaned (Kafka's cleanable ratio).
    pub dirty_ratio: f64,
    /// The oldest dirty record is older than `max.compaction.lag.ms`.
    pub overdue: bool,
    /// The earliest delete horizon of the tombstones and markers the clean section keeps.
    pub next_horizon_ms: Option<i64>,
    /// Cleaned segments of the partition that keep tombstones or markers until a horizon.
    pub segments_with_horizon: usize,
    /// When the partition's newest cleaned segment was written (by its writer's clock).
    pub last_cleaned_ms: Option<i64>,
    now_ms: i64,
    min_cleanable_ratio: f64,
}

impl LogToClean {
    pub fn of(
        partition: &PartitionState,
        objects: &Objects,
        last_stable: Offset,
        now_ms: i64,
        s: &CleanSettings,
        entries_max: usize,
    ) -> LogToClean {
        let young = now_ms.saturating_sub(s.min_lag_ms);
        let cleanable = partition.index.len().saturating_sub(1);
        let mut entries: Vec<BatchRef> = partition
            .index
            .iter()
            .take(cleanable)
            .take_while(|r| r.end_offset <= last_stable && r.max_timestamp <= young)
            .cloned()
            .collect();
        let cleaned_key = |r: &BatchRef| {
            objects
                .get(r.object)
                .map(|o| o.key.as_str())
                .filter(|key| is_cleaned_segment(key))
        };
        let clean = entries
            .iter()
            .take_while(|r| cleaned_key(r).is_some())
            .count();
        let bytes = |rs: &[BatchRef]| {
            rs.iter()
                .fold(0u64, |sum, r| sum.saturating_add(read_bytes(r)))
        };
        let (clean_bytes, dirty_bytes) = (bytes(&entries[..clean]), bytes(&entries[clean..]));
        let uncleanable_bytes = partition
            .index
            .iter()
            .skip(entries.len())
            .fold(0u64, |sum, r| sum.saturating_add(read_bytes(r)));
        let overdue = entries[clean..]
            .iter()
            .map(|r| r.max_timestamp)
            .min()
            .is_some_and(|oldest| oldest <= now_ms.saturating_sub(s.max_lag_ms));
        let next_horizon_ms = entries[..clean]
            .iter()
            .filter_map(|r| cleaned_key(r).and_then(delete_horizon))
            .min();
        let cleaned: Vec<&str> = partition.index.iter().filter_map(cleaned_key).collect();
        LogToClean {
            clean,
            clean_bytes,
            dirty_bytes,
            uncleanable_bytes,
            dirty_ratio: dirty_bytes as f64 / (clean_bytes + dirty_bytes).max(1) as f64,
            overdue,
            next_horizon_ms,
            segments_with_horizon: cleaned
                .iter()
                .filter(|k| delete_horizon(k).is_some())
                .count(),
            last_cleaned_ms: cleaned.iter().filter_map(|k| created_ms(k)).max(),
            entries: {
                entries.truncate(clean.saturating_add(entries_max.max(1)));
                entries
            },
            now_ms,
            min_cleanable_ratio: s.min_cleanable_ratio,
        }
    }

    /// Whether a pass is due: the dirty bytes are at least `min.cleanable.dirty.ratio` of what
    /// may be cleaned, the oldest dirty record is older than `max.compaction.lag.ms`, or a
    /// tombstone or marker the clean section keeps is past its horizon (KIP-534).
    pub fn due(&self) -> bool {
        let dirty = self.clean < self.entries.len();
        let expired = self.next_horizon_ms.is_some_and(|h| h <= self.now_ms);
        (dirty && (self.dirty_ratio >= self.min_cleanable_ratio || self.overdue)) || expired
    }

    /// The section a pass cleans now, if one is due (Kafka's `grabFilthiestCompactedLog` for
    /// one log).
    pub fn section(self) -> Option<CleanSection> {
        if !self.due() {
            return None;
        }
        let first_dirty = match self.entries.get(self.clean) {
            Some(r) => r.base_offset,
            None => self.entries.last()?.end_offset,
        };
        Some(CleanSection {
            first_dirty,
            dirty_ratio: self.dirty_ratio,
            entries: self.entries,
        })
    }
}

/// Dead objects whose grace period has passed at `now_ms` (state time), oldest first.
pub fn dead_due(objects: &Objects, now_ms: i64, grace_ms: i64) -> Vec<(ObjectId, ObjectKey)> {
    let mut due: Vec<(i64, ObjectId, ObjectKey)> = objects
        .dead()
        .filter(|(_, d)| d.since_ms <= now_ms.saturating_sub(grace_ms))
        .map(|(id, d)| (d.since_ms, id, d.key.clone()))
        .collect();
    due.sort();
    due.into_iter().map(|(_, id, key)| (id, key)).collect()
}

/// The listed keys that are orphans: of floe's key schema, created before `now_ms - grace_ms`
/// (wall time), and unknown to the state, live or dead. `objects` must be read after the
/// listing, so every object committed before it was taken is known.
pub fn orphans<'a>(
    listed: &'a [String],
    objects: &Objects,
    now_ms: i64,
    grace_ms: i64,
) -> Vec<&'a str> {
    listed
        .iter()
        .map(String::as_str)
        .filter(|key| {
            crate::object::key::created_ms(key)
                .is_some_and(|created| created <= now_ms.saturating_sub(grace_ms))
        })
        .filter(|key| !objects.knows(&ObjectKey::new(*key)))
        .collect()
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
