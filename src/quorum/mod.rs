//! The metadata quorum: `MetadataState` replicated by Raft (openraft) across the voters, and
//! followed by learner agents.
//!
//! ```text
//! MetadataStore::apply ─► Quorum::write ─► leader: append (fsync) ─► replicate ─► commit
//!                                                                      │
//!     every member: StateMachine::apply (MetadataState, pure) ◄────────┘ ─► read locally
//! ```
//! `types` names the Raft instantiation; `log_store` is the fsync'd log; `state_machine`
//! applies entries and snapshots; `network` and `service` are the HTTP transport between
//! members; `node` starts a member and routes writes to the leader.

pub mod log_store;
pub mod network;
pub mod node;
pub mod service;
pub mod state_machine;
pub mod types;

pub use node::{Quorum, QuorumConfig, QuorumError, WriteError};

#[cfg(test)]
mod cluster_tests;

#[cfg(test)]
mod storage_suite {
    //! openraft's own conformance suite, run against the durable log and the state machine.

    use super::log_store::LogStore;
    use super::state_machine::StateMachine;
    use super::types::{StorageError, TypeConfig};
    use openraft::testing::{StoreBuilder, Suite};
    use openraft::{AnyError, StorageIOError};

    struct Builder;

    impl StoreBuilder<TypeConfig, LogStore, StateMachine, tempfile::TempDir> for Builder {
        async fn build(&self) -> Result<(tempfile::TempDir, LogStore, StateMachine), StorageError> {
            let io = |e: std::io::Error| -> StorageError {
                StorageIOError::write_logs(AnyError::new(&e)).into()
            };
            let dir = tempfile::tempdir().map_err(io)?;
            let log = LogStore::open(dir.path()).map_err(io)?;
            let machine = StateMachine::open(dir.path()).map_err(io)?;
            Ok((dir, log, machine))
        }
    }

    #[test]
    fn openraft_storage_suite_passes() {
        if let Err(e) = Suite::test_all(Builder) {
            panic!("storage suite: {e}");
        }
    }
}
