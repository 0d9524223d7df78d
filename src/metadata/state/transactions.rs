//! Transactions: each transactional id's producer, epoch and open transaction, the partitions'
//! open and aborted transactions (what the last stable offset and read_committed fetches
//! need), and the rules of Kafka's transaction coordinator.
//!
//! The coordinator's state lives here, in the replicated state, so any agent can serve any
//! transactional request and no coordinator fails over. An `EndTxn` is one command: it writes
//! every participating partition's marker (at the offset the state assigns, see `markers`),
//! applies or drops the transaction's offsets and completes the transaction at once. There is
//! no prepared state to recover, and no window in which a transaction is half written.
//!
//! Bounds: at most `TRANSACTIONS_MAX` transactional ids, `TXN_PARTITIONS_MAX` partitions and
//! `TXN_GROUPS_MAX` groups per transaction; an id idle for `TRANSACTIONAL_ID_EXPIRATION_MS` is
//! forgotten; a partition's aborted transactions go when its log start passes them.

use super::groups::GroupOffset;
use crate::ids::{Offset, ProducerEpoch, ProducerId, TopicPartition};
use imbl::OrdMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Transactional ids held at once.
pub const TRANSACTIONS_MAX: usize = 100_000;
/// Partitions one transaction may write (each gets a marker when it ends).
pub const TXN_PARTITIONS_MAX: usize = 10_000;
/// Groups one transaction may commit offsets for.
pub const TXN_GROUPS_MAX: usize = 100;
/// Offsets one transaction may commit.
pub const TXN_OFFSETS_MAX: usize = 100_000;
/// Partitions, groups and offsets all open transactions hold together.
pub const TXN_HELD_TOTAL_MAX: u64 = 1_000_000;
/// A transactional id's length (Kafka sets none; the state must).
pub const TRANSACTIONAL_ID_BYTES_MAX: usize = 1024;
/// Kafka's `transactional.id.expiration.ms` default: seven days.
pub const TRANSACTIONAL_ID_EXPIRATION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// Kafka's `transaction.max.timeout.ms` default: fifteen minutes.
pub const TRANSACTION_MAX_TIMEOUT_MS: i64 = 15 * 60 * 1000;
/// How often (state time) open transactions are checked for their timeout, and idle ids for
/// expiry (Kafka's `transaction.abort.timed.out.transaction.cleanup.interval.ms`).
pub const TXN_CHECK_EVERY_MS: i64 = 10_000;

/// Where a transaction stands (Kafka's names; floe never rests in a prepared state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnStatus {
    Empty,
    Ongoing,
    CompleteCommit,
    CompleteAbort,
}

impl TxnStatus {
    /// The name `DescribeTransactions` and `ListTransactions` use.
    pub fn name(self) -> &'static str {
        match self {
            TxnStatus::Empty => "Empty",
            TxnStatus::Ongoing => "Ongoing",
            TxnStatus::CompleteCommit => "CompleteCommit",
            TxnStatus::CompleteAbort => "CompleteAbort",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transaction {
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    /// The producer id and epoch the last InitProducerId or EndTxn v5 replaced (the id too
    /// when its epoch was exhausted): a client retrying that call presents them and gets the
    /// current ones back. Cleared by a timeout's fence, so a zombie is never taken for a
    /// retry.
    pub replaced: Option<(ProducerId, ProducerEpoch)>,
    pub timeout_ms: i64,
    pub status: TxnStatus,
    /// Partitions added to the open transaction.
    pub partitions: BTreeSet<TopicPartition>,
    /// Groups added to it (AddOffsetsToTxn).
    pub groups: BTreeSet<String>,
    /// Offsets committed in it, visible when it commits: by (group, topic, partition).
    pub offsets: BTreeMap<(String, String, i32), GroupOffset>,
    /// State time when the open transaction began (its first partition or group).
    pub started_ms: i64,
    /// State time of the last change (what expiry counts from).
    pub updated_ms: i64,
}

/// An aborted transaction's span in one partition: what read_committed consumers drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortedTxn {
    pub producer_id: ProducerId,
    pub first_offset: Offset,
    /// The offset of its abort marker.
    pub last_offset: Offset,
}

/// What an EndTxn did: the partitions that got a marker, and the producer id and epoch the
/// producer goes on with (the next epoch under transaction version 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnEnd {
    pub marked: Vec<TopicPartition>,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
}

