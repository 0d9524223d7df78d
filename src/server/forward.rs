//! Agent-to-agent forwarding of group requests behind a load balancer (the sending side).
//!
//! ```text
//! client ─► LB ─► agent A (not the group's coordinator, same advertised address)
//!                   └─ POST http://<B's internal address>/kafka/forward  (the request frame)
//!                         agent B (`forwarded`): route as if read from a client ─► response
//!                   ◄─ the response frame, written to the client unchanged
//! ```
//! A forwarded request is never forwarded again: if B disagrees about who coordinates (an
//! agent's lease just changed), B answers NOT_COORDINATOR and the client looks again.

use crate::metadata::quorum::network::PostError;
use crate::server::broker::Broker;
use crate::server::caller::Caller;
use axum::body::Bytes;
use std::time::Duration;

/// A forwarded group request may wait as long as a JoinGroup does.
pub const FORWARD_TIMEOUT: Duration = Duration::from_secs(330);

/// Sends a request frame to the agent at `addr`; returns its response frame.
pub async fn send(
    broker: &Broker,
    addr: &str,
    frame: Bytes,
    caller: &Caller,
    timeout: Duration,
) -> Result<Bytes, PostError> {
    // The coordinator authorizes the request as the client, not as this agent: the caller
    // travels with it (the request is signed, so the coordinator can trust what it says).
    let path = format!(
        "/kafka/forward?{}",
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("client_host", &caller.host)
            .append_pair("principal", &caller.principal)
            .append_pair("listener", &caller.listener)
            .finish()
    );
    broker
        .metadata
        .quorum()
        .peers()
        .post_bytes(addr, &path, frame, timeout)
        .await
}
