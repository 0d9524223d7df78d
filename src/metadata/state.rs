//! The metadata state machine: pure and deterministic.
//!
//! `apply(command) -> outcome` with no I/O and no clock reads (time arrives inside commands).
//! This is what the Raft quorum replicates, what snapshots serialize, and what every member
//! applies. Every agent that applies the same commands in the same order holds the
//! same state.
//!
//! Offsets are assigned here, at commit time: an object's batches get contiguous offsets per
//! partition, the high watermark advances, and idempotent producers' sequences are checked
//! (a retried duplicate gets its original offsets back and is not indexed twice).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use uuid::Uuid;

/// How many recent batches per producer and partition are remembered to answer retries
/// (Kafka keeps 5, matching the clients' `max.in.flight.requests.per.connection` limit).
pub const PRODUCER_BATCH_WINDOW: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic_id: Uuid,
    pub partition: i32,
}

/// Where a run of consecutive batches of one partition lives: a byte range of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRef {
    pub base_offset: i64,
    /// One past the last offset of the run.
    pub end_offset: i64,
    pub object_key: String,
    pub byte_start: u64,
    pub byte_len: u64,
    pub max_timestamp: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionState {
    pub log_start_offset: i64,
    pub high_watermark: i64,
    /// Ordered by offset, contiguous: each ref starts where the previous ends.
    pub index: Vec<BatchRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    pub name: String,
    pub id: Uuid,
    pub partitions: Vec<PartitionState>,
    pub configs: BTreeMap<String, String>,
}

/// A batch the producer sent recently, remembered to recognise its retry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct SequencedBatch {
    first_sequence: i32,
    last_sequence: i32,
    base_offset: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ProducerState {
    epoch: i16,
    partitions: BTreeMap<TopicPartition, VecDeque<SequencedBatch>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupOffset {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
    pub commit_timestamp: i64,
}

impl GroupOffset {
    /// Records between this committed offset and a partition's high watermark.
    pub fn lag(&self, high_watermark: i64) -> i64 {
        (high_watermark - self.offset).max(0)
    }
}

/// One batch of an object, as the committer describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommittedBatch {
    pub byte_start: u64,
    pub byte_len: u64,
    /// `last_offset_delta + 1`: how many offsets the batch takes.
    pub offset_count: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub last_sequence: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionBatches {
    pub partition: TopicPartition,
    pub batches: Vec<CommittedBatch>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    CreateTopic {
        name: String,
        id: Uuid,
        partitions: i32,
        configs: BTreeMap<String, String>,
    },
    DeleteTopic {
        name: String,
    },
    CreatePartitions {
        name: String,
        total: i32,
    },
    AlterTopicConfigs {
        name: String,
        /// `None` removes the key.
        changes: Vec<(String, Option<String>)>,
    },
    /// The commit point of produced data: the object is durable; assign its batches offsets.
    CommitObject {
        object_key: String,
        partitions: Vec<PartitionBatches>,
    },
    InitProducerId {
        /// Set when the client re-initialises an id it holds (bumps the epoch).
        existing: Option<(i64, i16)>,
    },
    OffsetCommit {
        group: String,
        topic: String,
        partition: i32,
        offset: GroupOffset,
    },
    /// Forgets a group's committed offsets: all of them (`partitions: None`, DeleteGroups) or
    /// the listed ones (OffsetDelete).
    DeleteGroupOffsets {
        group: String,
        partitions: Option<Vec<(String, i32)>>,
    },
    /// Names the cluster; only the first proposal counts (every voter proposes its own).
    InitCluster {
        id: String,
    },
    /// An agent (re)registers: it stays in Metadata answers until its lease expires.
    AgentHeartbeat {
        agent: Agent,
    },
}

/// A Kafka-serving agent in the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// Its node id, which is also its Kafka broker id.
    pub id: i32,
    /// The address clients connect to (shared by agents behind one load balancer).
    pub host: String,
    pub port: i32,
    pub zone: Option<String>,
    /// Its Raft listener, where other agents forward requests for the groups it coordinates.
    pub internal_addr: Option<String>,
    /// Wall-clock time (ms, by the agent's clock) after which the agent counts as gone.
    pub lease_expires_ms: i64,
}

