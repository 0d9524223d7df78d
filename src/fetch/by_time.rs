//! ListOffsets by timestamp at record granularity, as Kafka answers it: the offset and time of
//! the first record (in offset order) whose timestamp is at or after the target.
//!
//! The index only knows each run's largest timestamp, so the answer lies in the first run
//! whose largest timestamp reaches the target (a later run could only hold later offsets).
//! That run's batch headers show the first batch that reaches it, and only that batch's
//! records are read — decompressed if need be, and never kept: one pass finds the record.
//! The headers a run yields are kept in a byte-bounded cache (`RunBatchesCache`), so a
//! consumer group seeking many partitions to one time reads each run's headers once.
//!
//! A batch whose records cannot be read (a compressed batch the produce path did not
//! decompress may be malformed, or expand past the bound) is answered at batch granularity:
//! its first offset and its largest time, as a reader that skips past earlier records would.

use super::reader::Run;
use crate::ids::{ObjectKey, Offset};
use crate::metadata::state::{BatchRef, PartitionState};
use crate::object::key::is_segment;
use crate::object::segment::batch_base;
use crate::protocol::compression::decompressed_limit;
use crate::protocol::record_batch::{BatchError, Batches, RecordBatch};
use crate::protocol::records::walk_decompressed;
use bytes::Bytes;
use std::sync::Arc;

/// One batch of a run: its offsets, largest time and place in the run's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchTimes {
    pub base_offset: Offset,
    /// One past its last offset.
    pub end_offset: Offset,
    pub max_timestamp: i64,
    /// Where the batch starts in the run's bytes, and its size.
    pub at: u64,
    pub len: u64,
}

/// A run's data batches (control batches hold no records and are left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunBatches(Vec<BatchTimes>);

impl RunBatches {
    /// Walks the run's batch headers (`raw` is the run's bytes, starting at its first batch).
    pub fn read(run: &Run, raw: Bytes) -> Result<RunBatches, BatchError> {
        let mut batches = Vec::new();
        let in_segment = run.marker.is_none() && is_segment(run.object_key.as_str());
        let mut base = run.base_offset;
        let mut at = 0u64;
        for batch in Batches::new(raw) {
            let batch = batch?;
            base = batch_base(in_segment, base, batch.base_offset());
            let end = base + batch.offset_count();
            if !batch.is_control() {
                batches.push(BatchTimes {
                    base_offset: base,
                    end_offset: end,
                    max_timestamp: batch.max_timestamp(),
                    at,
                    len: batch.size() as u64,
                });
            }
            at += batch.size() as u64;
            base = end;
        }
        Ok(RunBatches(batches))
    }

    /// The batches that may hold the answer, in offset order: those whose largest time
    /// reaches the target and that end after the log start.
    pub fn candidates(&self, target: i64, log_start: Offset) -> impl Iterator<Item = &BatchTimes> {
        self.0
            .iter()
            .filter(move |b| b.max_timestamp >= target && b.end_offset > log_start)
    }

    fn weight(&self) -> u32 {
        u32::try_from(self.0.len() * std::mem::size_of::<BatchTimes>() + 64).unwrap_or(u32::MAX)
    }
}

/// The first record of `batch` (whose first offset is `base`) at or after `log_start` whose
/// time reaches `target`; the batch's first offset and largest time when its records cannot
/// be read.
pub fn first_record_at_or_after(
    batch: &RecordBatch,
    base: Offset,
    target: i64,
    log_start: Offset,
) -> Option<(Offset, i64)> {
    let limit = decompressed_limit(batch.size());
    let append_time = batch.is_log_append_time().then(|| batch.max_timestamp());
    let mut found = None;
    let walked = walk_decompressed(batch, limit, |r| {
        // Every record of a LogAppendTime batch carries the batch's time.
        let time = append_time.unwrap_or(r.timestamp);
        let offset = base + i64::from(r.offset_delta);
        if found.is_none() && time >= target && offset >= log_start {
            found = Some((offset, time));
        }
    });
    match walked {
        Ok(()) => found,
        Err(_) => Some((base.max(log_start), batch.max_timestamp())),
    }
}

/// The index entries whose largest timestamp reaches the target and that end after the log
/// start, in offset order.
pub fn candidate_entries(
    partition: &PartitionState,
    target: i64,
) -> impl Iterator<Item = &BatchRef> {
    partition
        .index
        .iter()
        .filter(move |r| r.max_timestamp >= target && r.end_offset > partition.log_start_offset)
}

/// What runs' headers yielded, keyed by where the run lies; bounded by bytes (0 disables it).
pub struct RunBatchesCache {
    runs: Option<moka::sync::Cache<(ObjectKey, u64), Arc<RunBatches>>>,
}

