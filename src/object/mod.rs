//! Objects in the object store.
//!
//! ```text
//! produce/fetch ─► ObjectClient (client.rs): chaos (injected latency, faults) ─► timeout
//!                   ─► object_store (S3 · GCS · Azure · local fs · memory), metrics per attempt,
//!                   retries with backoff + jitter within a deadline (retry.rs)
//! ```
//! `format`, `segment` and `key` are pure: the multi-partition object layout, the segment
//! layout and the key schema.

pub mod aws_credentials;
pub mod chaos;
pub mod client;
pub mod format;
pub mod key;
pub mod latency_model_file;
pub mod metrics;
pub mod pack;
pub mod retry;
pub mod segment;
pub mod store;

pub use client::{ObjectClient, ObjectStoreError};
