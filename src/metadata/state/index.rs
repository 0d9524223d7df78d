//! A partition's log: its offsets and the batch index (which byte ranges of which objects hold
//! which offsets), and what an object commit says and answers.

use super::objects::ObjectId;
use crate::ids::{Offset, ProducerEpoch, ProducerId, TopicPartition};
use serde::{Deserialize, Serialize};

/// Where a run of consecutive batches of one partition lives: a byte range of one object (a
/// produce object shared by many partitions, or a whole segment of this partition).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRef {
    pub base_offset: Offset,
    /// One past the last offset of the run.
    pub end_offset: Offset,
    /// The object, by its id in `Objects` (its key is stored once there).
    pub object: ObjectId,
    pub byte_start: u64,
    pub byte_len: u64,
    pub max_timestamp: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionState {
    pub log_start_offset: Offset,
    pub high_watermark: Offset,
    /// Ordered by offset, contiguous: each ref starts where the previous ends. A persistent
    /// vector: a copy of the state (a snapshot, a ListOffsets scan) shares it instead of
    /// copying it, and an append after a copy copies one chunk, not the index.
    #[serde(deserialize_with = "super::persistent::vector")]
    pub index: imbl::Vector<BatchRef>,
    /// The bytes the index points to (what `retention.bytes` bounds).
    pub bytes: u64,
}

impl PartitionState {
    /// Assigns the batch its offsets and indexes it, extending the previous ref when the batch
    /// directly follows it in the same object (the common case: one ref per object and
    /// partition). Returns the batch's base offset, or `None` (nothing changed) if the
    /// partition's offsets would overflow.
    pub(super) fn append(
        &mut self,
        object: ObjectId,
        batch: &CommittedBatch,
    ) -> Option<(Offset, bool)> {
        let base_offset = self.high_watermark;
        let end_offset = Offset(base_offset.0.checked_add(batch.offset_count)?);
        self.high_watermark = end_offset;
        self.bytes = self.bytes.saturating_add(batch.byte_len);
        match self.index.back_mut() {
            Some(last)
                if last.object == object
                    && last.byte_start + last.byte_len == batch.byte_start
                    && last.end_offset == base_offset =>
            {
                last.byte_len += batch.byte_len;
                last.end_offset = end_offset;
                last.max_timestamp = last.max_timestamp.max(batch.max_timestamp);
                Some((base_offset, false))
            }
            _ => {
                self.index.push_back(BatchRef {
                    base_offset,
                    end_offset,
                    object,
                    byte_start: batch.byte_start,
                    byte_len: batch.byte_len,
                    max_timestamp: batch.max_timestamp,
                });
                Some((base_offset, true))
            }
        }
    }

    /// Appends an entry that refers to no object (a transaction marker's, see `markers`) at
    /// the high watermark, which moves to its end. Never merged with its neighbours; `None`
    /// (nothing changed) unless it starts at the high watermark.
    pub(super) fn append_unstored(&mut self, entry: BatchRef) -> Option<Offset> {
        if entry.base_offset != self.high_watermark || entry.end_offset <= entry.base_offset {
            return None;
        }
        let offset = entry.base_offset;
        self.high_watermark = entry.end_offset;
        self.index.push_back(entry);
        Some(offset)
    }

    /// Moves the log start to `offset` (never back, never past the high watermark) and drops
    /// the refs that hold only offsets below it; returns the objects they pointed into.
    pub(super) fn advance_log_start(&mut self, offset: Offset) -> Vec<ObjectId> {
        let offset = offset.min(self.high_watermark);
        if offset <= self.log_start_offset {
            return Vec::new();
        }
        self.log_start_offset = offset;
        let mut dropped = Vec::new();
        while self.index.front().is_some_and(|r| r.end_offset <= offset) {
            if let Some(r) = self.index.pop_front() {
                self.bytes = self.bytes.saturating_sub(r.byte_len);
                dropped.push(r.object);
            }
        }
        dropped
    }

    /// Whether the index holds one ref into `object` covering exactly `base..end` (a swap
    /// already made).
    pub(super) fn holds(&self, object: ObjectId, base: Offset, end: Offset) -> bool {
        self.index
            .iter()
            .any(|r| r.object == object && r.base_offset == base && r.end_offset == end)
    }

    /// Swaps the refs `replaced` (consecutive in the index, unchanged since the compactor read
    /// them) for `segment`; returns the objects they pointed into, or `None` (nothing changed)
    /// if the index no longer holds them as they were or `segment` does not cover the same
    /// offsets.
    pub(super) fn replace_runs(
        &mut self,
        replaced: &[BatchRef],
        segment: BatchRef,
    ) -> Option<Vec<ObjectId>> {
        let (first, last) = (replaced.first()?, replaced.last()?);
        if segment.base_offset != first.base_offset || segment.end_offset != last.end_offset {
            return None;
        }
        let at = self
            .index
            .binary_search_by(|r| r.base_offset.cmp(&first.base_offset))
            .ok()?;
        // Counted, not sliced: fewer entries left than `replaced` names is a refusal too.
        let matching = self
            .index
            .iter()
            .skip(at)
            .zip(replaced)
            .take_while(|(a, b)| a == b)
            .count();
        if matching != replaced.len() {
            return None;
        }
        let old_bytes = replaced
            .iter()
            .fold(0u64, |sum, r| sum.saturating_add(r.byte_len));
        self.bytes = self
            .bytes
            .saturating_sub(old_bytes)
            .saturating_add(segment.byte_len);
        let mut tail = self.index.split_off(at);
        let rest = tail.split_off(replaced.len());
        self.index.push_back(segment);
        self.index.append(rest);
        Some(replaced.iter().map(|r| r.object).collect())
    }
}

/// One batch of an object, as the committer describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommittedBatch {
    pub byte_start: u64,
    pub byte_len: u64,
    /// `last_offset_delta + 1`: how many offsets the batch takes.
    pub offset_count: i64,
    pub max_timestamp: i64,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    pub base_sequence: i32,
    pub last_sequence: i32,
}

impl CommittedBatch {
    /// What a batch that passed the produce path's checks looks like: it takes between one
    /// and 2^31 offsets (Kafka's last offset delta is an `i32`) and a byte range that exists.
    pub fn is_well_formed(&self) -> bool {
        (1..=1i64 << 31).contains(&self.offset_count)
            && self.byte_len > 0
            && self.byte_start.checked_add(self.byte_len).is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionBatches {
    pub partition: TopicPartition,
    pub batches: Vec<CommittedBatch>,
}

/// What happened to one batch of a `CommitObject`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BatchOutcome {
    Appended {
        base_offset: Offset,
    },
    /// A retry of a batch already committed: answered with its original offset, not stored.
    Duplicate {
        base_offset: Offset,
    },
    UnknownTopicOrPartition,
    /// The producer's epoch is older than the current one: a newer instance fenced it.
    InvalidProducerEpoch,
    OutOfOrderSequence,
    UnknownProducerId,
    /// Not a batch the produce path could have described (see `CommittedBatch::is_well_formed`),
    /// or an object key longer than `Limits::object_key_bytes_max`: refused, nothing stored.
    Malformed,
    /// A transactional producer's batch for a partition its open transaction has not added
    /// (or with no transaction open): refused, as Kafka's verification refuses it.
    InvalidTxnState,
}
