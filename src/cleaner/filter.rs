//! The second half of a pass: each batch of the partition, from its start, kept as it is,
//! rewritten without the records that go, or dropped (Kafka's `MemoryRecords.filterTo` with
//! the cleaner's `RecordFilter`).

use super::key_map::KeyMap;
use super::rewrite::rebuild;
use super::transactions::{AbortedTxn, Transactions};
use crate::protocol::compression::decompressed_limit;
use crate::protocol::record_batch::{RecordBatch, delete_horizon};
use crate::protocol::records::{self, RecordsError};
use bytes::Bytes;
use std::collections::BTreeMap;

/// What a pass is told besides the log.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The quorum's time at the pass: delete horizons are set from it and compared with it.
    pub now_ms: i64,
    /// `delete.retention.ms`: how long a tombstone (and a marker) stays once a pass has seen it.
    pub delete_retention_ms: i64,
}

/// What becomes of one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// Unchanged, byte for byte.
    Whole,
    /// Rewritten: fewer records, or a delete horizon stamped (same offsets either way).
    Rewritten(Bytes),
    /// Nothing of it is left.
    Dropped,
}

/// What a pass did, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleaned {
    pub batches_read: u64,
    pub records_read: u64,
    pub records_kept: u64,
    pub tombstones_kept: u64,
    pub bytes_read: u64,
    pub bytes_kept: u64,
}

pub struct Filter<'a> {
    keys: &'a KeyMap,
    settings: Settings,
    transactions: Transactions<'a>,
    /// The last offset of each producer's last data batch in the log: that batch keeps its
    /// header even when all its records go, as Kafka keeps it for the producer's sequence.
    last_batch_of: &'a BTreeMap<i64, i64>,
    pub cleaned: Cleaned,
    /// The delete horizon of the batch `batch` last answered, when that batch keeps
    /// tombstones: a later pass past it has something to drop.
    pub horizon: Option<i64>,
}

impl<'a> Filter<'a> {
    pub fn new(
        keys: &'a KeyMap,
        settings: Settings,
        aborted: &'a [AbortedTxn],
        last_batch_of: &'a BTreeMap<i64, i64>,
    ) -> Filter<'a> {
        Filter {
            keys,
            settings,
            transactions: Transactions::new(aborted),
            last_batch_of,
            cleaned: Cleaned::default(),
            horizon: None,
        }
    }

    /// The next batch of the partition, in offset order.
    pub fn batch(&mut self, batch: &RecordBatch) -> Result<Kept, RecordsError> {
        self.cleaned.batches_read += 1;
        self.cleaned.bytes_read += batch.size() as u64;
        let horizon = delete_horizon(batch);
        let now = self.settings.now_ms;
        let discard = if batch.is_control() {
            self.transactions.on_marker(batch) && horizon.is_some_and(|h| h <= now)
        } else {
            self.transactions.on_data(batch)
        };
        let last_offset = batch.base_offset() + batch.offset_count() - 1;
        let producers_last = batch.producer_id() >= 0
            && self.last_batch_of.get(&batch.producer_id()) == Some(&last_offset);
        let records = records::decode(batch, decompressed_limit(batch.size()))?;
        self.cleaned.records_read += records.len() as u64;
        let mut kept = Vec::with_capacity(records.len());
        let mut tombstones = false;
        if !discard {
            for record in records.iter() {
                if batch.is_control() {
                    kept.push(record.clone());
                    continue;
                }
                let offset = batch.base_offset() + i64::from(record.offset_delta);
                if self.retains(record, offset, horizon) {
                    tombstones |= record.value.is_none();
                    kept.push(record.clone());
                }
            }
        }
        self.cleaned.records_kept += kept.len() as u64;
        self.cleaned.tombstones_kept += kept.iter().filter(|r| r.value.is_none()).count() as u64;
        // A batch that keeps a tombstone, or a marker, gets its delete horizon the first time
        // a pass sees it: from then on its tombstones (or itself) stay delete.retention.ms.
        let stamp = (tombstones || (batch.is_control() && !discard)) && horizon.is_none();
        let stamped = stamp.then(|| now.saturating_add(self.settings.delete_retention_ms));
        // Only tombstones: a marker past its horizon may still be needed (its transaction's
        // records remain), and a pass for it alone could come round after round for nothing.
        self.horizon = if tombstones {
            stamped.or(horizon)
        } else {
            None
        };
        let outcome = if kept.is_empty() && !producers_last {
            Kept::Dropped
        } else if kept.len() == records.len() && !stamp {
            Kept::Whole
        } else {
            match rebuild(batch, &kept, stamped.or(horizon)) {
                Some(bytes) => Kept::Rewritten(bytes),
                // A codec Kafka does not define cannot be rewritten: kept whole.
                None => Kept::Whole,
            }
        };
        self.cleaned.bytes_kept += match &outcome {
            Kept::Whole => batch.size() as u64,
            Kept::Rewritten(bytes) => bytes.len() as u64,
            Kept::Dropped => 0,
        };
        Ok(outcome)
    }

    /// Kafka's `shouldRetainRecord`: beyond the map's reach, kept; otherwise only the latest
    /// record of its key, and a tombstone only until its batch's delete horizon.
    fn retains(&self, record: &records::Record, offset: i64, horizon: Option<i64>) -> bool {
        if self.keys.end_offset().is_none_or(|end| offset >= end) {
            return true;
        }
        let Some(key) = &record.key else {
            // A compacted topic refuses null keys; one from before the policy changed goes.
            return false;
        };
        let latest = self.keys.get(key).is_none_or(|latest| offset >= latest);
        let value_kept = record.value.is_some() || horizon.is_none_or(|h| h > self.settings.now_ms);
        latest && value_kept
    }
}
