//! Routes a request frame to its API (`handlers::REGISTRY`; `api.rs` serves it).
//!
//! Only the registered APIs and versions are advertised and served. ApiVersions at an unknown version
//! gets the KIP-511 answer; any other unsupported API or version, and any body that fails to
//! decode, closes the connection (what Kafka does: the client cannot have negotiated it).

use super::api::{Call, PendingResponse, RouteError};
use super::broker::Broker;
use super::caller::{Caller, Origin};
use super::handlers;
use crate::protocol::ApiKey;
use crate::protocol::frame::{RequestFrame, encode_response};
use crate::protocol::wire::Message;
use std::sync::Arc;

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
        let (body, body_version) = handlers::api_versions::handle(
            version,
            &broker.advertised_apis,
            broker.config.transaction_version,
        );
        let encoded = encode_response(api, version, correlation_id, |buf| {
            body.encode(buf, body_version)
        });
        return Ok(Box::pin(async move { Ok(Some(encoded?)) }));
    }
    let Some(entry) = handlers::find(api, version) else {
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
