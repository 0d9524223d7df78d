//! The transactional commands, where a transaction touches several parts of the state at
//! once: the producers (epochs), the partitions' logs (markers) and the groups' offsets.
//! `transactions` holds the coordinator's rules; this file composes them.

use super::Apply;
use crate::ids::{ProducerEpoch, ProducerId, TopicPartition};
use crate::metadata::state::MetadataState;
use crate::metadata::state::groups::GroupOffset;
use crate::metadata::state::markers::Marker;
use crate::metadata::state::parts::in_force;
use crate::metadata::state::transactions::{
    TRANSACTION_MAX_TIMEOUT_MS, TRANSACTIONAL_ID_BYTES_MAX, TRANSACTIONAL_ID_EXPIRATION_MS,
    TRANSACTIONS_MAX, TXN_GROUPS_MAX, TXN_OFFSETS_MAX, TXN_PARTITIONS_MAX, Transaction, TxnEnd,
    TxnError, TxnStatus,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

noun! {
    /// What changes a transaction.
    TransactionCommand => TransactionOutcome {
        InitTransactionalProducer => Result<(ProducerId, ProducerEpoch), TxnError>,
        AddPartitionsToTxn => Vec<Result<(), TxnError>>,
        AddOffsetsToTxn => Result<(), TxnError>,
        TxnOffsetCommit => Vec<Result<(), TxnError>>,
        EndTxn => Result<TxnEnd, TxnError>,
    }
}

/// InitProducerId with a transactional id: its producer id and new epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitTransactionalProducer {
    pub transactional_id: String,
    pub timeout_ms: i64,
    pub existing: Option<(ProducerId, ProducerEpoch)>,
}

impl Apply for InitTransactionalProducer {
    fn apply(self, state: &mut MetadataState) -> Result<(ProducerId, ProducerEpoch), TxnError> {
        state.init_transactional_producer(self.transactional_id, self.timeout_ms, self.existing)
    }
}

/// Adds partitions to the transaction; one result per partition, in command order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddPartitionsToTxn {
    pub transactional_id: String,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    /// By topic name and partition, resolved when applied.
    pub partitions: Vec<(String, i32)>,
}

