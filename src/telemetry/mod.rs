//! Metrics: lock-free primitives, the broker's metric set, and Prometheus text rendering.

pub mod broker;
pub mod histogram;
pub mod prometheus;

pub use broker::{BrokerMetrics, SealReason};
