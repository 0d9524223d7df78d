//! Security counters: refused admin calls, logins by mechanism and outcome, denied
//! operations. (Refused internal requests are counted by `cluster_auth`.)

use std::sync::atomic::{AtomicU64, Ordering};

/// The SASL mechanisms counted, in `floe_sasl_authentications_total`'s label order.
pub const MECHANISMS: [&str; 4] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];

#[derive(Default)]
pub struct SecurityMetrics {
    /// Admin HTTP calls refused for a missing or wrong token.
    pub admin_refused: AtomicU64,
    /// Successful and failed SASL authentications, per mechanism (`MECHANISMS`).
    pub sasl_succeeded: [AtomicU64; 4],
    pub sasl_failed: [AtomicU64; 4],
    /// Connections closed because their session expired without re-authentication (KIP-368).
    pub sessions_expired: AtomicU64,
    /// TLS handshakes that failed (bad certificate, wrong protocol, timeout).
    pub tls_handshakes_failed: AtomicU64,
    /// Operations the authorizer denied.
    pub authorization_denied: AtomicU64,
}

impl SecurityMetrics {
    pub fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one authentication with `mechanism`.
    pub fn login(&self, mechanism: &str, succeeded: bool) {
        if let Some(i) = MECHANISMS.iter().position(|m| *m == mechanism) {
            let counters = if succeeded {
                &self.sasl_succeeded
            } else {
                &self.sasl_failed
            };
            counters[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}
