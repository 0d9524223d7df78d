//! Metadata: the consistent part of floe (topics, offsets, producer state, group offsets).
//!
//! ```text
//! handlers ──► MetadataStore::apply(command) ──► CommandLog (append + fsync)
//!                                           └──► MetadataState::apply (pure) ──► outcome
//!                                           └──► notify waiters (long-poll fetch)
//! ```
//! `state` is pure and deterministic; `log` makes it durable on one node; `store` serialises
//! access and wakes readers when a commit changes what is visible.

pub mod log;
pub mod state;
pub mod store;

pub use state::{Command, MetadataState, Outcome, TopicPartition};
pub use store::MetadataStore;
