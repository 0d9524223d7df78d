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
//! Where things live:
//! - the parts, one file each with its own rules: `topics` (names, ids, partition counts,
//!   configs), `index` (a partition's offsets and batch index), `producers` (ids, epochs,
//!   sequence windows), `groups` (committed offsets), `agents` (the registry and the cluster
//!   id), `recent_commits`, `objects`, `jobs`, `transactions`, `security`; `parts.rs` composes
//!   them into `MetadataState`;
//! - the commands, one file per noun (`commands/<noun>.rs`): each command a type with its own
//!   outcome, applied by composing the parts it touches;
//! - this file: `Command` and `Outcome` (one variant per noun) and `apply`, the single entry,
//!   which dispatches; `reads.rs`: what the rest of floe reads; `snapshot.rs`: the snapshot
//!   layout, one section per part.
//!
//! Adding a command: its struct, its `Apply` in its noun's file, and a row in that noun's
//! `noun!`. Nothing here changes unless the noun is new.

mod agents;
pub mod client_quotas;
mod commands;
mod group_configs;
mod groups;
mod index;
pub mod jobs;
pub mod limits;
pub mod markers;
pub mod objects;
mod parts;
mod persistent;
mod producers;
mod reads;
mod recent_commits;
pub mod retention;
pub mod security;
pub mod share;
mod snapshot;
mod topics;
pub mod transactions;

pub use agents::{AGENT_LEASE_MS_MAX, Agent, RegistryError};
pub use commands::*;
pub use group_configs::{GroupConfigError, GroupConfigs};
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

use serde::{Deserialize, Serialize};

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
    Share(ShareCommand),
    GroupConfig(GroupConfigCommand),
    ClientQuota(ClientQuotaCommand),
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
    Share(ShareOutcome),
    GroupConfig(GroupConfigOutcome),
    ClientQuota(ClientQuotaOutcome),
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
    Share: ShareCommand => ShareOutcome,
    GroupConfig: GroupConfigCommand => GroupConfigOutcome,
    ClientQuota: ClientQuotaCommand => ClientQuotaOutcome,
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
            Command::Share(c) => Outcome::Share(c.apply(self)),
            Command::GroupConfig(c) => Outcome::GroupConfig(c.apply(self)),
            Command::ClientQuota(c) => Outcome::ClientQuota(c.apply(self)),
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
