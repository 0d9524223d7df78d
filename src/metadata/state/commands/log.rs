//! What changes a partition's log: an object's commit (offsets assigned, sequences checked),
//! compaction's swap, DeleteRecords and retention.

use super::Apply;
use crate::ids::{ObjectKey, Offset, TopicPartition};
use crate::metadata::state::MetadataState;
use crate::metadata::state::index::{BatchOutcome, BatchRef, PartitionBatches};
use crate::metadata::state::objects::{FooterAt, ObjectId};
use crate::metadata::state::parts::in_force;
use crate::metadata::state::retention::Retention;
use serde::{Deserialize, Serialize};

noun! {
    /// What changes a partition's log.
    LogCommand => LogOutcome {
        CommitObject => Vec<Vec<BatchOutcome>>,
        ReplaceRuns => bool,
        DeleteRecords => Vec<Result<Offset, DeleteRecordsError>>,
        EnforceRetention => u64,
    }
}

/// The commit point of produced data: the object is durable; assign its batches offsets.
/// Per partition, in command order; per batch, in partition order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitObject {
    pub object_key: ObjectKey,
    pub partitions: Vec<PartitionBatches>,
}

impl Apply for CommitObject {
    fn apply(self, state: &mut MetadataState) -> Vec<Vec<BatchOutcome>> {
        state.commit_object(self.object_key, &self.partitions)
    }
}

/// Compaction's swap: `replaced`, consecutive refs of `partition` exactly as the compactor
/// read them, become one ref into the new segment, which holds the same batches. Refused
/// (nothing changes) if the index no longer holds them so: a DeleteRecords, retention or a
/// second compactor came first. Whether the swap was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaceRuns {
    pub partition: TopicPartition,
    pub replaced: Vec<BatchRef>,
    pub segment: NewSegment,
}

impl Apply for ReplaceRuns {
    fn apply(self, state: &mut MetadataState) -> bool {
        state.replace_runs(self.partition, &self.replaced, self.segment)
    }
}

/// Kafka's DeleteRecords: each partition's log starts at the offset given (-1: the high
/// watermark) unless it already starts later. Per partition, in command order: the log start
/// offset after the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteRecords {
    pub partitions: Vec<(TopicPartition, i64)>,
}

impl Apply for DeleteRecords {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<Offset, DeleteRecordsError>> {
        self.partitions
            .into_iter()
            .map(|(tp, offset)| state.delete_records(tp, offset))
            .collect()
    }
}

/// Applies every topic's `retention.ms` and `retention.bytes` at the state's time; how many
/// partitions' log starts moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnforceRetention;

impl Apply for EnforceRetention {
    fn apply(self, state: &mut MetadataState) -> u64 {
        state.enforce_retention()
    }
}

/// A segment a compactor wrote, as `ReplaceRuns` indexes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSegment {
    pub key: ObjectKey,
    /// The batches' bytes, from byte 0; the footer follows them.
    pub data_len: u64,
    pub footer: FooterAt,
    pub max_timestamp: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeleteRecordsError {
    UnknownTopicOrPartition,
    /// Beyond the high watermark.
    OffsetOutOfRange,
}

impl MetadataState {
    fn replace_runs(
        &mut self,
        tp: TopicPartition,
        replaced: &[BatchRef],
        segment: NewSegment,
    ) -> bool {
        let now_ms = self.now_ms;
        let (Some(first), Some(last)) = (replaced.first(), replaced.last()) else {
            return false;
        };
        if segment.key.as_str().len() > in_force(&self.limits).object_key_bytes_max as usize
            || segment.footer.start != segment.data_len
        {
            return false;
        }
        let Some(partition) = self.topics.partition_mut(&tp) else {
            return false;
        };
        if let Some(id) = self.objects.id_of(&segment.key) {
            // A write the quorum applied twice (a retry after a lost answer): the first made
            // the swap if the segment is indexed over the same offsets. Anything else with a
            // known key is refused.
            return self.objects.get(id).is_some()
                && partition.holds(id, first.base_offset, last.end_offset);
        }
        // The id the segment will get: registered only if the swap is made.
        let Some(id) = self
            .objects
            .register(segment.key.clone(), now_ms, Some(segment.footer))
        else {
            return false;
        };
        let new_ref = BatchRef {
            base_offset: first.base_offset,
            end_offset: last.end_offset,
            object: id,
            byte_start: 0,
            byte_len: segment.data_len,
            max_timestamp: segment.max_timestamp,
        };
        match partition.replace_runs(replaced, new_ref) {
            Some(released) => {
                self.objects.add_ref(id);
                for object in released {
                    self.objects.drop_ref(object, now_ms);
                }
                true
            }
            None => {
                // Never indexed: dead at once, so the collector deletes the segment.
                self.objects.bury_if_unreferenced(id, now_ms);
                false
            }
        }
    }

