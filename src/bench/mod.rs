//! Cost-versus-latency experiments: a Kafka load generator over floe's own codec, the cost
//! model, and parameter sweeps with a CSV and a plot.
//!
//! ```text
//! floe bench [--embedded] ─► experiment ─► load (producers + consumer) ─► broker
//!                                 └─ object-store counters ─► cost ─► report (JSON / human)
//! floe bench sweep ─► one embedded experiment per point ─► priced deployments (cost)
//!                  ─► CSV, JSON, plots (frontier, breakdown)
//! floe bench calibrate ─► the real store's PUT/GET latency ─► a latency model file
//! ```

pub mod agent_cpu;
pub mod calibrate;
pub mod experiment;
pub mod labels;
pub mod latency_fit;
pub mod load;
pub mod plot;
pub mod sweep;
