//! The replicated state machine: Raft applies committed entries to `MetadataState`, and builds
//! and installs snapshots of it.
//!
//! ```text
//! raft/snapshot   postcard(SnapshotMeta, MACHINE_FORMAT ++ postcard(Machine)), replaced atomically
//! ```
//! A snapshot's data with another tag than `MACHINE_FORMAT` was written by an earlier build
//! (no release wrote one) and is refused, never guessed at.
//!
//! The machine is shared with the broker (`Shared`): handlers read it under a read lock, so a
//! lookup never leaves the process. On restart the machine starts from the last snapshot and
//! Raft re-applies the committed entries after it.

use super::log_store::{read_optional, write_atomically};
use super::types::{
    Applied, Entry, LogId, Snapshot, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};
use crate::clock::Clock;
use crate::ids::TopicPartition;
use crate::metadata::MetadataState;
use crate::metadata::partition_signals::PartitionSignals;
use crate::metadata::state::{
    ClockOutcome, Command, CommitObject, LogCommand, Outcome, ShareCommand, ShareOutcome,
    TransactionOutcome,
};
use openraft::storage::RaftStateMachine;
use openraft::{AnyError, EntryPayload, RaftSnapshotBuilder, StorageIOError};
use serde::{Deserialize, Serialize};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use tokio::sync::watch;

/// The metadata state with the Raft position it reflects; snapshots copy all of it at once.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    pub state: MetadataState,
    pub last_applied: Option<LogId>,
    pub membership: StoredMembership,
}

/// What the broker shares with Raft: the machine and a signal raised after every apply.
pub struct Shared {
    pub machine: RwLock<Machine>,
    /// The last applied log index; read-your-writes waits on it.
    pub applied: watch::Sender<u64>,
    /// Raised for the partitions each applied commit touched: long-polling fetches wait on it.
    pub partitions: PartitionSignals,
}

impl Shared {
    pub fn read<T>(&self, f: impl FnOnce(&Machine) -> T) -> T {
        let machine = self
            .machine
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&machine)
    }

    fn write<T>(&self, f: impl FnOnce(&mut Machine) -> T) -> T {
        let mut machine = self
            .machine
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut machine)
    }
}

/// Tags a snapshot's data as the current layout of `Machine`: postcard is not
/// self-describing, so the layout must be named, not guessed.
const MACHINE_FORMAT: &[u8] = b"floe-machine-v7\0";

/// Why a snapshot's data does not load.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Another layout's tag, or none: written by another floe. No release wrote one, so
    /// none is read; the data dir must be removed.
    #[error("written by another floe (layout {tag:?}); no release reads it: remove the data dir")]
    Layout { tag: String },
    #[error("does not decode: {0}")]
    Decode(#[source] postcard::Error),
}

pub(super) fn encode_machine(machine: &Machine) -> Result<Vec<u8>, postcard::Error> {
    let mut data = MACHINE_FORMAT.to_vec();
    data.extend(postcard::to_stdvec(machine)?);
    Ok(data)
}

pub fn decode_machine(data: &[u8]) -> Result<Machine, SnapshotError> {
    let Some(current) = data.strip_prefix(MACHINE_FORMAT) else {
        let tag = &data[..data.len().min(MACHINE_FORMAT.len())];
        let tag = tag.split(|b| *b == 0).next().unwrap_or_default();
        return Err(SnapshotError::Layout {
            tag: String::from_utf8_lossy(tag).into_owned(),
        });
    };
    postcard::from_bytes(current).map_err(SnapshotError::Decode)
}

#[derive(Serialize, Deserialize)]
struct SnapshotFile {
    meta: SnapshotMeta,
    data: Vec<u8>,
}

#[derive(Clone)]
pub struct StateMachine {
    shared: Arc<Shared>,
    dir: PathBuf,
    /// Names snapshots (term, index and the time they were built).
    clock: Clock,
}

fn sm_error(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::write_state_machine(AnyError::error(e.to_string())).into()
}

fn snapshot_error(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::write_snapshot(None, AnyError::error(e.to_string())).into()
}

