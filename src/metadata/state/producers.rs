//! Producer ids and epochs, and each idempotent producer's recent batches per partition.
//!
//! A producer id that has not produced or been re-initialised for `PRODUCER_ID_EXPIRATION_MS`
//! of the state's time is forgotten (Kafka's `producer.id.expiration.ms`): its next batch gets
//! `UNKNOWN_PRODUCER_ID`, and the client initialises again. The check runs every
//! `EXPIRY_CHECK_EVERY_MS`, as Kafka's does. At most `PRODUCERS_MAX` ids are held at once.

use super::index::{BatchOutcome, CommittedBatch};
use crate::ids::{Offset, ProducerEpoch, ProducerId, TopicPartition};
use imbl::OrdMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// How many recent batches per producer and partition are remembered to answer retries
/// (Kafka keeps 5, matching the clients' `max.in.flight.requests.per.connection` limit).
pub const PRODUCER_BATCH_WINDOW: usize = 5;
/// Kafka's `producer.id.expiration.ms` default: one day.
pub const PRODUCER_ID_EXPIRATION_MS: i64 = 24 * 60 * 60 * 1000;
/// Kafka's `producer.id.expiration.check.interval.ms` default: ten minutes.
pub const EXPIRY_CHECK_EVERY_MS: i64 = 10 * 60 * 1000;
/// Producer ids held at once (a producer costs its epoch and its sequence windows).
pub const PRODUCERS_MAX: usize = 1_000_000;

/// A batch the producer sent recently, remembered to recognise its retry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct SequencedBatch {
    first_sequence: i32,
    last_sequence: i32,
    base_offset: Offset,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ProducerState {
    pub(super) epoch: ProducerEpoch,
    pub(super) partitions: BTreeMap<TopicPartition, VecDeque<SequencedBatch>>,
    /// State time of its last batch or initialisation (0: before the state's clock started).
    pub(super) last_active_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InitProducerIdError {
    /// The id/epoch the client presented is not the current one.
    InvalidProducerEpoch,
    /// `PRODUCERS_MAX` ids are held; one is freed when an idle producer expires.
    TooManyProducers,
}

/// Every producer id issued, with its current epoch and recent batches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Producers {
    pub(super) next_id: i64,
    /// A persistent map of shared producers: a copy of the state shares it (see
    /// `PartitionState::index`); a producer changed after a copy is copied alone.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    pub(super) by_id: OrdMap<ProducerId, Arc<ProducerState>>,
}

/// A producer that has written to a partition recently (DescribeProducers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveProducer {
    pub id: ProducerId,
    pub epoch: ProducerEpoch,
    pub last_sequence: i32,
    /// State time of its last batch or initialisation.
    pub last_active_ms: i64,
}

impl Producers {
    /// The producers whose recent batches on each of `partitions` are remembered: one scan of
    /// every producer, for admin requests only.
    pub fn active_on(
        &self,
        partitions: &[TopicPartition],
    ) -> BTreeMap<TopicPartition, Vec<ActiveProducer>> {
        let mut active: BTreeMap<TopicPartition, Vec<ActiveProducer>> =
            partitions.iter().map(|tp| (*tp, Vec::new())).collect();
        for (id, p) in self.by_id.iter() {
            for (tp, found) in active.iter_mut() {
                if let Some(last) = p.partitions.get(tp).and_then(|b| b.back()) {
                    found.push(ActiveProducer {
                        id: *id,
                        epoch: p.epoch,
                        last_sequence: last.last_sequence,
                        last_active_ms: p.last_active_ms,
                    });
                }
            }
        }
        active
    }

    /// Drops every producer's sequence window on a deleted topic's partitions.
    pub(super) fn forget_topic(&mut self, topic_id: uuid::Uuid) {
        let touched: Vec<ProducerId> = self
            .by_id
            .iter()
            .filter(|(_, p)| p.partitions.keys().any(|tp| tp.topic_id == topic_id))
            .map(|(id, _)| *id)
            .collect();
        for id in touched {
            if let Some(producer) = self.by_id.get_mut(&id) {
                Arc::make_mut(producer)
                    .partitions
                    .retain(|tp, _| tp.topic_id != topic_id);
            }
        }
    }

