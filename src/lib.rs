//! floe: a diskless, Apache Kafka wire-compatible broker on object storage.

pub mod protocol;