impl RunBatchesCache {
    pub fn new(bytes_max: u64) -> RunBatchesCache {
        let runs = (bytes_max > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(bytes_max)
                .weigher(|_key: &(ObjectKey, u64), batches: &Arc<RunBatches>| batches.weight())
                .build()
        });
        RunBatchesCache { runs }
    }

    pub fn get(&self, run: &Run) -> Option<Arc<RunBatches>> {
        self.runs
            .as_ref()?
            .get(&(run.object_key.clone(), run.byte_start))
    }

    pub fn insert(&self, run: &Run, batches: Arc<RunBatches>) {
        if let Some(runs) = &self.runs {
            runs.insert((run.object_key.clone(), run.byte_start), batches);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::{BatchSpec, build_batch};

    fn batch(records: i32, base_timestamp_ms: i64) -> Bytes {
        build_batch(BatchSpec {
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records,
            value_bytes: 4,
            base_timestamp_ms,
        })
    }

    fn run(base: i64, end: i64, max_timestamp: i64) -> Run {
        Run {
            base_offset: Offset(base),
            end_offset: Offset(end),
            object_key: ObjectKey::new("o".to_string()),
            byte_start: 0,
            byte_len: 0,
            max_timestamp,
            marker: None,
        }
    }

    fn entry(base: i64, end: i64, max_timestamp: i64) -> BatchRef {
        BatchRef {
            base_offset: Offset(base),
            end_offset: Offset(end),
            object: crate::metadata::state::ObjectId(0),
            byte_start: 0,
            byte_len: 0,
            max_timestamp,
        }
    }

    /// The answer for `target` in a run of `raw` starting at offset 10.
    fn answer(raw: &Bytes, target: i64, log_start: i64) -> Option<(Offset, i64)> {
        let batches = RunBatches::read(&run(10, 20, 204), raw.clone()).unwrap();
        let b = batches.candidates(target, Offset(log_start)).next()?;
        let bytes = raw.slice(b.at as usize..(b.at + b.len) as usize);
        let batch = RecordBatch::new(bytes).unwrap();
        first_record_at_or_after(&batch, b.base_offset, target, Offset(log_start))
    }

    /// In a compacted segment a batch's offsets are its header's: 10..15, then 18..23.
    #[test]
    fn a_segment_with_gaps_places_each_batch_at_its_own_offset() {
        let mut second = batch(5, 200).to_vec();
        crate::protocol::record_batch::set_base_offset(&mut second, 18);
        let mut first = batch(5, 100).to_vec();
        crate::protocol::record_batch::set_base_offset(&mut first, 10);
        let raw = Bytes::from([first, second].concat());
        let segment = Run {
            object_key: ObjectKey::new("v1/0000000000001-gaps.seg".to_string()),
            ..run(10, 23, 204)
        };
        let batches = RunBatches::read(&segment, raw.clone()).unwrap();
        let b = batches.candidates(150, Offset(0)).next().unwrap();
        assert_eq!((b.base_offset, b.end_offset), (Offset(18), Offset(23)));
        let bytes = raw.slice(b.at as usize..(b.at + b.len) as usize);
        let found = first_record_at_or_after(
            &RecordBatch::new(bytes).unwrap(),
            b.base_offset,
            150,
            Offset(0),
        );
        assert_eq!(found, Some((Offset(18), 200)));
    }

    #[test]
    fn finds_the_first_record_reaching_the_target_inside_a_batch() {
        // Two batches at offsets 10..15 (times 100..104) and 15..20 (times 200..204).
        let raw = Bytes::from([batch(5, 100), batch(5, 200)].concat());
        assert_eq!(answer(&raw, 0, 0), Some((Offset(10), 100)));
        assert_eq!(answer(&raw, 103, 0), Some((Offset(13), 103)));
        assert_eq!(answer(&raw, 105, 0), Some((Offset(15), 200)));
        assert_eq!(answer(&raw, 202, 0), Some((Offset(17), 202)));
        assert_eq!(answer(&raw, 205, 0), None);
        // Records below the log start are gone.
        assert_eq!(answer(&raw, 0, 12), Some((Offset(12), 102)));
    }

    #[test]
    fn an_unreadable_batch_is_answered_at_batch_granularity() {
        // A batch that claims gzip but holds plain records.
        let mut raw = batch(5, 100).to_vec();
        raw[22] |= 1;
        let crc = crc32c::crc32c(&raw[21..]);
        raw[17..21].copy_from_slice(&crc.to_be_bytes());
        let batch = RecordBatch::new(Bytes::from(raw)).unwrap();
        assert_eq!(
            first_record_at_or_after(&batch, Offset(10), 102, Offset(0)),
            Some((Offset(10), 104))
        );
    }

    #[test]
    fn candidates_reach_the_target_and_end_after_the_log_start() {
        let partition = PartitionState {
            log_start_offset: Offset(5),
            high_watermark: Offset(30),
            index: imbl::vector![entry(0, 5, 900), entry(5, 10, 50), entry(10, 20, 300)],
            bytes: 0,
        };
        let bases = |target| {
            candidate_entries(&partition, target)
                .map(|r| r.base_offset.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(bases(100), vec![10]);
        assert_eq!(bases(0), vec![5, 10]);
        assert_eq!(bases(1000), Vec::<i64>::new());
    }
}
