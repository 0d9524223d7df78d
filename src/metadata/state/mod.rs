//! The metadata state machine: pure and deterministic.
//!
//! `apply(command) -> outcome` with no I/O and no clock reads: time arrives inside commands,
//! as the leader's `Tick` (the state's clock, which expires idle producer ids and old commit
//! outcomes).
//! This is what the Raft quorum replicates, what snapshots serialize, and what every member
//! applies. Every agent that applies the same commands in the same order holds the
//! same state.
//!
//! Offsets are assigned here, at commit time: an object's batches get contiguous offsets per
//! partition, the high watermark advances, and idempotent producers' sequences are checked
//! (a retried duplicate gets its original offsets back and is not indexed twice).
//!
//! One file per noun, each a part of the state with its own rules: `topics` (names, ids,
//! partition counts, configs), `index` (a partition's offsets and batch index, what an object
//! commit says), `producers` (ids, epochs, sequence windows), `groups` (committed offsets),
//! `agents` (the registry and the cluster id), `recent_commits` (outcomes kept for retried
//! commits). `MetadataState` composes them; `apply` below
//! is the single entry, and the only place where a command touches several parts.

mod agents;
mod commands;
mod groups;
mod index;
pub mod jobs;
pub mod limits;
pub mod markers;
pub mod objects;
mod parts;
mod persistent;
mod producers;
mod recent_commits;
pub mod retention;
pub mod security;
mod snapshot;
mod topics;
pub mod transactions;

pub use agents::{AGENT_LEASE_MS_MAX, Agent, RegistryError};
pub use commands::*;
pub use groups::{GroupOffset, OffsetCommitError};
pub use index::{BatchOutcome, BatchRef, CommittedBatch, PartitionBatches, PartitionState};
pub use jobs::{COMPACTION_SHARDS, Job, Lease, shard_of};
pub use limits::Limits;
pub use objects::{DeadObject, FooterAt, ObjectId, Objects, StoredObject};
pub use parts::MetadataState;
pub use producers::{
    ActiveProducer, EXPIRY_CHECK_EVERY_MS, InitProducerIdError, PRODUCER_BATCH_WINDOW,
    PRODUCER_ID_EXPIRATION_MS, PRODUCERS_MAX,
};
pub use recent_commits::{COMMIT_DEDUP_WINDOW_MS, OUTCOMES_MAX};
pub use topics::{Topic, TopicError};
pub use transactions::{AbortedTxn, Transaction, Transactions, TxnEnd, TxnError, TxnStatus};

use crate::ids::{Offset, TopicPartition};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Topic(TopicCommand),
    Log(LogCommand),
    Producer(ProducerCommand),
    GroupOffsets(GroupOffsetsCommand),
    Cluster(ClusterCommand),
    Agent(AgentCommand),
    Clock(ClockCommand),
    Job(JobCommand),
    Transaction(TransactionCommand),
    Security(SecurityCommand),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Topic(TopicOutcome),
    Log(LogOutcome),
    Producer(ProducerOutcome),
    GroupOffsets(GroupOffsetsOutcome),
    Cluster(ClusterOutcome),
    Agent(AgentOutcome),
    Clock(ClockOutcome),
    Job(JobOutcome),
    Transaction(TransactionOutcome),
    Security(SecurityOutcome),
}

/// A noun's commands and outcomes as variants of the log's `Command` and `Outcome`.
pub trait InLog: Noun + Sized {
    fn command(self) -> Command;
    fn outcome(outcome: Outcome) -> Result<Self::Outcome, Outcome>;
    fn wrap(outcome: Self::Outcome) -> Outcome;
}

macro_rules! in_log {
    ($($noun:ident: $commands:ident => $outcomes:ident),+ $(,)?) => {$(
        impl InLog for $commands {
            fn command(self) -> Command {
                Command::$noun(self)
            }
            fn outcome(outcome: Outcome) -> Result<$outcomes, Outcome> {
                match outcome {
                    Outcome::$noun(o) => Ok(o),
                    other => Err(other),
                }
            }
            fn wrap(outcome: $outcomes) -> Outcome {
                Outcome::$noun(outcome)
            }
        }
    )+};
}

in_log! {
    Transaction: TransactionCommand => TransactionOutcome,
    Log: LogCommand => LogOutcome,
    Topic: TopicCommand => TopicOutcome,
    Producer: ProducerCommand => ProducerOutcome,
    GroupOffsets: GroupOffsetsCommand => GroupOffsetsOutcome,
    Clock: ClockCommand => ClockOutcome,
    Cluster: ClusterCommand => ClusterOutcome,
    Agent: AgentCommand => AgentOutcome,
    Job: JobCommand => JobOutcome,
    Security: SecurityCommand => SecurityOutcome,
}

/// A command as its sender sees it: written to the log as a `Command`, answered with its own
/// outcome.
pub trait Request: NounRequest + Into<Command> {
    /// This command's own outcome; `Err` gives back another (from a leader of another build).
    fn own(outcome: Outcome) -> Result<Self::Outcome, Outcome>;
}

impl<C: NounRequest> Request for C
where
    C::Noun: InLog,
{
    fn own(outcome: Outcome) -> Result<C::Outcome, Outcome> {
        let noun = <C::Noun as InLog>::outcome(outcome)?;
        C::outcome(noun).map_err(<C::Noun as InLog>::wrap)
    }
}

impl<C: NounRequest> From<C> for Command
where
    C::Noun: InLog,
{
    fn from(command: C) -> Command {
        command.into_noun().command()
    }
}

