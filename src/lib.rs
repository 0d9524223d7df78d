//! floe: a diskless, Apache Kafka wire-compatible broker on object storage.

pub mod admin;
pub mod bench;
pub mod cleaner;
pub mod client;
pub mod clock;
pub mod config;
pub mod cost;
pub mod drain_signal;
pub mod fetch;
pub mod groups;
pub mod ids;
pub mod jobs;
pub mod metadata;
pub mod node;
pub mod object;
pub mod pack;
pub mod placement;
pub mod produce;
pub mod protocol;
pub mod random;
pub mod read_cache;
pub mod security;
pub mod server;
pub mod store;
pub mod telemetry;
pub mod topic_config;