/// Why a transactional request was refused (`server::handlers::transactions` maps each to
/// Kafka's code for the request's version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnError {
    /// The id is unknown, or is held by another producer id.
    InvalidProducerIdMapping,
    /// An older epoch than the id's: a newer instance fenced this one.
    ProducerFenced,
    /// The request does not fit the transaction's state (e.g. EndTxn with nothing open).
    InvalidTxnState,
    /// Empty, too long.
    InvalidTransactionalId,
    /// Above `TRANSACTION_MAX_TIMEOUT_MS`, or not positive.
    InvalidTransactionTimeout,
    /// `TRANSACTIONS_MAX` ids are held (retriable: an idle one expires).
    TooManyTransactions,
    /// The transaction would exceed its own bounds (partitions, groups, offsets), or the
    /// bound on what all open transactions hold together.
    TransactionTooLarge,
    UnknownTopicOrPartition,
    /// Not tried because another partition of the request failed (Kafka's answer).
    OperationNotAttempted,
    /// A group id the offsets table refuses.
    InvalidGroupId,
    /// Offset metadata longer than `Limits::offset_metadata_bytes_max`.
    OffsetMetadataTooLarge,
    /// A new producer id while the producers table is full.
    TooManyProducers,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transactions {
    #[serde(deserialize_with = "super::persistent::ord_map")]
    by_id: OrdMap<String, Arc<Transaction>>,
    /// The transactional id of each transactional producer id.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    by_producer: OrdMap<ProducerId, String>,
    /// Per partition, the first offset each open transaction wrote there: the last stable
    /// offset is the least of them.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    open: OrdMap<TopicPartition, BTreeMap<ProducerId, Offset>>,
    /// Per partition, its aborted transactions in marker order.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    aborted: OrdMap<TopicPartition, Vec<AbortedTxn>>,
    /// When (state time) timeouts and expiry were last looked for.
    checked_ms: i64,
    /// Transactions aborted for their timeout, ever (a metric every node agrees on).
    timed_out_total: u64,
    /// Partitions, groups and offsets the open transactions hold (`TXN_HELD_TOTAL_MAX`).
    held: u64,
}

impl Transactions {
    pub fn get(&self, transactional_id: &str) -> Option<&Transaction> {
        self.by_id.get(transactional_id).map(|t| t.as_ref())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Transaction)> {
        self.by_id.iter().map(|(id, t)| (id, t.as_ref()))
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The (topic, partition) offsets of `group` that open transactions hold, not yet
    /// committed (OffsetFetch with `require_stable` answers UNSTABLE_OFFSET_COMMIT for them).
    pub fn pending_offsets(&self, group: &str) -> BTreeSet<(String, i32)> {
        self.by_id
            .values()
            .filter(|t| t.status == TxnStatus::Ongoing && t.groups.contains(group))
            .flat_map(|t| t.offsets.keys())
            .filter(|(g, _, _)| g == group)
            .map(|(_, topic, partition)| (topic.clone(), *partition))
            .collect()
    }

    /// Open transactions.
    pub fn open_count(&self) -> usize {
        self.by_id
            .values()
            .filter(|t| t.status == TxnStatus::Ongoing)
            .count()
    }

    pub fn timed_out_total(&self) -> u64 {
        self.timed_out_total
    }

    /// Partitions with open transactions, with the first offset of the earliest.
    pub fn unstable_partitions(&self) -> impl Iterator<Item = (TopicPartition, Offset)> + '_ {
        self.open
            .iter()
            .filter_map(|(tp, spans)| Some((*tp, *spans.values().min()?)))
    }

