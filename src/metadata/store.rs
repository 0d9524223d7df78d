//! `MetadataStore`: what the broker sees of the metadata quorum — `write(command)`, returning
//! that command's own result once the write is durable on a majority (`write_each` for many),
//! and reads of this node's applied copy of the state.
//!
//! A write returns only after this node has applied it too, so a client that wrote through
//! this node reads its own write here (read-your-writes).
//!
//! Every write answers `Result<_, MetadataError>`: the outer error says the write did not
//! complete (retriable; `server::error_codes` maps it to Kafka's code for the request's
//! role); the value is the command's own answer from the state machine.

use super::quorum::node::ENTRY_BYTES_MAX;
use super::quorum::{Quorum, QuorumConfig, QuorumError, WriteError};
use super::state::{Command, MetadataState, Outcome, Request};
use crate::clock::Clock;
use std::path::Path;
use std::sync::Arc;

#[derive(Clone)]
pub struct MetadataStore {
    quorum: Arc<Quorum>,
}

#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    /// The quorum did not commit the write, or this node did not apply it, in time.
    #[error("the metadata write did not complete")]
    Write(#[from] WriteError),
    /// The quorum answered a command with another command's outcome: the leader that applied
    /// it is of another build (within one build, `noun!` pairs each command with its own
    /// outcome). Reported instead of a panic.
    #[error("{command} was answered with {outcome:?}")]
    MismatchedOutcome {
        command: &'static str,
        outcome: Option<Outcome>,
    },
}

/// Splits commands into runs that each fit in one Raft entry (with room to spare).
fn split_to_fit(commands: Vec<Command>) -> Vec<Vec<Command>> {
    let budget = ENTRY_BYTES_MAX / 2;
    let mut entries: Vec<Vec<Command>> = Vec::new();
    let mut bytes = 0;
    for command in commands {
        let size = postcard::experimental::serialized_size(&command).unwrap_or(budget);
        match entries.last_mut() {
            Some(entry) if bytes + size <= budget => entry.push(command),
            _ => {
                entries.push(vec![command]);
                bytes = 0;
            }
        }
        bytes += size;
    }
    entries
}

/// The command's own outcome, or what came instead. Another one (or none) can only come from
/// a leader of another build: within one, `noun!` pairs each command with its own outcome.
fn own<C: Request>(outcome: Option<Outcome>) -> Result<C::Outcome, Option<Outcome>> {
    match outcome.map(C::own) {
        Some(Ok(outcome)) => Ok(outcome),
        Some(Err(other)) => Err(Some(other)),
        None => Err(None),
    }
}

fn mismatched<C: Request>(outcome: Option<Outcome>) -> MetadataError {
    MetadataError::MismatchedOutcome {
        command: C::NAME,
        outcome,
    }
}

impl MetadataStore {
    /// Starts this node's quorum member with its storage under `dir`. Its RPCs are served by
    /// the caller, from `quorum().routes()`.
    pub async fn open(
        dir: &Path,
        config: QuorumConfig,
        clock: Clock,
    ) -> Result<MetadataStore, QuorumError> {
        let quorum = Quorum::start(dir, config, clock).await?;
        Ok(MetadataStore {
            quorum: Arc::new(quorum),
        })
    }

    /// Writes `command` (durable on a majority), waits until this node has applied it, and
    /// returns its own outcome.
    pub async fn write<C: Request>(&self, command: C) -> Result<C::Outcome, MetadataError> {
        own::<C>(self.apply(vec![command.into()]).await?.pop()).map_err(mismatched::<C>)
    }

    /// Writes `commands` in order, in as few entries as fit (`split_to_fit`); one outcome
    /// each, in order.
    pub async fn write_each<C: Request>(
        &self,
        commands: Vec<C>,
    ) -> Result<Vec<C::Outcome>, MetadataError> {
        let mut results = Vec::with_capacity(commands.len());
        for entry in split_to_fit(commands.into_iter().map(Into::into).collect()) {
            let count = entry.len();
            let mut outcomes = self.apply(entry).await?.into_iter();
            for _ in 0..count {
                results.push(own::<C>(outcomes.next()).map_err(mismatched::<C>)?);
            }
        }
        Ok(results)
    }

    /// Commits the commands (durable on a majority), waits until this node has applied
    /// them, and returns their outcomes.
    async fn apply(&self, commands: Vec<Command>) -> Result<Vec<Outcome>, MetadataError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let applied = self.quorum.write(commands).await?;
        self.quorum.wait_applied(applied.index).await?;
        Ok(applied.outcomes)
    }

    /// Brings this node's copy of the state up to the quorum's: learns the leader's read index
    /// and waits until it is applied here, so everything committed before the call is in the
    /// copy after it. For the reads that must not trust a lagging copy (`server::fresh_copy`).
    pub async fn catch_up(&self) -> Result<(), MetadataError> {
        let index = match self.quorum.read_index().await {
            Ok(index) => index,
            // A leader of an older version (a rolling upgrade) has no read-index route: an
            // entry of no commands, committed through it, marks the same point.
            Err(WriteError::NotServed(_)) => self.quorum.write(Vec::new()).await?.index,
            Err(e) => return Err(e.into()),
        };
        self.quorum.wait_applied(index).await?;
        Ok(())
    }

    /// Runs `f` on this node's consistent view of the state.
    pub fn read<T>(&self, f: impl FnOnce(&MetadataState) -> T) -> T {
        self.quorum.shared().read(|m| f(&m.state))
    }

    /// Signals raised for the partitions of each commit this node applies (fetch long-polls).
    pub fn partition_signals(&self) -> &crate::metadata::partition_signals::PartitionSignals {
        &self.quorum.shared().partitions
    }

    pub fn quorum(&self) -> &Arc<Quorum> {
        &self.quorum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Offset;
    use crate::metadata::quorum::types::Commands;
    use crate::metadata::state::{GroupOffset, OffsetCommit};

    #[test]
    fn a_huge_offset_commit_is_split_into_entries_that_fit() {
        let commit = |partition| -> Command {
            OffsetCommit {
                group: "g".into(),
                topic: "t".into(),
                partition,
                offset: GroupOffset {
                    offset: Offset(1),
                    leader_epoch: 0,
                    metadata: Some("m".repeat(4096)),
                    commit_timestamp: 0,
                },
            }
            .into()
        };
        let commands: Vec<Command> = (0..10_000).map(commit).collect();
        let entries = split_to_fit(commands.clone());
        assert!(entries.len() > 1, "40 MB does not fit one entry");
        for entry in &entries {
            let bytes = postcard::experimental::serialized_size(&Commands(entry.clone())).unwrap();
            assert!(bytes <= ENTRY_BYTES_MAX, "{bytes}");
        }
        assert_eq!(entries.concat(), commands, "all of them, in order");
        assert_eq!(split_to_fit(vec![commit(0)]).len(), 1);
    }
}