impl StateMachine {
    /// Opens the machine in `dir`, starting from the last snapshot there (if any).
    pub fn open(dir: &Path, clock: Clock) -> std::io::Result<StateMachine> {
        std::fs::create_dir_all(dir)?;
        let machine = match read_snapshot(dir)? {
            Some(file) => decode_machine(&file.data)
                .map_err(|e| std::io::Error::other(format!("{}/snapshot: {e}", dir.display())))?,
            None => Machine::default(),
        };
        let index = machine.last_applied.map_or(0, |l| l.index);
        let (applied, _) = watch::channel(index);
        Ok(StateMachine {
            shared: Arc::new(Shared {
                machine: RwLock::new(machine),
                applied,
                partitions: PartitionSignals::default(),
            }),
            dir: dir.to_path_buf(),
            clock,
        })
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    fn current_snapshot(&self) -> std::io::Result<Option<Snapshot>> {
        Ok(read_snapshot(&self.dir)?.map(|file| Snapshot {
            meta: file.meta,
            snapshot: Box::new(Cursor::new(file.data)),
        }))
    }
}

fn read_snapshot(dir: &Path) -> std::io::Result<Option<SnapshotFile>> {
    read_optional(&dir.join("snapshot"))
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<Snapshot, StorageError> {
        // A copy under the read lock (consistent with `last_applied`; cheap, the state's parts
        // are persistent collections it shares), encoded on a blocking thread: applies never
        // wait for the encoding (`cargo bench --bench metadata -- snapshot`).
        let machine = self.shared.read(Machine::clone);
        let (last_applied, membership) = (machine.last_applied, machine.membership.clone());
        let data = tokio::task::spawn_blocking(move || encode_machine(&machine))
            .await
            .map_err(snapshot_error)?
            .map_err(snapshot_error)?;
        let snapshot_id = match last_applied {
            Some(l) => format!("{}-{}-{}", l.leader_id.term, l.index, self.clock.now_ms()),
            None => format!("0-0-{}", self.clock.now_ms()),
        };
        let meta = SnapshotMeta {
            last_log_id: last_applied,
            last_membership: membership,
            snapshot_id,
        };
        let file = SnapshotFile {
            meta: meta.clone(),
            data,
        };
        let dir = self.dir.clone();
        let file = tokio::task::spawn_blocking(move || {
            write_atomically(&dir, "snapshot", &file).map(|()| file)
        })
        .await
        .map_err(snapshot_error)?
        .map_err(snapshot_error)?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(file.data)),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        Ok(self.shared.read(|m| (m.last_applied, m.membership.clone())))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Applied>, StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut touched = Vec::new();
        let mut wake_all = false;
        let (responses, last) = self.shared.write(|m| {
            let mut responses = Vec::new();
            for entry in entries {
                m.last_applied = Some(entry.log_id);
                let index = entry.log_id.index;
                let outcomes = match entry.payload {
                    EntryPayload::Blank => Vec::new(),
                    EntryPayload::Normal(commands) => commands
                        .0
                        .into_iter()
                        .map(|c| {
                            if let Command::Log(LogCommand::CommitObject(CommitObject {
                                partitions,
                                ..
                            })) = &c
                            {
                                touched.extend(partitions.iter().map(|p| p.partition));
                            }
                            let round: Vec<TopicPartition> = match &c {
                                Command::Share(ShareCommand::ShareRound(round)) => round
                                    .partitions
                                    .iter()
                                    .map(|p| TopicPartition {
                                        topic_id: p.topic_id,
                                        partition: p.partition,
                                    })
                                    .collect(),
                                _ => Vec::new(),
                            };
                            let outcome = m.state.apply(c);
                            // Markers: an EndTxn names its partitions; an abort on a new
                            // epoch or for a timeout (rare) wakes every waiting fetch.
                            match &outcome {
                                Outcome::Transaction(TransactionOutcome::EndTxn(Ok(end))) => {
                                    touched.extend(&end.marked)
                                }
                                Outcome::Transaction(
                                    TransactionOutcome::InitTransactionalProducer(Ok(_)),
                                ) => wake_all = true,
                                Outcome::Clock(ClockOutcome::Tick(ticked)) => {
                                    wake_all |= ticked.transactions_timed_out > 0;
                                    touched.extend(&ticked.share_freed);
                                }
                                // Records a share group gave back: its waiting reads look again.
                                Outcome::Share(ShareOutcome::ShareRound(results)) => touched
                                    .extend(
                                        round
                                            .iter()
                                            .zip(results)
                                            .filter(|(_, r)| r.freed)
                                            .map(|(tp, _)| *tp),
                                    ),
                                Outcome::Share(ShareOutcome::ReleaseShareMember(freed)) => {
                                    touched.extend(freed)
                                }
                                _ => {}
                            }
                            outcome
                        })
                        .collect(),
                    EntryPayload::Membership(membership) => {
                        m.membership = StoredMembership::new(Some(entry.log_id), membership);
                        Vec::new()
                    }
                };
                responses.push(Applied { index, outcomes });
            }
            (responses, m.last_applied.map_or(0, |l| l.index))
        });
        self.shared.applied.send_replace(last);
        if wake_all {
            self.shared.partitions.raise_all(self.clock.now());
        } else {
            self.shared.partitions.raise(&touched, self.clock.now());
        }
        Ok(responses)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        let data = snapshot.into_inner();
        let machine = decode_machine(&data).map_err(sm_error)?;
        let file = SnapshotFile {
            meta: meta.clone(),
            data,
        };
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || write_atomically(&dir, "snapshot", &file))
            .await
            .map_err(snapshot_error)?
            .map_err(snapshot_error)?;
        let index = machine.last_applied.map_or(0, |l| l.index);
        self.shared.write(|m| *m = machine);
        self.shared.applied.send_replace(index);
        self.shared.partitions.raise_all(self.clock.now());
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, StorageError> {
        self.current_snapshot().map_err(snapshot_error)
    }
}
