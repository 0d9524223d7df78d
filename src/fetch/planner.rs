//! Fetch planning: pure decisions about which byte ranges answer a fetch.
//!
//! The partition's index lists contiguous runs of batches (offset range → object byte range).
//! A fetch at offset `o` starts at the run containing `o` and takes whole runs while the byte
//! budget lasts; the first run is always taken, so a batch larger than the budget still makes
//! progress (Kafka's "at least one batch" rule). The reader trims to whole batches.
//!
//! A read_committed fetch stops at the last stable offset (`stable`): nothing from the first
//! open transaction on is planned. Other fetches pass the high watermark.

use crate::ids::Offset;
use crate::metadata::state::markers::read_bytes;
use crate::metadata::state::{BatchRef, PartitionState};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchPlan {
    /// Nothing at or after the offset yet (`offset == high watermark`): wait or answer empty.
    Empty,
    OutOfRange,
    Read(Vec<BatchRef>),
}

pub fn plan_fetch(
    partition: &PartitionState,
    offset: Offset,
    max_bytes: u64,
    stable: Offset,
) -> FetchPlan {
    if offset < partition.log_start_offset || offset > partition.high_watermark {
        return FetchPlan::OutOfRange;
    }
    if offset >= partition.high_watermark.min(stable) {
        return FetchPlan::Empty;
    }
    let first = partition
        .index
        .binary_search_by(|r| {
            if r.end_offset <= offset {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        })
        .unwrap_or_else(|at| at);
    let mut reads = Vec::new();
    let mut budget = max_bytes;
    for r in partition.index.focus().narrow(first..).into_iter() {
        let bytes = read_bytes(r);
        if r.base_offset >= stable || !reads.is_empty() && bytes > budget {
            break;
        }
        budget = budget.saturating_sub(bytes);
        reads.push(r.clone());
        if budget == 0 {
            break;
        }
    }
    if reads.is_empty() {
        FetchPlan::Empty
    } else {
        FetchPlan::Read(reads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(base: i64, end: i64, len: u64, ts: i64) -> BatchRef {
        BatchRef {
            base_offset: Offset(base),
            end_offset: Offset(end),
            object: crate::metadata::state::ObjectId(base as u64),
            byte_start: 16,
            byte_len: len,
            max_timestamp: ts,
        }
    }

    fn partition() -> PartitionState {
        PartitionState {
            log_start_offset: Offset(0),
            high_watermark: Offset(30),
            index: imbl::vector![
                run(0, 10, 100, 5),
                run(10, 20, 100, 50),
                run(20, 30, 100, 40),
            ],
            bytes: 300,
        }
    }

    #[test]
    fn starts_at_the_run_holding_the_offset_and_respects_the_budget() {
        let p = partition();
        let FetchPlan::Read(reads) = plan_fetch(&p, Offset(12), 150, Offset(i64::MAX)) else {
            panic!()
        };
        assert_eq!(
            reads.iter().map(|r| r.base_offset).collect::<Vec<_>>(),
            vec![Offset(10)]
        );
        let FetchPlan::Read(reads) = plan_fetch(&p, Offset(0), 1000, Offset(i64::MAX)) else {
            panic!()
        };
        assert_eq!(reads.len(), 3);
        // One run always comes back, however small the budget.
        let FetchPlan::Read(reads) = plan_fetch(&p, Offset(29), 1, Offset(i64::MAX)) else {
            panic!()
        };
        assert_eq!(reads[0].base_offset, Offset(20));
    }

    #[test]
    fn a_read_committed_plan_stops_at_the_last_stable_offset() {
        let p = partition();
        let FetchPlan::Read(reads) = plan_fetch(&p, Offset(0), 1000, Offset(20)) else {
            panic!()
        };
        assert_eq!(reads.len(), 2, "the run from 20 on is unstable");
        assert_eq!(
            plan_fetch(&p, Offset(20), 1000, Offset(20)),
            FetchPlan::Empty
        );
        assert_eq!(
            plan_fetch(&p, Offset(25), 1000, Offset(20)),
            FetchPlan::Empty
        );
        assert_eq!(
            plan_fetch(&p, Offset(31), 1000, Offset(20)),
            FetchPlan::OutOfRange
        );
    }

    #[test]
    fn edges() {
        let p = partition();
        assert_eq!(
            plan_fetch(&p, Offset(30), 100, Offset(i64::MAX)),
            FetchPlan::Empty
        );
        assert_eq!(
            plan_fetch(&p, Offset(31), 100, Offset(i64::MAX)),
            FetchPlan::OutOfRange
        );
        assert_eq!(
            plan_fetch(&p, Offset(-1), 100, Offset(i64::MAX)),
            FetchPlan::OutOfRange
        );
        assert_eq!(
            plan_fetch(&PartitionState::default(), Offset(0), 100, Offset(i64::MAX)),
            FetchPlan::Empty
        );
    }
}
