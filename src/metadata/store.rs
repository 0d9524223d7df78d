//! `MetadataStore`: what the broker sees of the metadata quorum — writes that return their
//! outcomes once durable on a majority, and reads of this node's applied copy of the state.
//!
//! A write returns only after this node has applied it too, so a client that wrote through
//! this node reads its own write here (read-your-writes).

use super::state::{Command, MetadataState, Outcome};
use crate::quorum::{Quorum, QuorumConfig, QuorumError, WriteError};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::watch;

#[derive(Clone)]
pub struct MetadataStore {
    quorum: Arc<Quorum>,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("the metadata writer stopped: {0}")]
    Stopped(String),
}

impl MetadataStore {
    /// Starts this node's quorum member with its storage under `dir`; `extra_routes` are
    /// served on its Raft listener too.
    pub async fn open(
        dir: &Path,
        config: QuorumConfig,
        extra_routes: axum::Router,
    ) -> Result<MetadataStore, QuorumError> {
        let quorum = Quorum::start_with(dir, config, extra_routes).await?;
        Ok(MetadataStore {
            quorum: Arc::new(quorum),
        })
    }

    /// Commits the commands (durable on a majority), waits until this node has applied
    /// them, and returns their outcomes.
    pub async fn apply(&self, commands: Vec<Command>) -> Result<Vec<Outcome>, StoreError> {
        let applied = self.quorum.write(commands).await?;
        self.quorum.wait_applied(applied.index).await?;
        Ok(applied.outcomes)
    }

    pub async fn apply_one(&self, command: Command) -> Result<Outcome, StoreError> {
        let mut outcomes = self.apply(vec![command]).await?;
        outcomes
            .pop()
            .ok_or_else(|| StoreError::Stopped("no outcome for a command".into()))
    }

    /// Runs `f` on this node's consistent view of the state.
    pub fn read<T>(&self, f: impl FnOnce(&MetadataState) -> T) -> T {
        self.quorum.shared().read(|m| f(&m.state))
    }

    /// A receiver that changes whenever this node applies a log entry.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.quorum.shared().applied.subscribe()
    }

    pub fn quorum(&self) -> &Quorum {
        &self.quorum
    }
}
