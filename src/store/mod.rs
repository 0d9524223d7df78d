//! Access to the object store.
//!
//! ```text
//! produce/fetch ─► ObjectClient (client.rs): chaos (injected latency, faults) ─► timeout
//!                   ─► object_store (S3 · GCS · Azure · local fs · memory · packs), metrics
//!                   per attempt, retries with backoff + jitter within a deadline (retry.rs)
//! ```
//! `open.rs` opens the configured store (the embedded default is `pack`); `aws_credentials.rs`
//! resolves AWS's credential chain; `latency_model_file.rs` reads a calibrated latency model.

pub mod aws_credentials;
pub mod chaos;
pub mod client;
pub mod latency_model_file;
pub mod metrics;
pub mod open;
pub mod retry;

pub use client::{ObjectClient, ObjectStoreError};