    fn delete_records(
        &mut self,
        tp: TopicPartition,
        offset: i64,
    ) -> Result<Offset, DeleteRecordsError> {
        let now_ms = self.now_ms;
        let partition = self
            .topics
            .partition_mut(&tp)
            .ok_or(DeleteRecordsError::UnknownTopicOrPartition)?;
        // Kafka: -1 deletes up to the high watermark; anything else outside 0..=HW is refused.
        let offset = match offset {
            -1 => partition.high_watermark,
            o if o < 0 || o > partition.high_watermark.0 => {
                return Err(DeleteRecordsError::OffsetOutOfRange);
            }
            o => Offset(o),
        };
        let released = partition.advance_log_start(offset);
        let start = partition.log_start_offset;
        for object in released {
            self.objects.drop_ref(object, now_ms);
        }
        self.transactions.trim(&tp, start);
        Ok(start)
    }

    /// Applies retention to every partition; returns how many log starts moved.
    fn enforce_retention(&mut self) -> u64 {
        let now_ms = self.now_ms;
        if now_ms == 0 {
            return 0; // no clock yet: every record would look new, or old
        }
        let mut moves = Vec::new();
        for topic in self.topics.iter() {
            let Some(retention) = Retention::of(&topic.configs) else {
                continue;
            };
            for (i, p) in topic.partitions.iter().enumerate() {
                if let Some(start) = retention.new_log_start(p, now_ms) {
                    moves.push((
                        TopicPartition {
                            topic_id: topic.id,
                            partition: i as i32,
                        },
                        start,
                    ));
                }
            }
        }
        for (tp, start) in &moves {
            if let Some(partition) = self.topics.partition_mut(tp) {
                for object in partition.advance_log_start(*start) {
                    self.objects.drop_ref(object, now_ms);
                }
                self.transactions.trim(tp, partition.log_start_offset);
            }
        }
        moves.len() as u64
    }

    /// The commit point of produced data: each batch is checked against its producer's
    /// sequence, then appended to its partition. A key seen recently gets its first outcome.
    fn commit_object(
        &mut self,
        object_key: ObjectKey,
        partitions: &[PartitionBatches],
    ) -> Vec<Vec<BatchOutcome>> {
        if let Some(previous) = self.recent_commits.get(&object_key) {
            return previous.clone();
        }
        if object_key.as_str().len() > in_force(&self.limits).object_key_bytes_max as usize {
            return partitions
                .iter()
                .map(|p| vec![BatchOutcome::Malformed; p.batches.len()])
                .collect();
        }
        // A key the state knows already (a retry after its outcome was forgotten) is refused:
        // its batches may be indexed, and a second registration would count them twice.
        let Some(id) = self.objects.register(object_key.clone(), self.now_ms, None) else {
            return partitions
                .iter()
                .map(|p| vec![BatchOutcome::Malformed; p.batches.len()])
                .collect();
        };
        let outcomes: Vec<Vec<BatchOutcome>> = partitions
            .iter()
            .map(|p| self.commit_partition(id, p))
            .collect();
        // Nothing indexed (all refused or duplicates): the object is garbage from the start.
        self.objects.bury_if_unreferenced(id, self.now_ms);
        self.recent_commits
            .remember(object_key, outcomes.clone(), self.now_ms);
        outcomes
    }

    fn commit_partition(
        &mut self,
        object: ObjectId,
        batches: &PartitionBatches,
    ) -> Vec<BatchOutcome> {
        let tp = batches.partition;
        let now_ms = self.now_ms;
        let Some(partition) = self.topics.partition_mut(&tp) else {
            return vec![BatchOutcome::UnknownTopicOrPartition; batches.batches.len()];
        };
        let mut outcomes = Vec::with_capacity(batches.batches.len());
        for batch in &batches.batches {
            if !batch.is_well_formed() {
                outcomes.push(BatchOutcome::Malformed);
                continue;
            }
            // A transactional producer writes only into its open transaction, to a partition
            // it added (Kafka's verification, KIP-890): a late batch is never indexed.
            let admitted = match batch.producer_id.is_idempotent() {
                true => self
                    .transactions
                    .admits(&tp, batch.producer_id, batch.producer_epoch),
                false => None,
            };
            let transactional = admitted.is_some();
            let in_transaction = admitted.unwrap_or(true);
            let outcome = match self.producers.check_sequence(&tp, batch) {
                Err(outcome) => outcome,
                Ok(()) if !in_transaction => BatchOutcome::InvalidTxnState,
                Ok(()) => match partition.append(object, batch) {
                    Some((base_offset, new_ref)) => {
                        if new_ref {
                            self.objects.add_ref(object);
                        }
                        self.producers.remember(&tp, batch, base_offset, now_ms);
                        if transactional {
                            self.transactions.wrote(tp, batch.producer_id, base_offset);
                        }
                        BatchOutcome::Appended { base_offset }
                    }
                    None => BatchOutcome::Malformed,
                },
            };
            outcomes.push(outcome);
        }
        outcomes
    }
}