/// What happened to one batch of a `CommitObject`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BatchOutcome {
    Appended {
        base_offset: i64,
    },
    /// A retry of a batch already committed: answered with its original offset, not stored.
    Duplicate {
        base_offset: i64,
    },
    UnknownTopicOrPartition,
    /// The producer's epoch is older than the current one: a newer instance fenced it.
    InvalidProducerEpoch,
    OutOfOrderSequence,
    UnknownProducerId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TopicError {
    AlreadyExists,
    NotFound,
    InvalidPartitions,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Topic(Result<(), TopicError>),
    /// Per partition, in command order; per batch, in partition order.
    Committed(Vec<Vec<BatchOutcome>>),
    ProducerId(Result<(i64, i16), InitProducerIdError>),
    OffsetCommitted(Result<(), TopicError>),
    /// Whether the group had committed offsets to delete.
    GroupOffsetsDeleted(bool),
    AgentRegistered,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InitProducerIdError {
    /// The id/epoch the client presented is not the current one.
    InvalidProducerEpoch,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataState {
    topics: BTreeMap<String, Topic>,
    topic_names: BTreeMap<Uuid, String>,
    next_producer_id: i64,
    producers: BTreeMap<i64, ProducerState>,
    group_offsets: BTreeMap<String, BTreeMap<(String, i32), GroupOffset>>,
    agents: BTreeMap<i32, Agent>,
    cluster_id: Option<String>,
    /// Commands applied so far; a snapshot records it so replay knows where to resume.
    applied: u64,
    /// Outcomes of the most recent object commits, so that a commit retried after a lost
    /// response gets its original outcome instead of a second set of offsets.
    recent_commits: BTreeMap<String, Vec<Vec<BatchOutcome>>>,
    /// Commit order of `recent_commits`, oldest first (bounded by `RECENT_COMMITS_MAX`).
    recent_order: VecDeque<String>,
    /// Changes whenever topics or their partition counts change.
    #[serde(skip)]
    topics_version: TopicsVersion,
}

/// A cache key for views derived from the topics (consumer groups resolve subscriptions with
/// it): it changes whenever the topics do, and comes from a process-wide counter, so two
/// states never share a value. Not part of the state's value: neither stored nor compared.
#[derive(Debug, Clone, Copy)]
pub struct TopicsVersion(u64);

impl TopicsVersion {
    fn next() -> TopicsVersion {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        TopicsVersion(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl Default for TopicsVersion {
    fn default() -> TopicsVersion {
        TopicsVersion::next()
    }
}

impl PartialEq for TopicsVersion {
    fn eq(&self, _: &TopicsVersion) -> bool {
        true
    }
}

impl Eq for TopicsVersion {}

/// Object commits remembered for idempotent retries. A retry comes within the committer's
/// retry deadline, during which far fewer objects than this are committed.
pub const RECENT_COMMITS_MAX: usize = 4096;

impl MetadataState {
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// See `TopicsVersion`.
    pub fn topics_version(&self) -> u64 {
        self.topics_version.0
    }

    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.get(name)
    }

    pub fn topic_by_id(&self, id: &Uuid) -> Option<&Topic> {
        self.topic_names.get(id).and_then(|n| self.topics.get(n))
    }

    pub fn topics(&self) -> impl Iterator<Item = &Topic> {
        self.topics.values()
    }

    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionState> {
        let topic = self.topic_by_id(&tp.topic_id)?;
        usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get(p))
    }

    /// A partition's high watermark, by topic name.
    pub fn high_watermark(&self, topic: &str, partition: i32) -> Option<i64> {
        let partition = usize::try_from(partition).ok()?;
        Some(self.topic(topic)?.partitions.get(partition)?.high_watermark)
    }

    /// A group's lag: records between its committed offsets and the high watermarks
    /// (offsets of partitions that no longer exist count nothing).
    pub fn group_lag(&self, group: &str) -> i64 {
        self.group_offsets(group)
            .filter_map(|((topic, partition), committed)| {
                Some(committed.lag(self.high_watermark(topic, *partition)?))
            })
            .sum()
    }

    pub fn group_offset(&self, group: &str, topic: &str, partition: i32) -> Option<&GroupOffset> {
        self.group_offsets
            .get(group)
            .and_then(|g| g.get(&(topic.to_string(), partition)))
    }

    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.group_offsets.keys().map(String::as_str)
    }

    pub fn cluster_id(&self) -> Option<&str> {
        self.cluster_id.as_deref()
    }

    /// Agents whose lease has not expired at `now_ms`.
    pub fn live_agents(&self, now_ms: i64) -> impl Iterator<Item = &Agent> {
        self.agents
            .values()
            .filter(move |a| a.lease_expires_ms > now_ms)
    }

    pub fn group_offsets(
        &self,
        group: &str,
    ) -> impl Iterator<Item = (&(String, i32), &GroupOffset)> {
        self.group_offsets
            .get(group)
            .into_iter()
            .flat_map(|g| g.iter())
    }

    pub fn apply(&mut self, command: Command) -> Outcome {
        self.applied += 1;
        match command {
            Command::CreateTopic {
                name,
                id,
                partitions,
                configs,
            } => Outcome::Topic(self.create_topic(name, id, partitions, configs)),
            Command::DeleteTopic { name } => Outcome::Topic(self.delete_topic(&name)),
            Command::CreatePartitions { name, total } => {
                Outcome::Topic(self.create_partitions(&name, total))
            }
            Command::AlterTopicConfigs { name, changes } => {
                Outcome::Topic(match self.topics.get_mut(&name) {
                    None => Err(TopicError::NotFound),
                    Some(topic) => {
                        for (key, value) in changes {
                            match value {
                                Some(v) => topic.configs.insert(key, v),
                                None => topic.configs.remove(&key),
                            };
                        }
                        Ok(())
                    }
                })
            }
            Command::CommitObject {
                object_key,
                partitions,
            } => Outcome::Committed(self.commit_object(object_key, &partitions)),
            Command::InitProducerId { existing } => {
                Outcome::ProducerId(self.init_producer_id(existing))
            }
            Command::OffsetCommit {
                group,
                topic,
                partition,
                offset,
            } => Outcome::OffsetCommitted(match self.topics.get(&topic) {
                Some(t) if partition >= 0 && (partition as usize) < t.partitions.len() => {
                    self.group_offsets
                        .entry(group)
                        .or_default()
                        .insert((topic, partition), offset);
                    Ok(())
                }
                _ => Err(TopicError::NotFound),
            }),
            Command::DeleteGroupOffsets { group, partitions } => Outcome::GroupOffsetsDeleted(
                match (self.group_offsets.get_mut(&group), partitions) {
                    (None, _) => false,
                    (Some(_), None) => self.group_offsets.remove(&group).is_some(),
                    (Some(offsets), Some(partitions)) => {
                        for key in &partitions {
                            offsets.remove(key);
                        }
                        if offsets.is_empty() {
                            self.group_offsets.remove(&group);
                        }
                        true
                    }
                },
            ),
            Command::InitCluster { id } => {
                self.cluster_id.get_or_insert(id);
                Outcome::AgentRegistered
            }
            Command::AgentHeartbeat { agent } => {
                self.agents.insert(agent.id, agent);
                Outcome::AgentRegistered
            }
        }
    }

    fn create_topic(
        &mut self,
        name: String,
        id: Uuid,
        partitions: i32,
        configs: BTreeMap<String, String>,
    ) -> Result<(), TopicError> {
        if self.topics.contains_key(&name) || self.topic_names.contains_key(&id) {
            return Err(TopicError::AlreadyExists);
        }
        if partitions < 1 {
            return Err(TopicError::InvalidPartitions);
        }
        self.topic_names.insert(id, name.clone());
        self.topics_version = TopicsVersion::next();
        self.topics.insert(
            name.clone(),
            Topic {
                name,
                id,
                partitions: vec![PartitionState::default(); partitions as usize],
                configs,
            },
        );
        Ok(())
    }

    fn delete_topic(&mut self, name: &str) -> Result<(), TopicError> {
        let topic = self.topics.remove(name).ok_or(TopicError::NotFound)?;
        self.topics_version = TopicsVersion::next();
        self.topic_names.remove(&topic.id);
        for producer in self.producers.values_mut() {
            producer.partitions.retain(|tp, _| tp.topic_id != topic.id);
        }
        for group in self.group_offsets.values_mut() {
            group.retain(|(t, _), _| t != name);
        }
        Ok(())
    }

    fn create_partitions(&mut self, name: &str, total: i32) -> Result<(), TopicError> {
        let topic = self.topics.get_mut(name).ok_or(TopicError::NotFound)?;
        let total = usize::try_from(total).map_err(|_| TopicError::InvalidPartitions)?;
        if total <= topic.partitions.len() {
            return Err(TopicError::InvalidPartitions);
        }
        topic.partitions.resize(total, PartitionState::default());
        self.topics_version = TopicsVersion::next();
        Ok(())
    }

    fn init_producer_id(
        &mut self,
        existing: Option<(i64, i16)>,
    ) -> Result<(i64, i16), InitProducerIdError> {
        if let Some((id, epoch)) = existing
            && let Some(state) = self.producers.get_mut(&id)
        {
            if state.epoch != epoch {
                return Err(InitProducerIdError::InvalidProducerEpoch);
            }
            // An exhausted epoch falls through to a fresh producer id, as in Kafka.
            if state.epoch < i16::MAX - 1 {
                state.epoch += 1;
                state.partitions.clear();
                return Ok((id, state.epoch));
            }
        }
        let id = self.next_producer_id;
        self.next_producer_id += 1;
        self.producers.insert(
            id,
            ProducerState {
                epoch: 0,
                partitions: BTreeMap::new(),
            },
        );
        Ok((id, 0))
    }

    fn commit_object(
        &mut self,
        object_key: String,
        partitions: &[PartitionBatches],
    ) -> Vec<Vec<BatchOutcome>> {
        if let Some(previous) = self.recent_commits.get(&object_key) {
            return previous.clone();
        }
        let outcomes: Vec<Vec<BatchOutcome>> = partitions
            .iter()
            .map(|p| self.commit_partition(&object_key, p))
            .collect();
        if self.recent_order.len() == RECENT_COMMITS_MAX
            && let Some(oldest) = self.recent_order.pop_front()
        {
            self.recent_commits.remove(&oldest);
        }
        self.recent_order.push_back(object_key.clone());
        self.recent_commits.insert(object_key, outcomes.clone());
        outcomes
    }

    fn commit_partition(
        &mut self,
        object_key: &str,
        batches: &PartitionBatches,
    ) -> Vec<BatchOutcome> {
        let tp = batches.partition;
        let exists = self.partition(&tp).is_some();
        let mut outcomes = Vec::with_capacity(batches.batches.len());
        for batch in &batches.batches {
            if !exists {
                outcomes.push(BatchOutcome::UnknownTopicOrPartition);
                continue;
            }
            let outcome = match self.check_sequence(&tp, batch) {
                Err(outcome) => outcome,
                Ok(()) => {
                    let base_offset = self.append(&tp, object_key, batch);
                    self.remember_sequence(&tp, batch, base_offset);
                    BatchOutcome::Appended { base_offset }
                }
            };
            outcomes.push(outcome);
        }
        outcomes
    }

    /// Kafka's idempotence rules, per producer and partition.
    fn check_sequence(
        &self,
        tp: &TopicPartition,
        batch: &CommittedBatch,
    ) -> Result<(), BatchOutcome> {
        if batch.producer_id < 0 {
            return Ok(());
        }
        let Some(producer) = self.producers.get(&batch.producer_id) else {
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

    fn remember_sequence(&mut self, tp: &TopicPartition, batch: &CommittedBatch, base_offset: i64) {
        if batch.producer_id < 0 {
            return;
        }
        if let Some(producer) = self.producers.get_mut(&batch.producer_id) {
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

    /// Assigns the batch its offsets and indexes it, extending the previous ref when the batch
    /// directly follows it in the same object (the common case: one ref per object and partition).
    fn append(&mut self, tp: &TopicPartition, object_key: &str, batch: &CommittedBatch) -> i64 {
        let Some(name) = self.topic_names.get(&tp.topic_id) else {
            return -1;
        };
        let Some(partition) = self
            .topics
            .get_mut(name)
            .and_then(|t| t.partitions.get_mut(tp.partition as usize))
        else {
            return -1;
        };
        let base_offset = partition.high_watermark;
        let end_offset = base_offset + batch.offset_count;
        partition.high_watermark = end_offset;
        match partition.index.last_mut() {
            Some(last)
                if last.object_key == object_key
                    && last.byte_start + last.byte_len == batch.byte_start
                    && last.end_offset == base_offset =>
            {
                last.byte_len += batch.byte_len;
                last.end_offset = end_offset;
                last.max_timestamp = last.max_timestamp.max(batch.max_timestamp);
            }
            _ => partition.index.push(BatchRef {
                base_offset,
                end_offset,
                object_key: object_key.to_string(),
                byte_start: batch.byte_start,
                byte_len: batch.byte_len,
                max_timestamp: batch.max_timestamp,
            }),
        }
        base_offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_topics_version_moves_with_the_topics_only() {
        let mut state = MetadataState::default();
        let start = state.topics_version();
        topic(&mut state, 1);
        let created = state.topics_version();
        assert_ne!(created, start);
        state.apply(Command::OffsetCommit {
            group: "g".into(),
            topic: "t".into(),
            partition: 0,
            offset: GroupOffset {
                offset: 1,
                leader_epoch: -1,
                metadata: None,
                commit_timestamp: 0,
            },
        });
        assert_eq!(state.topics_version(), created, "offsets are not topics");
        state.apply(Command::CreatePartitions {
            name: "t".into(),
            total: 2,
        });
        let grown = state.topics_version();
        assert_ne!(grown, created);
        state.apply(Command::DeleteTopic { name: "t".into() });
        assert_ne!(state.topics_version(), grown);
        // A restored copy never shares a version with another state.
        let bytes = postcard::to_stdvec(&state).unwrap();
        let restored: MetadataState = postcard::from_bytes(&bytes).unwrap();
        assert_ne!(restored.topics_version(), state.topics_version());
    }

    fn topic(state: &mut MetadataState, partitions: i32) -> Uuid {
        let id = Uuid::from_u128(7);
        let outcome = state.apply(Command::CreateTopic {
            name: "t".into(),
            id,
            partitions,
            configs: BTreeMap::new(),
        });
        assert_eq!(outcome, Outcome::Topic(Ok(())));
        id
    }

    fn batch(start: u64, len: u64, count: i64, producer: (i64, i16), seq: i32) -> CommittedBatch {
        CommittedBatch {
            byte_start: start,
            byte_len: len,
            offset_count: count,
            max_timestamp: 10,
            producer_id: producer.0,
            producer_epoch: producer.1,
            base_sequence: seq,
            last_sequence: if producer.0 < 0 {
                -1
            } else {
                seq + count as i32 - 1
            },
        }
    }

    fn commit(
        state: &mut MetadataState,
        key: &str,
        tp: TopicPartition,
        batches: Vec<CommittedBatch>,
    ) -> Vec<BatchOutcome> {
        // Every commit is a new object, as in production (keys never repeat).
        match state.apply(Command::CommitObject {
            object_key: format!("{key}#{}", state.applied()),
            partitions: vec![PartitionBatches {
                partition: tp,
                batches,
            }],
        }) {
            Outcome::Committed(mut per_partition) => per_partition.remove(0),
            other => panic!("unexpected {other:?}"),
        }
    }

    fn producer(state: &mut MetadataState) -> (i64, i16) {
        match state.apply(Command::InitProducerId { existing: None }) {
            Outcome::ProducerId(Ok(p)) => p,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn offsets_are_contiguous_and_refs_coalesce_within_an_object() {
        let mut state = MetadataState::default();
        let tp = TopicPartition {
            topic_id: topic(&mut state, 2),
            partition: 1,
        };
        let out = commit(
            &mut state,
            "a",
            tp,
            vec![
                batch(0, 100, 3, (-1, -1), -1),
                batch(100, 50, 2, (-1, -1), -1),
            ],
        );
        assert_eq!(
            out,
            vec![
                BatchOutcome::Appended { base_offset: 0 },
                BatchOutcome::Appended { base_offset: 3 }
            ]
        );
        let out = commit(&mut state, "b", tp, vec![batch(10, 20, 4, (-1, -1), -1)]);
        assert_eq!(out, vec![BatchOutcome::Appended { base_offset: 5 }]);
        let p = state.partition(&tp).unwrap();
        assert_eq!(p.high_watermark, 9);
        assert_eq!(p.index.len(), 2);
        assert_eq!(
            (
                p.index[0].base_offset,
                p.index[0].end_offset,
                p.index[0].byte_len
            ),
            (0, 5, 150)
        );
        assert_eq!(
            (&p.index[1].object_key[..1], p.index[1].base_offset),
            ("b", 5)
        );
    }

    #[test]
    fn a_retried_batch_gets_its_original_offset_and_is_not_indexed_twice() {
        let mut state = MetadataState::default();
        let tp = TopicPartition {
            topic_id: topic(&mut state, 1),
            partition: 0,
        };
        let p = producer(&mut state);
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 5, p, 0)]),
            vec![BatchOutcome::Appended { base_offset: 0 }]
        );
        assert_eq!(
            commit(&mut state, "b", tp, vec![batch(0, 10, 5, p, 0)]),
            vec![BatchOutcome::Duplicate { base_offset: 0 }]
        );
        assert_eq!(
            commit(&mut state, "b", tp, vec![batch(10, 10, 2, p, 5)]),
            vec![BatchOutcome::Appended { base_offset: 5 }]
        );
        assert_eq!(state.partition(&tp).unwrap().high_watermark, 7);
    }

    #[test]
    fn only_the_last_five_batches_are_remembered() {
        let mut state = MetadataState::default();
        let tp = TopicPartition {
            topic_id: topic(&mut state, 1),
            partition: 0,
        };
        let p = producer(&mut state);
        for i in 0..6 {
            commit(&mut state, "a", tp, vec![batch(i * 10, 10, 1, p, i as i32)]);
        }
        // Sequence 0 fell out of the window: its retry can no longer be recognised.
        assert_eq!(
            commit(&mut state, "b", tp, vec![batch(0, 10, 1, p, 0)]),
            vec![BatchOutcome::OutOfOrderSequence]
        );
        assert_eq!(
            commit(&mut state, "b", tp, vec![batch(0, 10, 1, p, 1)]),
            vec![BatchOutcome::Duplicate { base_offset: 1 }]
        );
    }

    #[test]
    fn gaps_and_stale_epochs_are_rejected() {
        let mut state = MetadataState::default();
        let tp = TopicPartition {
            topic_id: topic(&mut state, 1),
            partition: 0,
        };
        let p = producer(&mut state);
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 3)]),
            vec![BatchOutcome::OutOfOrderSequence]
        );
        commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 0)]);
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 2)]),
            vec![BatchOutcome::OutOfOrderSequence]
        );
        // Re-initialising bumps the epoch and fences the old one.
        let bumped = match state.apply(Command::InitProducerId { existing: Some(p) }) {
            Outcome::ProducerId(Ok(b)) => b,
            other => panic!("{other:?}"),
        };
        assert_eq!(bumped, (p.0, 1));
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 1)]),
            vec![BatchOutcome::InvalidProducerEpoch]
        );
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 1, bumped, 0)]),
            vec![BatchOutcome::Appended { base_offset: 1 }]
        );
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 1, (99, 0), 0)]),
            vec![BatchOutcome::UnknownProducerId]
        );
    }

    #[test]
    fn unknown_partitions_are_refused_and_replay_is_deterministic() {
        let mut state = MetadataState::default();
        let id = topic(&mut state, 1);
        let missing = TopicPartition {
            topic_id: id,
            partition: 5,
        };
        assert_eq!(
            commit(&mut state, "a", missing, vec![batch(0, 1, 1, (-1, -1), -1)]),
            vec![BatchOutcome::UnknownTopicOrPartition]
        );
        let bytes = postcard::to_stdvec(&state).unwrap();
        let restored: MetadataState = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(restored, state);
    }
}

