//! Metadata: the consistent part of floe (topics, offsets, producer state, group offsets, the
//! agent registry).
//!
//! ```text
//! handlers ──► MetadataStore::write(CommitObject { … } | CreateTopic { … } | …)
//!                 ──► quorum (Raft: fsync'd log, majority commit)
//!                 └─► MetadataState::apply (pure, on every member) ──► that command's result
//!          ──► MetadataStore::read ──► this node's applied MetadataState (no network)
//! ```
//! `state` is pure and deterministic; `quorum` replicates it (openraft); `store` is the
//! broker's typed window onto the replicated copy; `ticks` brings the leader's clock into it.

pub mod partition_signals;
pub mod quorum;
pub mod state;
pub mod store;
pub mod ticks;

pub use state::MetadataState;
pub use store::{MetadataError, MetadataStore};
