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

use crate::ids::ObjectKey;
use crate::metadata::state::markers::Marker;
use crate::metadata::state::{BatchRef, ObjectId, Objects, PartitionState};

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
