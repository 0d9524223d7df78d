//! Routes a request frame to its API (`handlers::REGISTRY`, served by `api::serve`).
//!
//! Only the registered APIs and versions are advertised and served. ApiVersions at an unknown version
//! gets the KIP-511 answer; any other unsupported API or version, and any body that fails to
//! decode, closes the connection (what Kafka does: the client cannot have negotiated it).

use super::api::Call;
use super::broker::Broker;
use super::handlers::{self, Caller};
use crate::protocol::frame::{Frame, RequestFrame, encode_response};
use crate::protocol::wire::Message;
use crate::protocol::{ApiKey, DecodeError, EncodeError};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error("{api:?} v{version} is not supported")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("cannot encode the response: {0}")]
    Encode(#[from] EncodeError),
}

/// Where a request came from: a client connection, or another agent forwarding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Client,
    Forwarded,
}

/// The rest of a request's handling, run concurrently with later requests; resolves to the
/// encoded response, or `None` when no response is due (acks=0 produce).
pub type PendingResponse = Pin<Box<dyn Future<Output = Result<Option<Frame>, RouteError>> + Send>>;

/// Starts handling one request. What must happen in request order is done before this
/// returns: decoding, authorizing, queueing a produce request's batches, and every request
/// whose handler answers `Reply::Now` in full. The rest (waiting for commits, long polls) is
/// the returned `PendingResponse`.
pub async fn route(
    broker: Arc<Broker>,
    frame: RequestFrame,
    origin: Origin,
    caller: &Caller,
) -> Result<PendingResponse, RouteError> {
    let api = frame.api_key;
    let version = frame.api_version();
    let correlation_id = frame.correlation_id();
    // ApiVersions is answered before its body is decoded, at any version (KIP-511): a client
    // asks it before it knows which versions are served.
    if api == ApiKey::ApiVersions {
        let (body, body_version) =
            handlers::api_versions::handle(version, broker.config.transaction_version);
        let encoded = encode_response(api, version, correlation_id, |buf| {
            body.encode(buf, body_version)
        });
        return Ok(Box::pin(async move { Ok(Some(encoded?)) }));
    }
    let Some(entry) = super::api::find(api, version) else {
        return Err(RouteError::UnsupportedVersion { api, version });
    };
    entry
        .serve(
            &broker,
            Call {
                frame,
                caller,
                origin,
            },
        )
        .await
}
