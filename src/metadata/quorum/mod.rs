//! The metadata quorum: `MetadataState` replicated by Raft (openraft) across the voters, and
//! followed by learner agents.
//!
//! ```text
//! MetadataStore::<command> ─► Quorum::write ─► leader: append (fsync) ─► replicate ─► commit
//!                                                                      │
//!     every member: StateMachine::apply (MetadataState, pure) ◄────────┘ ─► read locally
//! ```
//! `types` names the Raft instantiation; `log_store` is the fsync'd log; `state_machine`
//! applies entries and snapshots; `network` and `service` are the HTTP transport between
//! members; `node` starts a member and routes writes to the leader; `learners` keeps the
//! learners in line with the agent registry.

pub mod learners;
pub mod log_store;
pub mod network;
pub mod node;
pub mod service;
pub mod state_machine;
pub mod types;

pub use node::{Quorum, QuorumConfig, QuorumError, WriteError};

#[cfg(test)]
mod tests;
