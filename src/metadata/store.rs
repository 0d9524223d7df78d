//! `MetadataStore`: the single-node owner of the metadata state and its durable log.
//!
//! Commands are appended and fsync'd before they are applied, so every outcome a caller sees
//! survives a crash. Readers take a shared lock on the state; writers are serialised by the log
//! lock, which keeps the log order and the apply order the same.

use super::log::{CommandLog, LogError};
use super::state::{Command, MetadataState, Outcome};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::watch;

#[derive(Clone)]
pub struct MetadataStore {
    inner: Arc<Inner>,
}

struct Inner {
    log: Mutex<CommandLog>,
    state: RwLock<MetadataState>,
    /// Bumped after every apply; long-polling fetches wait on it.
    applied: watch::Sender<u64>,
    snapshot_every: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("the metadata writer stopped: {0}")]
    Stopped(String),
}

impl MetadataStore {
    pub fn open(dir: &Path, snapshot_every: u64) -> Result<MetadataStore, LogError> {
        let (log, state) = CommandLog::open(dir)?;
        let (applied, _) = watch::channel(state.applied());
        Ok(MetadataStore {
            inner: Arc::new(Inner {
                log: Mutex::new(log),
                state: RwLock::new(state),
                applied,
                snapshot_every: snapshot_every.max(1),
            }),
        })
    }

    /// Makes the commands durable, applies them in order, and returns their outcomes.
    pub async fn apply(&self, commands: Vec<Command>) -> Result<Vec<Outcome>, StoreError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.apply_blocking(commands))
            .await
            .map_err(|e| StoreError::Stopped(e.to_string()))?
    }

    pub async fn apply_one(&self, command: Command) -> Result<Outcome, StoreError> {
        let mut outcomes = self.apply(vec![command]).await?;
        outcomes
            .pop()
            .ok_or_else(|| StoreError::Stopped("no outcome for a command".into()))
    }

    /// Runs `f` on a consistent view of the state.
    pub fn read<T>(&self, f: impl FnOnce(&MetadataState) -> T) -> T {
        let state = self
            .inner
            .state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&state)
    }

    /// A receiver that changes whenever a command is applied.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.applied.subscribe()
    }
}

impl Inner {
    fn apply_blocking(&self, commands: Vec<Command>) -> Result<Vec<Outcome>, StoreError> {
        let mut log = self
            .log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        log.append(&commands)?;
        let mut state = self
            .state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let outcomes: Vec<Outcome> = commands.into_iter().map(|c| state.apply(c)).collect();
        let applied = state.applied();
        if log.records_since_snapshot() >= self.snapshot_every
            && let Err(e) = log.snapshot(&state)
        {
            // The log still holds everything; a failed snapshot only delays compaction.
            tracing::warn!(error = %e, "metadata snapshot failed");
        }
        drop(state);
        self.applied.send_replace(applied);
        Ok(outcomes)
    }
}
