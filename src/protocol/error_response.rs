//! Kafka's `getErrorResponse`: the answer a request gets when it fails with one error.
//!
//! Generated for every request (`messages::error_responses`, from the message definitions
//! and the shapes in `codegen/src/shapes.rs`), so a refusal is never written by hand: a
//! whole request refused answers `request.error_response(version, code)`; the items taken out
//! of a request before its handler ran go back into its answer with `item_errors`.

use super::ErrorCode;
use super::wire::Message;

/// A request's answer when it fails whole.
pub trait ErrorResponse: Message {
    type Response: Message;

    /// What Kafka's broker answers when the whole request fails with `error`: the error at
    /// the top level where the response has one, and on every item the request names where
    /// Kafka echoes them (each topic and partition, group, resource), with Kafka's sentinels
    /// (offsets and node ids -1). Error messages are left null.
    fn error_response(&self, version: i16, error: ErrorCode) -> Self::Response;
}

/// A request whose answer lists the items it names (topics, partitions, groups, resources).
pub trait ItemErrors: ErrorResponse {
    /// Every item the request names, answered with `error`, and nothing at the top level:
    /// the refused part of a request, answered beside what its handler answered.
    fn item_errors(&self, version: i16, error: ErrorCode) -> Self::Response;

    /// Appends `more`'s items to `response`.
    fn append_items(response: &mut Self::Response, more: Self::Response);
}