#[cfg(test)]
mod determinism_tests {
    use super::*;
    use proptest::prelude::*;

    fn command(kind: u8, a: u8, b: u8) -> Command {
        let topic = format!("t{}", a % 3);
        match kind % 8 {
            0 => Command::CreateTopic {
                name: topic,
                id: Uuid::from_u128(u128::from(a % 3) + 1),
                partitions: i32::from(b % 4) + 1,
                configs: BTreeMap::new(),
            },
            1 => Command::InitProducerId {
                existing: b.is_multiple_of(2).then_some((i64::from(a % 4), 0)),
            },
            2 | 3 => Command::CommitObject {
                object_key: format!("o{}", b % 16),
                partitions: vec![PartitionBatches {
                    partition: TopicPartition {
                        topic_id: Uuid::from_u128(u128::from(a % 3) + 1),
                        partition: i32::from(b % 4),
                    },
                    batches: vec![CommittedBatch {
                        byte_start: 16,
                        byte_len: 100,
                        offset_count: i64::from(b % 5) + 1,
                        max_timestamp: i64::from(a),
                        producer_id: i64::from(a % 5) - 1,
                        producer_epoch: 0,
                        base_sequence: i32::from(b % 3),
                        last_sequence: i32::from(b % 3) + i32::from(b % 5),
                    }],
                }],
            },
            4 => Command::OffsetCommit {
                group: "g".into(),
                topic,
                partition: i32::from(b % 4),
                offset: GroupOffset {
                    offset: i64::from(b),
                    leader_epoch: 0,
                    metadata: None,
                    commit_timestamp: 1,
                },
            },
            6 => Command::DeleteGroupOffsets {
                group: "g".into(),
                partitions: b
                    .is_multiple_of(2)
                    .then(|| vec![(topic.clone(), i32::from(b % 4))]),
            },
            5 => Command::AgentHeartbeat {
                agent: Agent {
                    id: i32::from(a % 3),
                    host: "127.0.0.1".into(),
                    port: 9092 + i32::from(a % 3),
                    zone: b.is_multiple_of(2).then(|| "z".to_string()),
                    internal_addr: None,
                    lease_expires_ms: i64::from(b),
                },
            },
            _ => Command::CreatePartitions {
                name: topic,
                total: i32::from(b % 6) + 1,
            },
        }
    }