impl Apply for AddPartitionsToTxn {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<(), TxnError>> {
        state.add_partitions_to_txn(
            &self.transactional_id,
            self.producer_id,
            self.producer_epoch,
            &self.partitions,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddOffsetsToTxn {
    pub transactional_id: String,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    pub group: String,
}

impl Apply for AddOffsetsToTxn {
    fn apply(self, state: &mut MetadataState) -> Result<(), TxnError> {
        state.add_offsets_to_txn(
            &self.transactional_id,
            self.producer_id,
            self.producer_epoch,
            self.group,
        )
    }
}

/// Offsets committed into the transaction; one result per offset, in command order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOffsetCommit {
    pub transactional_id: String,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    pub group: String,
    /// (topic, partition, offset), in request order.
    pub offsets: Vec<(String, i32, GroupOffset)>,
}

impl Apply for TxnOffsetCommit {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<(), TxnError>> {
        state.txn_offset_commit(
            &self.transactional_id,
            self.producer_id,
            self.producer_epoch,
            &self.group,
            self.offsets,
        )
    }
}

/// EndTxn: commit or abort, writing the markers. `next_epoch`: transaction version 2
/// (EndTxn v5, KIP-890 part 2), where every end moves the producer to its next epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndTxn {
    pub transactional_id: String,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    pub commit: bool,
    pub next_epoch: bool,
}

impl Apply for EndTxn {
    fn apply(self, state: &mut MetadataState) -> Result<TxnEnd, TxnError> {
        state.end_txn(
            &self.transactional_id,
            (self.producer_id, self.producer_epoch),
            self.commit,
            self.next_epoch,
        )
    }
}

impl MetadataState {
    /// InitProducerId with a transactional id: a new producer id for a new id; otherwise the
    /// next epoch (fencing every older instance), after aborting what the previous instance
    /// left open. `existing` is what a v3+ client presents (KIP-360); it must be the current
    /// holder.
    pub(super) fn init_transactional_producer(
        &mut self,
        transactional_id: String,
        timeout_ms: i64,
        existing: Option<(ProducerId, ProducerEpoch)>,
    ) -> Result<(ProducerId, ProducerEpoch), TxnError> {
        if transactional_id.is_empty() || transactional_id.len() > TRANSACTIONAL_ID_BYTES_MAX {
            return Err(TxnError::InvalidTransactionalId);
        }
        if timeout_ms <= 0 || timeout_ms > TRANSACTION_MAX_TIMEOUT_MS {
            return Err(TxnError::InvalidTransactionTimeout);
        }
        let now_ms = self.now_ms;
        let Some(current) = self.transactions.get(&transactional_id).cloned() else {
            if self.transactions.len() >= TRANSACTIONS_MAX {
                return Err(TxnError::TooManyTransactions);
            }
            let (id, epoch) = self
                .producers
                .init(None, now_ms, self.limits.is_some())
                .map_err(|_| TxnError::TooManyProducers)?;
            self.transactions.insert(
                transactional_id,
                Transaction {
                    producer_id: id,
                    producer_epoch: epoch,
                    replaced: None,
                    timeout_ms,
                    status: TxnStatus::Empty,
                    partitions: BTreeSet::new(),
                    groups: BTreeSet::new(),
                    offsets: BTreeMap::new(),
                    started_ms: now_ms,
                    updated_ms: now_ms,
                },
            );
            return Ok((id, epoch));
        };
        if let Some(presented) = existing {
            if current.replaced == Some(presented) && current.status != TxnStatus::Ongoing {
                // A retry of the call that moved the epoch on: its answer again.
                return Ok((current.producer_id, current.producer_epoch));
            }
            if presented != (current.producer_id, current.producer_epoch) {
                return Err(TxnError::ProducerFenced);
            }
        }
        // Nothing changes unless all of it can (an exhausted epoch needs a new producer id).
        if !self.can_move_epoch(&current) {
            return Err(TxnError::TooManyProducers);
        }
        if current.status == TxnStatus::Ongoing {
            self.end_transaction(&transactional_id, false);
        }
        let (id, epoch) = self.next_epoch(&transactional_id, &current)?;
        if let Some(t) = self.transactions.get_mut(&transactional_id) {
            t.timeout_ms = timeout_ms;
            t.status = TxnStatus::Empty;
            t.replaced = Some((current.producer_id, current.producer_epoch));
        }
        Ok((id, epoch))
    }

    /// Whether `next_epoch` can succeed: a new producer id is needed once the epoch is
    /// exhausted, and the producers table may be full.
    fn can_move_epoch(&self, current: &Transaction) -> bool {
        current.producer_epoch.0 < i16::MAX - 1 || self.producers.has_room(self.limits.is_some())
    }

    /// Moves a transactional id to its next epoch (a new producer id once the epoch is
    /// exhausted, as in Kafka): batches and requests of the older epoch are fenced.
    fn next_epoch(
        &mut self,
        transactional_id: &str,
        current: &Transaction,
    ) -> Result<(ProducerId, ProducerEpoch), TxnError> {
        let now_ms = self.now_ms;
        let (id, epoch) = if current.producer_epoch.0 < i16::MAX - 1 {
            let next = (
                current.producer_id,
                ProducerEpoch(current.producer_epoch.0 + 1),
            );
            self.producers.set_epoch(next.0, next.1, now_ms);
            next
        } else {
            let fresh = self
                .producers
                .init(None, now_ms, self.limits.is_some())
                .map_err(|_| TxnError::TooManyProducers)?;
            self.transactions.rebind(transactional_id, fresh.0);
            // The old id is no one's now: its last epoch is fenced for good, so a zombie's
            // batches are refused rather than taken as a plain idempotent producer's.
            self.producers
                .set_epoch(current.producer_id, ProducerEpoch(i16::MAX), now_ms);
            fresh
        };
        if let Some(t) = self.transactions.get_mut(transactional_id) {
            t.producer_epoch = epoch;
            t.updated_ms = now_ms;
        }
        Ok((id, epoch))
    }

