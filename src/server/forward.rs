//! Agent-to-agent forwarding of group requests behind a load balancer.
//!
//! ```text
//! client ─► LB ─► agent A (not the group's coordinator, same advertised address)
//!                   └─ POST http://<B's Raft address>/kafka/forward  (the request frame)
//!                         agent B: route as if read from a client ─► response frame
//!                   ◄─ the response frame, written to the client unchanged
//! ```
//! A forwarded request is never forwarded again: if B disagrees about who coordinates (an
//! agent's lease just changed), B answers NOT_COORDINATOR and the client looks again.

use crate::protocol::frame::parse_request;
use crate::server::broker::Broker;
use crate::server::router::{Origin, route};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// The broker, set once it exists (the Raft listener starts before it).
pub type BrokerSlot = Arc<OnceLock<Weak<Broker>>>;

/// A forwarded request may wait as long as a JoinGroup does.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(330);

pub fn routes(slot: BrokerSlot) -> Router {
    Router::new()
        .route("/kafka/forward", post(serve))
        .layer(DefaultBodyLimit::max(8 * 1024 * 1024))
        .with_state(slot)
}

/// The forwarding agent's client, as that agent saw it.
#[derive(serde::Deserialize)]
struct Forwarded {
    #[serde(default)]
    client_host: String,
}

async fn serve(
    State(slot): State<BrokerSlot>,
    Query(forwarded): Query<Forwarded>,
    body: Bytes,
) -> Response {
    let Some(broker) = slot.get().and_then(Weak::upgrade) else {
        return (StatusCode::SERVICE_UNAVAILABLE, "starting\n").into_response();
    };
    // The body is a whole frame: a 4-byte size, then the request.
    let Some(frame) = body.get(4..).map(|b| body.slice_ref(b)) else {
        return (StatusCode::BAD_REQUEST, "short frame\n").into_response();
    };
    let request = match parse_request(frame) {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    };
    let reply = match route(broker, request, Origin::Forwarded, &forwarded.client_host).await {
        Ok(reply) => reply,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    };
    match reply.await {
        Ok(Some(response)) => response.into_response(),
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

/// Sends a request frame to the agent at `addr`; returns its response frame.
pub async fn send(
    broker: &Broker,
    addr: &str,
    frame: Bytes,
    client_host: &str,
) -> Result<Bytes, String> {
    let path = format!(
        "/kafka/forward?{}",
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("client_host", client_host)
            .finish()
    );
    broker
        .metadata
        .quorum()
        .peers()
        .post_bytes(addr, &path, frame, FORWARD_TIMEOUT)
        .await
        .map_err(|e| format!("forwarding a group request: {e}"))
}