impl MetadataState {
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The state's time (see `Tick`); 0 before the first tick.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Producer ids held, and object commits remembered for retries (for metrics).
    /// The producers with recent batches on each of `partitions`.
    pub fn active_producers(
        &self,
        partitions: &[TopicPartition],
    ) -> std::collections::BTreeMap<TopicPartition, Vec<ActiveProducer>> {
        self.producers.active_on(partitions)
    }

    pub fn producer_count(&self) -> usize {
        self.producers.len()
    }

    pub fn remembered_commits(&self) -> usize {
        self.recent_commits.len()
    }

    pub fn topics(&self) -> impl Iterator<Item = &Topic> {
        self.topics.iter()
    }

    /// The groups that have committed offsets.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.group_offsets.groups()
    }

    pub fn group_offset(&self, group: &str, topic: &str, partition: i32) -> Option<&GroupOffset> {
        self.group_offsets.get(group, topic, partition)
    }

    pub fn group_offsets(
        &self,
        group: &str,
    ) -> impl Iterator<Item = (&(String, i32), &GroupOffset)> {
        self.group_offsets.of(group)
    }

    /// See `Topics::version`.
    pub fn topics_version(&self) -> u64 {
        self.topics.version()
    }

    /// Partitions of all topics together (what `Limits::partitions_max` bounds).
    pub fn partition_count(&self) -> u64 {
        self.topics.partition_count()
    }

    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.get(name)
    }

    pub fn topic_by_id(&self, id: &Uuid) -> Option<&Topic> {
        self.topics.by_id(id)
    }

    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionState> {
        self.topics.partition(tp)
    }

    /// A partition's high watermark, by topic name.
    pub fn high_watermark(&self, topic: &str, partition: i32) -> Option<Offset> {
        let partition = usize::try_from(partition).ok()?;
        Some(self.topic(topic)?.partitions.get(partition)?.high_watermark)
    }

    /// A group's lag: records between its committed offsets and the high watermarks
    /// (offsets of partitions that no longer exist count nothing).
    pub fn group_lag(&self, group: &str) -> i64 {
        self.group_offsets
            .of(group)
            .filter_map(|((topic, partition), committed)| {
                Some(committed.lag(self.high_watermark(topic, *partition)?))
            })
            .sum()
    }

    /// The objects the indexes point into, and the dead ones awaiting deletion.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Transactional ids, their producers and open transactions.
    pub fn transactions(&self) -> &Transactions {
        &self.transactions
    }

    /// Kafka's last stable offset: the first offset of the partition's earliest open
    /// transaction, or its high watermark. A read_committed consumer reads below it.
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Option<Offset> {
        let partition = self.topics.partition(tp)?;
        Some(
            self.transactions
                .first_unstable(tp)
                .map_or(partition.high_watermark, |first| {
                    first
                        .max(partition.log_start_offset)
                        .min(partition.high_watermark)
                }),
        )
    }

    pub fn lease(&self, job: &Job) -> Option<&Lease> {
        self.leases.get(job)
    }

    pub fn leases(&self) -> impl Iterator<Item = (&Job, &Lease)> {
        self.leases.iter()
    }

    pub fn cluster_id(&self) -> Option<&str> {
        self.registry.cluster_id()
    }

    /// The limits handlers check requests against: those in force, or the defaults before
    /// the `SetLimits` entry is applied (a request refused there never reaches the log).
    pub fn limits(&self) -> Limits {
        self.limits.clone().unwrap_or_default()
    }

    /// ACLs, SCRAM credentials, listener endpoints.
    pub fn security(&self) -> &security::SecurityState {
        &self.security
    }

    /// Whether the `SetLimits` entry has been applied.
    pub fn limits_set(&self) -> bool {
        self.limits.is_some()
    }

    /// Every agent in the registry, live or lapsed.
    pub fn registered_agents(&self) -> impl Iterator<Item = &Agent> {
        self.registry.agents.values()
    }

    /// Agents whose lease has not expired at the state's time: the same answer on every node
    /// that has applied the same entries, whatever its wall clock says.
    pub fn live_agents(&self) -> impl Iterator<Item = &Agent> {
        self.registry.live_agents(self.now_ms)
    }

    /// The single entry: every command, in log order, on every node.
    pub fn apply(&mut self, command: impl Into<Command>) -> Outcome {
        self.applied += 1;
        match command.into() {
            Command::Topic(c) => Outcome::Topic(c.apply(self)),
            Command::Log(c) => Outcome::Log(c.apply(self)),
            Command::Producer(c) => Outcome::Producer(c.apply(self)),
            Command::GroupOffsets(c) => Outcome::GroupOffsets(c.apply(self)),
            Command::Cluster(c) => Outcome::Cluster(c.apply(self)),
            Command::Agent(c) => Outcome::Agent(c.apply(self)),
            Command::Clock(c) => Outcome::Clock(c.apply(self)),
            Command::Job(c) => Outcome::Job(c.apply(self)),
            Command::Transaction(c) => Outcome::Transaction(c.apply(self)),
            Command::Security(c) => Outcome::Security(c.apply(self)),
        }
    }

    /// A command's own outcome, for pure callers (tests, the simulation, benches).
    pub fn run<C: Request>(&mut self, command: C) -> C::Outcome {
        C::own(self.apply(command))
            .expect("apply answers each command with its own outcome (noun!)")
    }
}

#[cfg(test)]
pub(crate) mod tests;
