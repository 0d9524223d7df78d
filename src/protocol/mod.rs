//! The Kafka wire protocol: framing, message codec, API versions, record batch headers.
//!
//! ```text
//! socket bytes ─► frame::split_frame (size prefix, max size)
//!              ─► frame::parse_request (RequestHeader v1/v2 by API and version)
//!              ─► RequestBody::decode (generated, per version)
//! ```
//! Everything here is pure code over `bytes::Bytes`; no I/O, no tokio. Decoders never trust a
//! length from the wire (see `wire`), and record batches stay opaque, zero-copy slices of the
//! frame that `record_batch` can inspect and patch.

pub mod api_versions;
pub mod compression;
pub mod decode_budget;
pub mod error_code;
pub mod error_response;
pub mod frame;
#[cfg(test)]
mod tests;
#[rustfmt::skip]
pub mod messages;
pub mod record_batch;
pub mod records;
#[cfg(test)]
mod sample;
pub mod spliced;
pub mod wire;

pub use error_code::ErrorCode;
pub use messages::ApiKey;
pub use wire::{DecodeError, EncodeError, Message};
