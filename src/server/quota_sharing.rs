//! Client quotas across the agents behind one load balancer.
//!
//! Kafka meters each quota per broker. Behind a balancer the agents are shown as one broker,
//! and a client's connections land on any of them, so each agent passes on to its siblings
//! (the live agents at the same advertised address) what each account used through it, every
//! `SHARE_INTERVAL`: `POST /quotas/usage/v2` on the internal listener, only when some account
//! with a quota used something. Each agent takes what the others used from the account's own
//! tokens, so every agent meters the account's usage on all of them and throttles the
//! connections it serves by that.
//!
//! Error bound: an agent learns the others' usage up to one interval (plus a request's time)
//! late, so an account may get, beyond its quota, what its connections on the other agents
//! send in one interval before their agents see the tokens owed; owed tokens stay owed until
//! paid back, so that excess is repaid, not repeated. Measured (the load-balancer test of
//! `tests/quotas.rs`: four connections over three agents, each able to send twelve times the
//! quota): 1.012 of the quota over the minute after the first burst, against 0.999 for one
//! connection on one agent; not passing usage on at all would give three times the quota.
//! An agent a sibling cannot reach meters without that sibling's share (up to the whole quota
//! each) until it is reachable again; what could not be passed on is dropped.

use super::broker::Broker;
use super::siblings::siblings;
use crate::quotas::meter::Usage;
use crate::telemetry::ErrorChain;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::post;
use std::sync::Arc;
use std::time::Duration;

/// How often each agent passes its usage on: the error bound above shrinks with it; each
/// agent posts to each sibling at most this often.
pub const SHARE_INTERVAL: Duration = Duration::from_millis(200);

/// A sibling has this long to take the usage passed to it (so at most this over the interval
/// posts are under way to one sibling).
const SHARE_TIMEOUT: Duration = Duration::from_secs(1);

/// The internal path the usage is posted to. Versioned: each usage carries the quota that
/// bound it since v2, and the encoding is not self-describing, so an agent of another version
/// answers 404 and is metered apart, as a sibling that cannot be reached is.
const PATH: &str = "/quotas/usage/v2";

/// The routes that take other agents' usage, served on the internal listener.
pub fn routes(broker: Arc<Broker>) -> Router {
    Router::new()
        .route(PATH, post(take))
        .layer(DefaultBodyLimit::max(32 * 1024 * 1024))
        .with_state(broker)
}

async fn take(State(broker): State<Arc<Broker>>, body: Bytes) -> StatusCode {
    match postcard::from_bytes::<Vec<Usage>>(&body) {
        Ok(usage) => {
            let now = broker.clock.monotonic_ms();
            broker.quota_meter.add_shared(&usage, now);
            StatusCode::OK
        }
        Err(e) => {
            tracing::warn!(error = %e, "refused another agent's quota usage: undecodable");
            StatusCode::BAD_REQUEST
        }
    }
}

/// Passes this agent's usage on to its siblings every `SHARE_INTERVAL`, for as long as the
/// agent runs.
pub async fn share(broker: Arc<Broker>) {
    loop {
        broker.clock.sleep(SHARE_INTERVAL).await;
        let usage = broker.quota_meter.take_unshared();
        if usage.is_empty() {
            continue;
        }
        let siblings = siblings(&broker);
        if siblings.is_empty() {
            continue;
        }
        let body = match postcard::to_stdvec(&usage) {
            Ok(body) => Bytes::from(body),
            Err(e) => {
                tracing::warn!(error = %e, "cannot encode quota usage");
                continue;
            }
        };
        // Each sibling on a task of its own: a slow one does not delay the others' usage.
        for addr in siblings.into_iter().filter_map(|agent| agent.internal_addr) {
            let (broker, body) = (broker.clone(), body.clone());
            tokio::spawn(async move {
                let peers = broker.metadata.quorum().peers();
                let sent = peers.post_bytes(&addr, PATH, body, SHARE_TIMEOUT).await;
                if let Err(e) = sent {
                    tracing::debug!(%addr, error = %ErrorChain(&e), "quota usage not passed on");
                }
            });
        }
    }
}