    proptest! {
        /// The same command log applied twice gives byte-identical snapshots: what makes the
        /// state machine safe to replicate and to rebuild from a log.
        #[test]
        fn the_same_log_gives_identical_snapshots(log in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..200)) {
            let commands: Vec<Command> = log.iter().map(|&(k, a, b)| command(k, a, b)).collect();
            let mut first = MetadataState::default();
            let mut second = MetadataState::default();
            let outcomes_first: Vec<Outcome> = commands.iter().cloned().map(|c| first.apply(c)).collect();
            let outcomes_second: Vec<Outcome> = commands.into_iter().map(|c| second.apply(c)).collect();
            prop_assert_eq!(outcomes_first, outcomes_second);
            prop_assert_eq!(postcard::to_stdvec(&first).unwrap(), postcard::to_stdvec(&second).unwrap());
            // And a snapshot round trip loses nothing.
            let restored: MetadataState = postcard::from_bytes(&postcard::to_stdvec(&first).unwrap()).unwrap();
            prop_assert_eq!(restored, first);
        }
    }

    #[test]
    fn a_retried_object_commit_returns_its_original_outcome() {
        let mut state = MetadataState::default();
        state.apply(command(0, 0, 0));
        let commit = command(2, 0, 4);
        let first = state.apply(commit.clone());
        let high_watermark = state.topic("t0").unwrap().partitions[0].high_watermark;
        assert_eq!(state.apply(commit), first, "same outcome again");
        assert_eq!(
            state.topic("t0").unwrap().partitions[0].high_watermark,
            high_watermark,
            "no new offsets"
        );
    }
}
