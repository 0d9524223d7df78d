//! Consumer groups (classic protocol): which agent coordinates a group, and the coordinator.
//!
//! ```text
//! FindCoordinator ─► placement::coordinator(live agents, group id)   (same answer on every agent)
//! JoinGroup / SyncGroup / Heartbeat / LeaveGroup ─► Coordinator ─► classic::Group (pure)
//! OffsetCommit ─► Coordinator::check_commit ─► metadata quorum (durable offsets)
//! ```

pub mod assignor;
pub mod classic;
pub mod consumer;
pub mod coordinator;
pub mod group_config;
pub mod limits;
pub mod share;
pub mod topics_copy;

pub use coordinator::Coordinator;