    /// The transactional id a producer id belongs to, if it is transactional.
    pub fn id_of(&self, producer: ProducerId) -> Option<&str> {
        self.by_producer.get(&producer).map(String::as_str)
    }

    /// For a batch of `producer` at `epoch` on `tp`: `None` when the producer is not
    /// transactional, else whether its open transaction holds the partition at that epoch.
    pub(super) fn admits(
        &self,
        tp: &TopicPartition,
        producer: ProducerId,
        epoch: ProducerEpoch,
    ) -> Option<bool> {
        let t = self.get(self.id_of(producer)?)?;
        Some(
            t.status == TxnStatus::Ongoing
                && t.producer_epoch == epoch
                && t.partitions.contains(tp),
        )
    }

    /// The first offset of the earliest open transaction on the partition, if any.
    pub fn first_unstable(&self, tp: &TopicPartition) -> Option<Offset> {
        self.open.get(tp)?.values().min().copied()
    }

    /// The first offset of the producer's open transaction on the partition.
    pub fn open_at(&self, tp: &TopicPartition, producer: ProducerId) -> Option<Offset> {
        self.open.get(tp)?.get(&producer).copied()
    }

    /// Aborted transactions on the partition overlapping `from..to`, oldest first.
    pub fn aborted_between(
        &self,
        tp: &TopicPartition,
        from: Offset,
        to: Offset,
    ) -> Vec<AbortedTxn> {
        self.aborted.get(tp).map_or_else(Vec::new, |all| {
            all.iter()
                .filter(|a| a.last_offset >= from && a.first_offset < to)
                .copied()
                .collect()
        })
    }

    /// Whether it is time (every `TXN_CHECK_EVERY_MS`) to look for timeouts and expiry.
    pub(super) fn due_check(&mut self, now_ms: i64) -> bool {
        if now_ms.saturating_sub(self.checked_ms) < TXN_CHECK_EVERY_MS {
            return false;
        }
        self.checked_ms = now_ms;
        true
    }

    /// Open transactions whose timeout has passed at `now_ms` (counted in the total).
    pub(super) fn timed_out(&mut self, now_ms: i64) -> Vec<String> {
        let due: Vec<String> = self
            .by_id
            .iter()
            .filter(|(_, t)| {
                t.status == TxnStatus::Ongoing && now_ms.saturating_sub(t.started_ms) > t.timeout_ms
            })
            .map(|(id, _)| id.clone())
            .collect();
        self.timed_out_total += due.len() as u64;
        due
    }

    /// What was stamped before the state's clock started (time 0) counts from its first tick:
    /// otherwise the first check would take it for seven days idle, or timed out.
    pub(super) fn start_clock(&mut self, now_ms: i64) {
        let unstamped: Vec<String> = self
            .by_id
            .iter()
            .filter(|(_, t)| t.updated_ms == 0 || t.started_ms == 0)
            .map(|(id, _)| id.clone())
            .collect();
        for id in unstamped {
            if let Some(t) = self.by_id.get_mut(&id).map(Arc::make_mut) {
                if t.updated_ms == 0 {
                    t.updated_ms = now_ms;
                }
                if t.started_ms == 0 {
                    t.started_ms = now_ms;
                }
            }
        }
    }