    /// AddPartitionsToTxn: the partitions join the transaction (opening it). All or none: a
    /// request naming an unknown partition adds nothing, and the others are not attempted.
    pub(super) fn add_partitions_to_txn(
        &mut self,
        transactional_id: &str,
        producer: ProducerId,
        epoch: ProducerEpoch,
        partitions: &[(String, i32)],
    ) -> Vec<Result<(), TxnError>> {
        if let Err(e) = self.transactions.check(transactional_id, producer, epoch) {
            return vec![Err(e); partitions.len()];
        }
        let resolved: Vec<Option<TopicPartition>> = partitions
            .iter()
            .map(|(topic, partition)| {
                let topic = self.topics.get(topic)?;
                usize::try_from(*partition)
                    .ok()
                    .filter(|p| *p < topic.partitions.len())
                    .map(|_| TopicPartition {
                        topic_id: topic.id,
                        partition: *partition,
                    })
            })
            .collect();
        if resolved.iter().any(Option::is_none) {
            return resolved
                .iter()
                .map(|tp| match tp {
                    None => Err(TxnError::UnknownTopicOrPartition),
                    Some(_) => Err(TxnError::OperationNotAttempted),
                })
                .collect();
        }
        let now_ms = self.now_ms;
        let Some(t) = self.transactions.get(transactional_id) else {
            return vec![Err(TxnError::InvalidProducerIdMapping); partitions.len()];
        };
        let new: BTreeSet<TopicPartition> = resolved
            .into_iter()
            .flatten()
            .filter(|tp| !t.partitions.contains(tp))
            .collect();
        if t.partitions.len() + new.len() > TXN_PARTITIONS_MAX {
            return vec![Err(TxnError::TransactionTooLarge); partitions.len()];
        }
        let added = new.len();
        if !self.transactions.hold(added) {
            return vec![Err(TxnError::TransactionTooLarge); partitions.len()];
        }
        if let Some(t) = self.transactions.get_mut(transactional_id) {
            open(t, now_ms);
            t.partitions.extend(new);
        }
        vec![Ok(()); partitions.len()]
    }

    /// AddOffsetsToTxn: the group's offsets may be committed in the transaction.
    pub(super) fn add_offsets_to_txn(
        &mut self,
        transactional_id: &str,
        producer: ProducerId,
        epoch: ProducerEpoch,
        group: String,
    ) -> Result<(), TxnError> {
        self.transactions.check(transactional_id, producer, epoch)?;
        if !in_force(&self.limits).group_id_allows(&group) {
            return Err(TxnError::InvalidGroupId);
        }
        let now_ms = self.now_ms;
        let t = self
            .transactions
            .get(transactional_id)
            .ok_or(TxnError::InvalidProducerIdMapping)?;
        let new = !t.groups.contains(&group);
        if new && t.groups.len() >= TXN_GROUPS_MAX {
            return Err(TxnError::TransactionTooLarge);
        }
        if new && !self.transactions.hold(1) {
            return Err(TxnError::TransactionTooLarge);
        }
        if let Some(t) = self.transactions.get_mut(transactional_id) {
            open(t, now_ms);
            t.groups.insert(group);
        }
        Ok(())
    }

