//! Admin HTTP (axum): health, readiness, Prometheus metrics, and JSON views.
//!
//! | path | answer |
//! | --- | --- |
//! | `/healthz` | 200 while the process serves |
//! | `/readyz` | 200 when this agent's copy holds the cluster's id and its own live registration, and the object store answered its last probe (at most one per `--ready-probe-interval`); else 503; 503 once draining |
//! | `/metrics` | Prometheus text format |
//! | `/v1/cluster`, `/v1/topics`, `/v1/groups` | JSON views (groups with lag) |
//! | `/v1/cost?profile=s3-standard&retention_hours=168` | requests and bytes so far, projected $/month |
//! | `/v1/quorum` | this node's view of the metadata quorum (role, term, leader, members, indexes) |
//! | `POST /v1/quorum/learners` `{"id":4,"raft_addr":"host:port"}` | add a learner (on the leader) |
//! | `PUT /v1/quorum/voters` `{"voters":[1,2,3]}` | change the voters; others stay learners (on the leader) |
//! | `POST /v1/drain` (`Content-Type: application/json`) | drain this agent and exit, as SIGTERM does (`node::drain`); 202 |
//!
//! Who may call which route: `guard`.

mod exposition;
pub mod guard;
mod readiness;
mod views;

use crate::cost::PriceProfile;
use crate::server::broker::Broker;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::collections::HashMap;
use std::sync::Arc;

pub fn router(broker: Arc<Broker>) -> Router {
    let security = &broker.config.security;
    let loopback = broker
        .config
        .admin_addr
        .as_deref()
        .is_some_and(crate::security::is_loopback);
    let counters = broker.metrics.clone();
    let views = Arc::new(guard::Guard::new(
        security.admin_token.clone(),
        loopback,
        counters.clone(),
    ));
    let metrics_guard = Arc::new(if security.admin_metrics_open {
        guard::Guard::open(counters)
    } else {
        guard::Guard::new(security.admin_token.clone(), loopback, counters)
    });
    let readiness = Arc::new(readiness::Readiness::new(security.ready_probe_interval));
    let open = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move |State(b): State<Arc<Broker>>| async move { ready(&b, &readiness).await }),
        );
    let metrics = Router::new().route("/metrics", get(metrics)).route_layer(
        axum::middleware::from_fn_with_state(metrics_guard, guard::require),
    );
    let guarded = Router::new()
        .route(
            "/v1/cluster",
            get(|State(b): State<Arc<Broker>>| async move { Json(views::cluster(&b)) }),
        )
        .route(
            "/v1/topics",
            get(|State(b): State<Arc<Broker>>| async move { Json(views::topics(&b)) }),
        )
        .route(
            "/v1/groups",
            get(|State(b): State<Arc<Broker>>| async move { Json(views::groups(&b)) }),
        )
        .route("/v1/cost", get(cost))
        .route(
            "/v1/storage",
            get(|State(b): State<Arc<Broker>>| async move { Json(views::storage(&b)) }),
        )
        .route(
            "/v1/quorum",
            get(|State(b): State<Arc<Broker>>| async move { Json(views::quorum(&b)) }),
        )
        .route("/v1/quorum/learners", axum::routing::post(add_learner))
        .route("/v1/quorum/voters", axum::routing::put(change_voters))
        .route("/v1/drain", axum::routing::post(drain))
        .route_layer(axum::middleware::from_fn_with_state(views, guard::require));
    open.merge(metrics).merge(guarded).with_state(broker)
}

/// Serves the admin API on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, broker: Arc<Broker>) {
    if let Err(e) = axum::serve(listener, router(broker)).await {
        tracing::error!(error = %e, "admin server stopped");
    }
}

/// On one node the metadata is in-process and always readable, so readiness is the object
/// store's: its last probe (write, read, delete) must have succeeded.
async fn ready(broker: &Broker, readiness: &readiness::Readiness) -> Response {
    if broker.drain.is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    // Before the quorum has applied them an agent would tell clients a cluster id of its own
    // (librdkafka warns of a client connected to two clusters) and a broker list without
    // itself: a load balancer must not send it clients yet.
    if !broker.registered() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "not registered: the quorum has not applied this agent's registration yet\n",
        )
            .into_response();
    }
    match readiness.check(&broker.store, &broker.clock).await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("object store unavailable: {e}\n"),
        )
            .into_response(),
    }
}

/// Starts the drain; the process (`floe serve`) exits once it is done. The call must say
/// `Content-Type: application/json`: a web page can make a browser send a plain POST to a
/// loopback address, but not that one without the browser asking first.
async fn drain(State(broker): State<Arc<Broker>>, headers: axum::http::HeaderMap) -> Response {
    let json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "POST /v1/drain needs Content-Type: application/json\n",
        )
            .into_response();
    }
    let started = broker.drain.start();
    let answer = if started {
        "draining\n"
    } else {
        "already draining\n"
    };
    (StatusCode::ACCEPTED, answer).into_response()
}

#[derive(serde::Deserialize)]
struct LearnerRequest {
    id: crate::ids::NodeId,
    raft_addr: String,
}

#[derive(serde::Deserialize)]
struct VotersRequest {
    voters: std::collections::BTreeSet<crate::ids::NodeId>,
}

/// Membership changes run on the leader; elsewhere the answer names it.
fn not_leader(broker: &Broker) -> Option<Response> {
    let quorum = broker.metadata.quorum();
    (!quorum.is_leader()).then(|| {
        let leader = quorum.raft().metrics().borrow().current_leader;
        (
            StatusCode::MISDIRECTED_REQUEST,
            format!("this node is not the quorum leader; the leader is node {leader:?}\n"),
        )
            .into_response()
    })
}

async fn add_learner(
    State(broker): State<Arc<Broker>>,
    Json(request): Json<LearnerRequest>,
) -> Response {
    if let Some(refusal) = not_leader(&broker) {
        return refusal;
    }
    match broker
        .metadata
        .quorum()
        .add_learner(request.id, request.raft_addr)
        .await
    {
        Ok(()) => Json(views::quorum(&broker)).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    }
}

async fn change_voters(
    State(broker): State<Arc<Broker>>,
    Json(request): Json<VotersRequest>,
) -> Response {
    if let Some(refusal) = not_leader(&broker) {
        return refusal;
    }
    if request.voters.is_empty() {
        return (StatusCode::BAD_REQUEST, "voters must not be empty\n").into_response();
    }
    match broker.metadata.quorum().change_voters(request.voters).await {
        Ok(()) => Json(views::quorum(&broker)).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    }
}

async fn metrics(State(broker): State<Arc<Broker>>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        exposition::render(&broker),
    )
        .into_response()
}

async fn cost(
    State(broker): State<Arc<Broker>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    // Only built-in profiles over HTTP: a query must not name files on the server.
    let profile = match query.get("profile").map_or("s3-standard", String::as_str) {
        "s3-standard" => PriceProfile::s3_standard(),
        "s3-express" => PriceProfile::s3_express(),
        other => {
            return (
                StatusCode::BAD_REQUEST,
                format!("unknown profile '{other}': s3-standard or s3-express\n"),
            )
                .into_response();
        }
    };
    let retention_hours = match query.get("retention_hours").map(|h| h.parse::<f64>()) {
        None => 168.0,
        Some(Ok(h)) if h >= 0.0 => h,
        Some(_) => {
            return (
                StatusCode::BAD_REQUEST,
                "retention_hours must be a non-negative number\n",
            )
                .into_response();
        }
    };
    Json(views::cost(&broker, &profile, retention_hours)).into_response()
}
