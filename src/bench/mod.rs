//! Cost-versus-latency experiments: the cost model (and, next, the `floe bench` load generator).

pub mod cost;