    /// TxnOffsetCommit: offsets held in the transaction until it ends (kept on commit,
    /// dropped on abort). One result per offset, in order.
    pub(super) fn txn_offset_commit(
        &mut self,
        transactional_id: &str,
        producer: ProducerId,
        epoch: ProducerEpoch,
        group: &str,
        offsets: Vec<(String, i32, GroupOffset)>,
    ) -> Vec<Result<(), TxnError>> {
        let count = offsets.len();
        let whole = match self.transactions.check(transactional_id, producer, epoch) {
            Err(e) => Err(e),
            Ok(t) if t.status != TxnStatus::Ongoing || !t.groups.contains(group) => {
                Err(TxnError::InvalidTxnState)
            }
            Ok(t) if t.offsets.len().saturating_add(count) > TXN_OFFSETS_MAX => {
                Err(TxnError::TransactionTooLarge)
            }
            Ok(_) => Ok(()),
        };
        if let Err(e) = whole {
            return vec![Err(e); count];
        }
        let limits = in_force(&self.limits).clone();
        let checked: Vec<Result<(), TxnError>> = offsets
            .iter()
            .map(|(topic, partition, offset)| {
                if !self.topics.has_partition(topic, *partition) {
                    Err(TxnError::UnknownTopicOrPartition)
                } else if !limits.offset_metadata_allows(offset.metadata.as_deref()) {
                    Err(TxnError::OffsetMetadataTooLarge)
                } else {
                    Ok(())
                }
            })
            .collect();
        let now_ms = self.now_ms;
        // What the transaction holds grows by the offsets it did not hold yet.
        let fresh = self.transactions.get(transactional_id).map_or(0, |t| {
            offsets
                .iter()
                .zip(&checked)
                .filter(|((topic, partition, _), ok)| {
                    ok.is_ok()
                        && !t
                            .offsets
                            .contains_key(&(group.to_string(), topic.clone(), *partition))
                })
                .count()
        });
        if !self.transactions.hold(fresh) {
            return vec![Err(TxnError::TransactionTooLarge); count];
        }
        if let Some(t) = self.transactions.get_mut(transactional_id) {
            for ((topic, partition, offset), ok) in offsets.into_iter().zip(&checked) {
                if ok.is_ok() {
                    t.offsets
                        .insert((group.to_string(), topic, partition), offset);
                }
            }
            t.updated_ms = now_ms;
        }
        checked
    }

    /// EndTxn: commits or aborts the open transaction, writing its markers. A retry of an end
    /// already made succeeds again; anything else out of turn is `InvalidTxnState`.
    ///
    /// With `next_epoch` (transaction version 2) the producer then moves to its next epoch,
    /// so nothing of the ended transaction can join the next one; a retry comes with the
    /// epoch the end replaced and gets the same answer; an abort with nothing open is allowed
    /// (it only moves the epoch), as in Kafka.
    pub(super) fn end_txn(
        &mut self,
        transactional_id: &str,
        (producer, epoch): (ProducerId, ProducerEpoch),
        commit: bool,
        next_epoch: bool,
    ) -> Result<TxnEnd, TxnError> {
        let current = self
            .transactions
            .get(transactional_id)
            .ok_or(TxnError::InvalidProducerIdMapping)?
            .clone();
        let done_already = matches!(
            (current.status, commit),
            (TxnStatus::CompleteCommit, true) | (TxnStatus::CompleteAbort, false)
        );
        let unchanged = |current: &Transaction| TxnEnd {
            marked: Vec::new(),
            producer_id: current.producer_id,
            producer_epoch: current.producer_epoch,
        };
        if next_epoch && current.replaced == Some((producer, epoch)) && done_already {
            return Ok(unchanged(&current));
        }
        self.transactions.check(transactional_id, producer, epoch)?;
        if next_epoch && !self.can_move_epoch(&current) {
            return Err(TxnError::TooManyProducers);
        }
        let marked = match (current.status, commit) {
            (TxnStatus::Ongoing, _) => self.end_transaction(transactional_id, commit),
            _ if done_already && !next_epoch => return Ok(unchanged(&current)),
            (_, false) if next_epoch => Vec::new(),
            _ => return Err(TxnError::InvalidTxnState),
        };
        if !next_epoch {
            return Ok(TxnEnd {
                marked,
                ..unchanged(&current)
            });
        }
        if current.status != TxnStatus::Ongoing
            && let Some(t) = self.transactions.get_mut(transactional_id)
        {
            t.status = TxnStatus::CompleteAbort;
        }
        let (producer_id, producer_epoch) = self.next_epoch(transactional_id, &current)?;
        if let Some(t) = self.transactions.get_mut(transactional_id) {
            t.replaced = Some((current.producer_id, current.producer_epoch));
        }
        Ok(TxnEnd {
            marked,
            producer_id,
            producer_epoch,
        })
    }