    /// Forgets ids idle (and not open) since before `cutoff_ms`; how many.
    pub(super) fn expire(&mut self, cutoff_ms: i64) -> u64 {
        let idle: Vec<String> = self
            .by_id
            .iter()
            .filter(|(_, t)| t.status != TxnStatus::Ongoing && t.updated_ms < cutoff_ms)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            if let Some(t) = self.by_id.remove(id) {
                self.by_producer.remove(&t.producer_id);
            }
        }
        idle.len() as u64
    }

    /// Checks a request's id, producer id and epoch against the transaction it names.
    pub(super) fn check(
        &self,
        transactional_id: &str,
        producer: ProducerId,
        epoch: ProducerEpoch,
    ) -> Result<&Transaction, TxnError> {
        let t = self
            .by_id
            .get(transactional_id)
            .ok_or(TxnError::InvalidProducerIdMapping)?;
        if t.producer_id != producer {
            return Err(TxnError::InvalidProducerIdMapping);
        }
        if epoch != t.producer_epoch {
            // Kafka answers an older epoch as fenced; a newer one was never issued.
            return Err(TxnError::ProducerFenced);
        }
        Ok(t)
    }

    pub(super) fn get_mut(&mut self, transactional_id: &str) -> Option<&mut Transaction> {
        self.by_id.get_mut(transactional_id).map(Arc::make_mut)
    }

    /// Registers a new transactional id under its producer.
    pub(super) fn insert(&mut self, transactional_id: String, t: Transaction) {
        if let Some(old) = self.by_id.get(&transactional_id) {
            self.by_producer.remove(&old.producer_id);
        }
        self.by_producer
            .insert(t.producer_id, transactional_id.clone());
        self.by_id.insert(transactional_id, Arc::new(t));
    }

    /// Moves an id to a new producer id (its epoch was exhausted).
    pub(super) fn rebind(&mut self, transactional_id: &str, producer: ProducerId) {
        if let Some(t) = self.by_id.get_mut(transactional_id).map(Arc::make_mut) {
            self.by_producer.remove(&t.producer_id);
            t.producer_id = producer;
            self.by_producer
                .insert(producer, transactional_id.to_string());
        }
    }

    /// Takes `n` more of what open transactions hold together; false (nothing taken) beyond
    /// `TXN_HELD_TOTAL_MAX`.
    pub(super) fn hold(&mut self, n: usize) -> bool {
        let after = self.held.saturating_add(n as u64);
        if after > TXN_HELD_TOTAL_MAX {
            return false;
        }
        self.held = after;
        true
    }

    /// Gives back what an ended transaction held.
    pub(super) fn release(&mut self, n: usize) {
        self.held = self.held.saturating_sub(n as u64);
    }

    /// Records the first batch an open transaction wrote to a partition.
    pub(super) fn wrote(&mut self, tp: TopicPartition, producer: ProducerId, offset: Offset) {
        self.open
            .entry(tp)
            .or_default()
            .entry(producer)
            .or_insert(offset);
    }

    /// Closes the producer's open span on a partition whose marker is at `marker`; an abort
    /// keeps the span for read_committed fetches. Returns whether the span existed.
    pub(super) fn close(
        &mut self,
        tp: TopicPartition,
        producer: ProducerId,
        marker: Offset,
        aborted: bool,
    ) -> bool {
        let Some(spans) = self.open.get_mut(&tp) else {
            return false;
        };
        let Some(first_offset) = spans.remove(&producer) else {
            return false;
        };
        if spans.is_empty() {
            self.open.remove(&tp);
        }
        if aborted {
            self.aborted.entry(tp).or_default().push(AbortedTxn {
                producer_id: producer,
                first_offset,
                last_offset: marker,
            });
        }
        true
    }

    /// Forgets the partition's aborted spans wholly below its new log start.
    pub(super) fn trim(&mut self, tp: &TopicPartition, log_start: Offset) {
        if let Some(spans) = self.aborted.get_mut(tp) {
            spans.retain(|a| a.last_offset >= log_start);
            if spans.is_empty() {
                self.aborted.remove(tp);
            }
        }
    }

    /// Forgets a deleted topic's partitions.
    pub(super) fn forget_topic(&mut self, topic_id: uuid::Uuid) {
        let gone = |tp: &TopicPartition| tp.topic_id == topic_id;
        let open: Vec<TopicPartition> = self.open.keys().filter(|tp| gone(tp)).copied().collect();
        for tp in open {
            self.open.remove(&tp);
        }
        let aborted: Vec<TopicPartition> =
            self.aborted.keys().filter(|tp| gone(tp)).copied().collect();
        for tp in aborted {
            self.aborted.remove(&tp);
        }
    }
}
