//! Kafka's `getErrorResponse`: the answer a request gets when it fails with one error.
//!
//! Generated for every request (in its module under `messages`, from the message definitions
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
    /// (offsets and node ids -1), and `message` in every error message beside an error.
    fn error_response_with(
        &self,
        version: i16,
        error: ErrorCode,
        message: Option<&str>,
    ) -> Self::Response;

    /// `error_response_with` without a message (error messages null).
    fn error_response(&self, version: i16, error: ErrorCode) -> Self::Response {
        self.error_response_with(version, error, None)
    }
}

/// A request whose answer lists the items it names (topics, partitions, groups, resources).
pub trait ItemErrors: ErrorResponse {
    /// Every item the request names, answered with `error` (and `message`), and nothing at
    /// the top level: the refused part of a request, answered beside its handler's answer.
    fn item_errors_with(
        &self,
        version: i16,
        error: ErrorCode,
        message: Option<&str>,
    ) -> Self::Response;

    /// `item_errors_with` without a message.
    fn item_errors(&self, version: i16, error: ErrorCode) -> Self::Response {
        self.item_errors_with(version, error, None)
    }

    /// Appends `more`'s items to `response`.
    fn append_items(response: &mut Self::Response, more: Self::Response);
}
