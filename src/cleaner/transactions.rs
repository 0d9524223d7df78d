//! What a cleaning pass tracks of transactions as it goes over a partition in offset order:
//! Kafka's `CleanedTransactionMetadata`. A data batch of a producer whose aborted transaction
//! has begun (by the partition's list of aborted transactions) is aborted and goes; a marker
//! may go only when no batch of its transaction was seen in this pass (a consumer that read
//! those batches before the pass still needs it), and not before its delete horizon.

use crate::protocol::record_batch::{RecordBatch, control_commit};
use std::collections::{BTreeMap, BTreeSet};

/// An aborted transaction of the partition: its producer, and the offsets of its first
/// record and of its abort marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
}

pub struct Transactions<'a> {
    /// The partition's aborted transactions by first offset, not yet begun in this pass.
    pending: &'a [AbortedTxn],
    /// Producers inside an aborted transaction: the offset of its marker, and whether one of
    /// its batches was seen.
    aborted: BTreeMap<i64, (i64, bool)>,
    /// Producers inside a committed transaction one of whose batches was seen.
    committed: BTreeSet<i64>,
}

impl<'a> Transactions<'a> {
    /// `aborted`: the partition's aborted transactions, in first-offset order.
    pub fn new(aborted: &'a [AbortedTxn]) -> Transactions<'a> {
        Transactions {
            pending: aborted,
            aborted: BTreeMap::new(),
            committed: BTreeSet::new(),
        }
    }

    /// Begins the aborted transactions that start at or before the batch's last offset and
    /// are still going at its first (Kafka's `collectAbortedTransactions`): one whose marker
    /// came before it ended before this pass began reading.
    fn begin(&mut self, batch: &RecordBatch) {
        let (first, last) = (
            batch.base_offset(),
            batch.base_offset() + batch.offset_count() - 1,
        );
        while let Some((txn, rest)) = self.pending.split_first() {
            if txn.first_offset > last {
                break;
            }
            if txn.last_offset >= first {
                self.aborted
                    .insert(txn.producer_id, (txn.last_offset, false));
            }
            self.pending = rest;
        }
    }

    /// A data batch: whether it belongs to an aborted transaction (and goes).
    pub fn on_data(&mut self, batch: &RecordBatch) -> bool {
        self.begin(batch);
        if !batch.is_transactional() {
            return false;
        }
        let producer = batch.producer_id();
        // Past its marker a transaction is over, even when a pass dropped the marker.
        if self
            .aborted
            .get(&producer)
            .is_some_and(|(marker, _)| batch.base_offset() > *marker)
        {
            self.aborted.remove(&producer);
        }
        match self.aborted.get_mut(&producer) {
            Some((_, seen)) => {
                *seen = true;
                true
            }
            None => {
                self.committed.insert(producer);
                false
            }
        }
    }

    /// A marker: whether its transaction left nothing in this pass, so that it may go once its
    /// delete horizon has passed.
    pub fn on_marker(&mut self, batch: &RecordBatch) -> bool {
        self.begin(batch);
        let producer = batch.producer_id();
        match control_commit(batch) {
            Some(false) => self.aborted.remove(&producer).is_none_or(|(_, seen)| !seen),
            Some(true) => !self.committed.remove(&producer),
            // An emptied marker batch was already cleaned; an unknown type is kept.
            None => batch.record_count() == 0,
        }
    }
}
