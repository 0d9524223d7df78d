//! Metrics and logs: lock-free primitives, the broker's metric set, Prometheus text rendering,
//! and errors shown with their causes.

pub mod broker;
pub mod error_chain;
pub mod histogram;
pub mod prometheus;

pub use broker::BrokerMetrics;
pub use error_chain::ErrorChain;
