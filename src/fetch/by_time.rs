//! ListOffsets by timestamp at record granularity, as Kafka answers it: the offset and time of
//! the first record (in offset order) whose timestamp is at or after the target.
//!
//! The index only knows each run's largest timestamp, so the answer lies in the first run
//! whose largest timestamp reaches the target (a later run could only hold later offsets).
//! That run's batch headers show the first batch that reaches it, and only that batch's
//! records are read — decompressed if need be. What a run yields is kept in a byte-bounded
//! cache (`RunTimesCache`), so a consumer group seeking many partitions to one time reads
//! each run once.

use crate::ids::{ObjectKey, Offset};
use crate::metadata::state::{BatchRef, PartitionState};
use crate::protocol::record_batch::{BatchError, Batches};
use crate::protocol::records::{RecordsError, walk_decompressed};
use bytes::Bytes;
use std::sync::Arc;

/// A batch decompresses to at most this many bytes (Kafka's largest batch is far smaller).
const DECOMPRESSED_BATCH_MAX: usize = 64 << 20;

/// Every record's offset and timestamp in one run, in offset order; control batches (which
/// hold no data) are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTimes(Vec<(Offset, i64)>);

#[derive(Debug, thiserror::Error)]
pub enum RunTimesError {
    #[error("malformed batch")]
    Batch(#[from] BatchError),
    #[error("malformed records")]
    Records(#[from] RecordsError),
}

impl RunTimes {
    /// Walks the run's batches (`raw` is the run's bytes, starting at its first batch).
    pub fn read(run: &BatchRef, raw: Bytes) -> Result<RunTimes, RunTimesError> {
        let mut times = Vec::new();
        let mut base = run.base_offset;
        for batch in Batches::new(raw) {
            let batch = batch?;
            let next = base + batch.offset_count();
            if !batch.is_control() {
                if batch.is_log_append_time() {
                    // Every record of a LogAppendTime batch carries the batch's time.
                    let time = batch.max_timestamp();
                    walk_decompressed(&batch, DECOMPRESSED_BATCH_MAX, |r| {
                        times.push((base + i64::from(r.offset_delta), time))
                    })?;
                } else {
                    walk_decompressed(&batch, DECOMPRESSED_BATCH_MAX, |r| {
                        times.push((base + i64::from(r.offset_delta), r.timestamp))
                    })?;
                }
            }
            base = next;
        }
        Ok(RunTimes(times))
    }

    /// The first record at or after `log_start` whose time reaches `target`.
    pub fn first_at_or_after(&self, target: i64, log_start: Offset) -> Option<(Offset, i64)> {
        self.0
            .iter()
            .find(|(offset, time)| *time >= target && *offset >= log_start)
            .copied()
    }

    fn weight(&self) -> u32 {
        u32::try_from(self.0.len() * std::mem::size_of::<(Offset, i64)>() + 64).unwrap_or(u32::MAX)
    }
}

/// The runs that may hold the answer, in offset order: those whose largest timestamp reaches
/// the target and that end after the log start.
pub fn candidate_runs(partition: &PartitionState, target: i64) -> Vec<BatchRef> {
    partition
        .index
        .iter()
        .filter(|r| r.max_timestamp >= target && r.end_offset > partition.log_start_offset)
        .cloned()
        .collect()
}

/// What runs yielded, keyed by where the run lies; bounded by bytes (0 disables it).
pub struct RunTimesCache {
    runs: Option<moka::sync::Cache<(ObjectKey, u64), Arc<RunTimes>>>,
}

impl RunTimesCache {
    pub fn new(bytes_max: u64) -> RunTimesCache {
        let runs = (bytes_max > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(bytes_max)
                .weigher(|_key: &(ObjectKey, u64), times: &Arc<RunTimes>| times.weight())
                .build()
        });
        RunTimesCache { runs }
    }

    pub fn get(&self, run: &BatchRef) -> Option<Arc<RunTimes>> {
        self.runs
            .as_ref()?
            .get(&(run.object_key.clone(), run.byte_start))
    }

    pub fn insert(&self, run: &BatchRef, times: Arc<RunTimes>) {
        if let Some(runs) = &self.runs {
            runs.insert((run.object_key.clone(), run.byte_start), times);
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

    fn run(base: i64, end: i64, max_timestamp: i64) -> BatchRef {
        BatchRef {
            base_offset: Offset(base),
            end_offset: Offset(end),
            object_key: ObjectKey::new("o".to_string()),
            byte_start: 0,
            byte_len: 0,
            max_timestamp,
        }
    }

    #[test]
    fn finds_the_first_record_reaching_the_target_inside_a_batch() {
        // Two batches at offsets 10..15 (times 100..104) and 15..20 (times 200..204).
        let raw = Bytes::from([batch(5, 100), batch(5, 200)].concat());
        let times = RunTimes::read(&run(10, 20, 204), raw).unwrap();
        assert_eq!(
            times.first_at_or_after(0, Offset(0)),
            Some((Offset(10), 100))
        );
        assert_eq!(
            times.first_at_or_after(103, Offset(0)),
            Some((Offset(13), 103))
        );
        assert_eq!(
            times.first_at_or_after(105, Offset(0)),
            Some((Offset(15), 200))
        );
        assert_eq!(
            times.first_at_or_after(202, Offset(0)),
            Some((Offset(17), 202))
        );
        assert_eq!(times.first_at_or_after(205, Offset(0)), None);
        // Records below the log start are gone.
        assert_eq!(
            times.first_at_or_after(0, Offset(12)),
            Some((Offset(12), 102))
        );
    }

    #[test]
    fn candidates_reach_the_target_and_end_after_the_log_start() {
        let partition = PartitionState {
            log_start_offset: Offset(5),
            high_watermark: Offset(30),
            index: imbl::vector![run(0, 5, 900), run(5, 10, 50), run(10, 20, 300)],
        };
        let bases = |target| {
            candidate_runs(&partition, target)
                .iter()
                .map(|r| r.base_offset.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(bases(100), vec![10]);
        assert_eq!(bases(0), vec![5, 10]);
        assert_eq!(bases(1000), Vec::<i64>::new());
    }
}
