//! Group requests other agents forward to this one (it coordinates the group), served on the
//! internal listener at `POST /kafka/forward`. See `forward` for the sending side.
//!
//! The response frame goes back unchanged; a forwarded request is routed with
//! `Origin::Forwarded`, so it is never forwarded again.

use crate::protocol::frame::parse_request;
use crate::server::broker::Broker;
use crate::server::caller::Caller;
use crate::server::{caller::Origin, router::route};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use std::sync::Arc;

/// The forwarding endpoint's routes, served beside the quorum's on the internal listener.
pub fn routes(broker: Arc<Broker>) -> Router {
    Router::new()
        .route("/kafka/forward", post(serve))
        .layer(DefaultBodyLimit::max(8 * 1024 * 1024))
        .with_state(broker)
}

/// The forwarding agent's client, as that agent saw it (and authenticated it).
#[derive(serde::Deserialize)]
struct Forwarded {
    #[serde(default)]
    client_host: String,
    #[serde(default)]
    principal: Option<String>,
    #[serde(default)]
    listener: Option<String>,
}

async fn serve(
    State(broker): State<Arc<Broker>>,
    Query(forwarded): Query<Forwarded>,
    body: Bytes,
) -> Response {
    // The body is a whole frame: a 4-byte size, then the request.
    let Some(frame) = body.get(4..).map(|b| body.slice_ref(b)) else {
        return (StatusCode::BAD_REQUEST, "short frame\n").into_response();
    };
    let request = match parse_request(frame) {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    };
    let caller = Caller {
        host: forwarded.client_host,
        principal: forwarded
            .principal
            .unwrap_or_else(|| crate::server::caller::ANONYMOUS.to_string()),
        listener: forwarded.listener.unwrap_or_default(),
        lane: 0,
    };
    let reply = match route(broker, request, Origin::Forwarded, &caller).await {
        Ok(reply) => reply,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    };
    match reply.await {
        Ok(Some(response)) => response.to_bytes().into_response(),
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}
