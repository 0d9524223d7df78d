//! The Kafka wire protocol: framing, message codec, API versions, record batch headers.
//!
//! ```text
//! socket bytes ─► frame (size prefix, max size) ─► RequestHeader ─► RequestBody::decode
//!                                                                  (generated, per version)
//! ```
//! Everything here is pure code over `bytes::Bytes`; no I/O, no tokio. Decoders never trust a
//! length from the wire (see `wire`), and record batches stay opaque, zero-copy slices of the
//! frame that `record_batch` can inspect and patch.

#[cfg(test)]
mod conformance_tests;
pub mod wire;
#[rustfmt::skip]
pub mod messages;

pub use messages::ApiKey;
pub use wire::{DecodeError, EncodeError, Message};
