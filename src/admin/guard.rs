//! Who may use which admin route.
//!
//! | routes | without `--admin-token-file` | with it |
//! | --- | --- | --- |
//! | `/healthz`, `/readyz` | open | open |
//! | `/metrics` | open | open unless `--admin-metrics-open=false` |
//! | `/v1/...` views and mutations | open on a loopback address, refused elsewhere | `Authorization: Bearer <token>` |
//!
//! A refusal is 401 with a `WWW-Authenticate: Bearer` header (or 403 when no token can ever
//! be accepted), counted in `floe_admin_refused_total`.

use crate::security::Secret;
use crate::security::metrics::SecurityMetrics;
use crate::telemetry::BrokerMetrics;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Who may pass a guarded route.
pub struct Guard {
    rule: Rule,
    metrics: Arc<BrokerMetrics>,
}

#[derive(Debug)]
enum Rule {
    Open,
    Token(Secret),
    /// No token configured and the address is not loopback: nobody.
    Closed,
}

impl Guard {
    pub fn new(token: Option<Secret>, loopback: bool, metrics: Arc<BrokerMetrics>) -> Guard {
        let rule = match (token, loopback) {
            (Some(token), _) => Rule::Token(token),
            (None, true) => Rule::Open,
            (None, false) => Rule::Closed,
        };
        Guard { rule, metrics }
    }

    /// The guard of routes that are always open.
    pub fn open(metrics: Arc<BrokerMetrics>) -> Guard {
        Guard::new(None, true, metrics)
    }

    /// Whether a request with this `Authorization` header value may pass (pure).
    fn admits(&self, authorization: Option<&[u8]>) -> Result<(), Refused> {
        match &self.rule {
            Rule::Open => Ok(()),
            Rule::Closed => Err(Refused::NoTokenConfigured),
            Rule::Token(token) => {
                let presented = authorization
                    .and_then(|v| v.strip_prefix(b"Bearer "))
                    .ok_or(Refused::Missing)?;
                if token.matches(presented.trim_ascii()) {
                    Ok(())
                } else {
                    Err(Refused::Wrong)
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refused {
    Missing,
    Wrong,
    NoTokenConfigured,
}

/// The middleware in front of guarded routes.
pub async fn require(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    match guard.admits(authorization) {
        Ok(()) => next.run(request).await,
        Err(refused) => {
            SecurityMetrics::count(&guard.metrics.security.admin_refused);
            match refused {
                Refused::NoTokenConfigured => (
                    StatusCode::FORBIDDEN,
                    "the admin API is not on a loopback address: start floe with \
                     --admin-token-file to use this route\n",
                )
                    .into_response(),
                Refused::Missing | Refused::Wrong => (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    if refused == Refused::Missing {
                        "this route needs an Authorization: Bearer <token> header\n"
                    } else {
                        "the bearer token is not the admin token\n"
                    },
                )
                    .into_response(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_passes() {
        let m = || Arc::new(BrokerMetrics::default());
        let open = Guard::new(None, true, m());
        assert_eq!(open.admits(None), Ok(()));
        let closed = Guard::new(None, false, m());
        assert_eq!(
            closed.admits(Some(b"Bearer x")),
            Err(Refused::NoTokenConfigured)
        );
        let token = Guard::new(Some(Secret::new("s3cret")), false, m());
        assert_eq!(token.admits(Some(b"Bearer s3cret")), Ok(()));
        assert_eq!(token.admits(Some(b"Bearer s3cre")), Err(Refused::Wrong));
        assert_eq!(token.admits(Some(b"Basic s3cret")), Err(Refused::Missing));
        assert_eq!(token.admits(None), Err(Refused::Missing));
        // A token also guards a loopback address.
        let local = Guard::new(Some(Secret::new("t")), true, m());
        assert_eq!(local.admits(None), Err(Refused::Missing));
    }
}