    /// A new producer id, or the next epoch of the one the client holds.
    /// `limited`: whether `PRODUCERS_MAX` is in force (see `limits`).
    pub(super) fn init(
        &mut self,
        existing: Option<(ProducerId, ProducerEpoch)>,
        now_ms: i64,
        limited: bool,
    ) -> Result<(ProducerId, ProducerEpoch), InitProducerIdError> {
        if let Some((id, epoch)) = existing
            && let Some(state) = self.by_id.get_mut(&id).map(Arc::make_mut)
        {
            if state.epoch != epoch {
                return Err(InitProducerIdError::InvalidProducerEpoch);
            }
            // An exhausted epoch falls through to a fresh producer id, as in Kafka.
            if state.epoch.0 < i16::MAX - 1 {
                state.epoch = ProducerEpoch(state.epoch.0 + 1);
                state.partitions.clear();
                state.last_active_ms = now_ms;
                return Ok((id, state.epoch));
            }
        }
        // A marker's index entry holds ids below the limit (see `markers`).
        if limited && self.by_id.len() >= PRODUCERS_MAX
            || self.next_id >= super::markers::MARKER_PRODUCER_ID_LIMIT
        {
            return Err(InitProducerIdError::TooManyProducers);
        }
        let id = ProducerId(self.next_id);
        self.next_id += 1;
        self.by_id.insert(
            id,
            Arc::new(ProducerState {
                epoch: ProducerEpoch(0),
                partitions: BTreeMap::new(),
                last_active_ms: now_ms,
            }),
        );
        Ok((id, ProducerEpoch(0)))
    }

    /// Whether `init` can issue a new producer id now.
    pub(super) fn has_room(&self, limited: bool) -> bool {
        !(limited && self.by_id.len() >= PRODUCERS_MAX)
            && self.next_id < super::markers::MARKER_PRODUCER_ID_LIMIT
    }

    /// Puts a producer id at `epoch` with no sequences (a transactional id's new epoch): a
    /// batch of an older epoch is fenced from now on. Inserts the id if it expired here.
    pub(super) fn set_epoch(&mut self, id: ProducerId, epoch: ProducerEpoch, now_ms: i64) {
        self.by_id.insert(
            id,
            Arc::new(ProducerState {
                epoch,
                partitions: BTreeMap::new(),
                last_active_ms: now_ms,
            }),
        );
    }

    /// Kafka's idempotence rules, per producer and partition.
    pub(super) fn check_sequence(
        &self,
        tp: &TopicPartition,
        batch: &CommittedBatch,
    ) -> Result<(), BatchOutcome> {
        if !batch.producer_id.is_idempotent() {
            return Ok(());
        }
        let Some(producer) = self.by_id.get(&batch.producer_id) else {
            return Err(BatchOutcome::UnknownProducerId);
        };
        if batch.producer_epoch < producer.epoch {
            return Err(BatchOutcome::InvalidProducerEpoch);
        }
        if batch.producer_epoch > producer.epoch {
            // Only InitProducerId raises an epoch; a larger one was never issued.
            return Err(BatchOutcome::InvalidProducerEpoch);
        }
        let Some(window) = producer.partitions.get(tp) else {
            // The first batch of this producer on this partition must start a sequence.
            return if batch.base_sequence == 0 {
                Ok(())
            } else {
                Err(BatchOutcome::OutOfOrderSequence)
            };
        };
        if let Some(seen) = window.iter().find(|s| {
            s.first_sequence == batch.base_sequence && s.last_sequence == batch.last_sequence
        }) {
            return Err(BatchOutcome::Duplicate {
                base_offset: seen.base_offset,
            });
        }
        let last = window.back().map_or(-1, |s| s.last_sequence);
        let expected = if last == i32::MAX { 0 } else { last + 1 };
        if batch.base_sequence != expected {
            return Err(BatchOutcome::OutOfOrderSequence);
        }
        Ok(())
    }

    /// Remembers an appended batch, to recognise its retry.
    pub(super) fn remember(
        &mut self,
        tp: &TopicPartition,
        batch: &CommittedBatch,
        base_offset: Offset,
        now_ms: i64,
    ) {
        if !batch.producer_id.is_idempotent() {
            return;
        }
        if let Some(producer) = self.by_id.get_mut(&batch.producer_id).map(Arc::make_mut) {
            producer.last_active_ms = now_ms;
            let window = producer.partitions.entry(*tp).or_default();
            if window.len() == PRODUCER_BATCH_WINDOW {
                window.pop_front();
            }
            window.push_back(SequencedBatch {
                first_sequence: batch.base_sequence,
                last_sequence: batch.last_sequence,
                base_offset,
            });
        }
    }

    /// Forgets the producers idle since before `cutoff_ms`; returns how many.
    /// `kept`: ids that do not expire here (a transactional id's producer lives as long as
    /// its transactional id).
    pub(super) fn expire(&mut self, cutoff_ms: i64, kept: impl Fn(ProducerId) -> bool) -> u64 {
        let expired: Vec<ProducerId> = self
            .by_id
            .iter()
            .filter(|(id, p)| p.last_active_ms < cutoff_ms && !kept(**id))
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            self.by_id.remove(id);
        }
        expired.len() as u64
    }

    /// Producers last active before the state's clock started count from its first tick.
    pub(super) fn start_clock(&mut self, now_ms: i64) {
        let unstamped: Vec<ProducerId> = self
            .by_id
            .iter()
            .filter(|(_, p)| p.last_active_ms == 0)
            .map(|(id, _)| *id)
            .collect();
        for id in unstamped {
            if let Some(producer) = self.by_id.get_mut(&id) {
                Arc::make_mut(producer).last_active_ms = now_ms;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }
}