    /// Ends the open transaction: a marker at the high watermark of every partition it added
    /// (one that no longer exists is passed by), its offsets applied on commit. Returns the
    /// partitions marked.
    fn end_transaction(&mut self, transactional_id: &str, commit: bool) -> Vec<TopicPartition> {
        let now_ms = self.now_ms;
        let Some(t) = self.transactions.get(transactional_id).cloned() else {
            return Vec::new();
        };
        let held = t.partitions.len() + t.groups.len() + t.offsets.len();
        let marker = Marker {
            producer_id: t.producer_id,
            producer_epoch: t.producer_epoch,
            commit,
        };
        let mut marked = Vec::with_capacity(t.partitions.len());
        for tp in &t.partitions {
            let Some(partition) = self.topics.partition_mut(tp) else {
                continue;
            };
            let Some(offset) = marker
                .entry(partition.high_watermark, now_ms)
                .and_then(|entry| partition.append_unstored(entry))
            else {
                continue;
            };
            self.transactions.close(*tp, t.producer_id, offset, !commit);
            marked.push(*tp);
        }
        if commit {
            for ((group, topic, partition), offset) in t.offsets {
                // Checked when they were committed into the transaction; a topic deleted or a
                // group limit reached since loses the offset, as a plain commit would fail.
                let _ = self.offset_commit(group, topic, partition, offset);
            }
        }
        self.transactions.release(held);
        if let Some(t) = self.transactions.get_mut(transactional_id) {
            t.status = if commit {
                TxnStatus::CompleteCommit
            } else {
                TxnStatus::CompleteAbort
            };
            t.partitions.clear();
            t.groups.clear();
            t.offsets.clear();
            t.updated_ms = now_ms;
        }
        marked
    }

    /// On a tick: aborts the open transactions older than their timeout and fences their
    /// producers (the next epoch), and forgets ids idle for `TRANSACTIONAL_ID_EXPIRATION_MS`.
    /// Returns how many transactions timed out.
    pub(super) fn check_transactions(&mut self) -> u64 {
        let now_ms = self.now_ms;
        if !self.transactions.due_check(now_ms) {
            return 0;
        }
        let timed_out = self.transactions.timed_out(now_ms);
        for id in &timed_out {
            self.end_transaction(id, false);
            if let Some(current) = self.transactions.get(id).cloned() {
                // An exhausted epoch takes a fresh id only when the producers table has one;
                // otherwise the old epoch stays, aborted.
                let _ = self.next_epoch(id, &current);
            }
            // A fence, not a call a client could retry.
            if let Some(t) = self.transactions.get_mut(id) {
                t.replaced = None;
            }
        }
        self.transactions
            .expire(now_ms.saturating_sub(TRANSACTIONAL_ID_EXPIRATION_MS));
        timed_out.len() as u64
    }
}

/// Opens the transaction if it is not open yet.
fn open(t: &mut Transaction, now_ms: i64) {
    if t.status != TxnStatus::Ongoing {
        t.status = TxnStatus::Ongoing;
        t.started_ms = now_ms;
    }
    t.updated_ms = now_ms;
}
