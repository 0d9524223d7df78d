//! Metadata: the consistent part of floe (topics, offsets, producer state, group offsets).
//!
//! ```text
//! handlers ──► MetadataStore::apply(commands) ──► quorum (Raft: fsync'd log, majority commit)
//!                                             └──► MetadataState::apply (pure) ──► outcomes
//!          ──► MetadataStore::read ──► this node's applied MetadataState (no network)
//! ```
//! `state` is pure and deterministic; `store` is the broker's window onto the replicated copy.

pub mod state;
pub mod store;

pub use state::{Command, MetadataState, Outcome, TopicPartition};
pub use store::MetadataStore;
