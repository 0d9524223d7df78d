//! Share groups' records (KIP-932): a round of acknowledgements and acquisitions for one
//! member, a member's records given back, a group's state forgotten or started again at
//! given offsets. The rules
//! of one share-partition are in `state/share.rs`; these compose them with the topics (which
//! partitions exist, where their logs start) and the state's clock (when locks end).

use super::Apply;
use crate::ids::TopicPartition;
use crate::metadata::state::MetadataState;
use crate::metadata::state::share::{
    AckBatch, AckError, AckType, Acquired, LOCK_MS_MAX, Read, ShareRules,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

noun! {
    /// What changes share groups' records.
    ShareCommand => ShareOutcome {
        ShareRound => Vec<RoundResult>,
        ReleaseShareMember => Vec<TopicPartition>,
        ForgetShareState => usize,
        SetShareStarts => Vec<Result<(), ShareStartError>>,
    }
}

/// One partition of a round: the member's acknowledgements, then what a read of the log found
/// to acquire from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundPartition {
    pub topic_id: Uuid,
    pub partition: i32,
    pub acks: Vec<AckBatch>,
    /// What a read of the log found to acquire from (`None`: acknowledgements only).
    pub read: Option<Read>,
    /// Where the group starts reading this partition if it has not yet (the group's
    /// `share.auto.offset.reset` as the reading agent resolved it).
    pub start_if_new: i64,
}

/// A member's acknowledgements and acquisitions, applied together: every partition's
/// acknowledgements first (records released by one can be acquired by the next), then
/// acquisitions up to `max_records` across the partitions, locked for `lock_ms` of state time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareRound {
    pub group: String,
    pub member: String,
    pub partitions: Vec<RoundPartition>,
    pub max_records: u32,
    pub lock_ms: i64,
    pub rules: ShareRules,
}

/// One partition's part of a round, in the request's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundResult {
    /// `None` when the partition had no acknowledgements.
    pub acked: Option<Result<(), AckError>>,
    pub acquired: Vec<Acquired>,
    /// The topic or partition does not exist (any more).
    pub unknown: bool,
    /// Records became available (released): waiting reads should look again.
    pub freed: bool,
}

impl Apply for ShareRound {
    fn apply(self, state: &mut MetadataState) -> Vec<RoundResult> {
        let now_ms = state.now_ms;
        let locked_until_ms = now_ms.saturating_add(self.lock_ms.clamp(0, LOCK_MS_MAX));
        let mut results = Vec::with_capacity(self.partitions.len());
        for p in &self.partitions {
            let tp = TopicPartition {
                topic_id: p.topic_id,
                partition: p.partition,
            };
            if state.topics.partition(&tp).is_none() {
                results.push(RoundResult {
                    acked: (!p.acks.is_empty()).then_some(Err(AckError::UnknownPartition)),
                    acquired: Vec::new(),
                    unknown: true,
                    freed: false,
                });
                continue;
            };
            let key = (self.group.clone(), p.topic_id, p.partition);
            let acked = (!p.acks.is_empty()).then(|| {
                match state.share.get_mut(&key) {
                    // Nothing was handed out in this partition: not the member's records.
                    None => Err(AckError::InvalidRecordState),
                    Some(share) => {
                        share.expire_locks(now_ms);
                        share.acknowledge(&self.member, &p.acks)
                    }
                }
            });
            let freed = acked.is_some_and(|a| a.is_ok())
                && p.acks.iter().any(|b| b.types.contains(&AckType::Release));
            results.push(RoundResult {
                acked,
                acquired: Vec::new(),
                unknown: false,
                freed,
            });
        }
        let mut budget = self.max_records;
        for (p, result) in self.partitions.iter().zip(results.iter_mut()) {
            let Some(read) = &p.read else {
                continue;
            };
            if result.unknown || budget == 0 {
                continue;
            }
            let tp = TopicPartition {
                topic_id: p.topic_id,
                partition: p.partition,
            };
            let log_start = state
                .topics
                .partition(&tp)
                .map_or(0, |s| s.log_start_offset.0);
            let key = (self.group.clone(), p.topic_id, p.partition);
            let start = p.start_if_new.max(log_start);
            let Some(share) = state.share.get_or_start(key, start, self.rules) else {
                continue;
            };
            share.expire_locks(now_ms);
            share.advance_to_log_start(log_start);
            result.acquired = share.acquire(&self.member, read, &mut budget, locked_until_ms);
        }
        results
    }
}

/// Gives back every record a member holds in the listed partitions of its group (its share
/// session closed): available again, or archived at the delivery limit. Returns the
/// partitions where records became available.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseShareMember {
    pub group: String,
    pub member: String,
    pub partitions: Vec<TopicPartition>,
}

impl Apply for ReleaseShareMember {
    fn apply(self, state: &mut MetadataState) -> Vec<TopicPartition> {
        state
            .share
            .release_member(&self.group, &self.member, &self.partitions)
            .into_iter()
            .map(|(topic_id, partition)| TopicPartition {
                topic_id,
                partition,
            })
            .collect()
    }
}

/// Forgets a group's share state: all of it (DeleteGroups) or of some topics
/// (DeleteShareGroupOffsets). How many share-partitions went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForgetShareState {
    pub group: String,
    pub topics: Option<Vec<Uuid>>,
}

impl Apply for ForgetShareState {
    fn apply(self, state: &mut MetadataState) -> usize {
        state.share.forget(&self.group, self.topics.as_deref())
    }
}

/// Starts a group's reading of partitions again at the given offsets (AlterShareGroupOffsets):
/// what the group held of them, in flight or done with, is forgotten, as Kafka's share
/// coordinator writes a fresh state. The offsets are not checked against the log, as Kafka
/// does not: a start below the log's is moved up at the next read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetShareStarts {
    pub group: String,
    pub starts: Vec<(TopicPartition, i64)>,
    pub rules: ShareRules,
}

/// Why a partition's start was not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ShareStartError {
    /// The topic or partition does not exist (any more).
    UnknownPartition,
    /// The state holds as many share-partitions as it may.
    Full,
}

impl Apply for SetShareStarts {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<(), ShareStartError>> {
        self.starts
            .iter()
            .map(|(tp, start)| {
                if state.topics.partition(tp).is_none() {
                    return Err(ShareStartError::UnknownPartition);
                }
                let key = (self.group.clone(), tp.topic_id, tp.partition);
                state
                    .share
                    .start_again(key, (*start).max(0), self.rules)
                    .then_some(())
                    .ok_or(ShareStartError::Full)
            })
            .collect()
    }
}
