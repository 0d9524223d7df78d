//! The connection's side of SASL: before a request is routed, a connection on a
//! `SASL_PLAINTEXT` or `SASL_SSL` listener asks its `security::sasl::Session` whether the
//! request may be served, and answers SaslHandshake and SaslAuthenticate itself (they change
//! who the connection speaks for). On any other listener the two are routed like any request
//! and their APIs answer ILLEGAL_SASL_STATE, as Kafka's KafkaApis does.
//!
//! ```text
//! frame ─► session.admit ── Close ──────────────► close (nothing is answered)
//!                        ├─ Refuse ─────────────► close (see below)
//!                        └─ Serve ─► SaslHandshake / SaslAuthenticate ─► answer here
//!                                 └─ anything else ─► router, as the session's principal
//! ```
//! Kafka answers a refused request in its own shape with ILLEGAL_SASL_STATE before closing;
//! floe closes at once (the client sent something it cannot have meant to).

use crate::protocol::ApiKey;
use crate::protocol::frame::{Frame, RequestFrame, encode_response};
use crate::protocol::messages::{RequestBody, SaslAuthenticateResponse, SaslHandshakeResponse};
use crate::protocol::wire::Message;
use crate::security::metrics::SecurityMetrics;
use crate::security::sasl::{Admission, AuthenticateAnswer, Credentials, Session};
use crate::security::scram::{ScramCredential, ScramMechanism};
use crate::server::api::RouteError;
use crate::server::broker::Broker;
use crate::server::caller::Caller;

/// What the connection does with a request.
pub enum Step {
    /// Route it as usual.
    Route(RequestFrame),
    /// Send this answer; then close the connection when `close`.
    Answer { response: Frame, close: bool },
    /// Close the connection without an answer.
    Close(&'static str),
}

/// The replicated SCRAM credentials, as the session asks for them.
struct StateCredentials<'a>(&'a Broker);

impl Credentials for StateCredentials<'_> {
    fn scram(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential> {
        self.0
            .metadata
            .read(|s| s.security().scram_credential(user, mechanism).cloned())
    }
}

/// A SCRAM server nonce: 18 random bytes from the operating system (unpredictable, which the
/// node's seeded `Rng` is not meant to be), in base64 (printable, no ',').
fn nonce() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 18];
    if aws_lc_rs::rand::fill(&mut bytes).is_err() {
        // Never seen in practice; a nonce that is not random only weakens this one exchange's
        // replay protection, and the exchange still needs the password.
        tracing::error!("the system random generator failed");
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn answer<M: Message>(frame: &RequestFrame, body: &M, close: bool) -> Result<Step, RouteError> {
    let version = frame.api_version();
    let response = encode_response(frame.api_key, version, frame.correlation_id(), |buf| {
        body.encode(buf, version)
    })?;
    Ok(Step::Answer { response, close })
}

/// Decides what happens to `frame` on a connection with `session` (`None`: not a SASL
/// listener), updating `caller` when a login completes.
pub fn step(
    broker: &Broker,
    frame: RequestFrame,
    session: Option<&mut Session>,
    caller: &mut Caller,
) -> Result<Step, RouteError> {
    let api = frame.api_key;
    // Not a SASL listener: every request is routed, a SASL one too (its API answers
    // ILLEGAL_SASL_STATE, `handlers::sasl_handshake`).
    let Some(session) = session else {
        return Ok(Step::Route(frame));
    };
    let now = broker.clock.now_ms();
    match session.admit(api as i16, now) {
        Admission::Serve => {}
        Admission::Refuse => return Ok(Step::Close("a request out of turn in a SASL exchange")),
        Admission::Close => {
            if session.expires_at_ms().is_some_and(|at| now >= at) {
                SecurityMetrics::count(&broker.metrics.security.sessions_expired);
                return Ok(Step::Close(
                    "its SASL session expired without re-authentication",
                ));
            }
            return Ok(Step::Close("a request before SASL authentication"));
        }
    }
    let settings = &broker.sasl;
    match api {
        ApiKey::ApiVersions => {
            let accepted =
                crate::server::handlers::find(ApiKey::ApiVersions, frame.api_version()).is_some();
            session.api_versions_answered(accepted);
            Ok(Step::Route(frame))
        }
        ApiKey::SaslHandshake => {
            let RequestBody::SaslHandshake(request) = frame.decode_body()? else {
                return Ok(Step::Close("a SaslHandshake that is not one"));
            };
            let answered =
                session.handshake(&request.mechanism, frame.api_version(), now, settings);
            answer(
                &frame,
                &SaslHandshakeResponse {
                    error_code: answered.error.code(),
                    mechanisms: answered.mechanisms,
                },
                answered.close,
            )
        }
        ApiKey::SaslAuthenticate => {
            let RequestBody::SaslAuthenticate(request) = frame.decode_body()? else {
                return Ok(Step::Close("a SaslAuthenticate that is not one"));
            };
            let answered = session.authenticate(
                &request.auth_bytes,
                now,
                &nonce(),
                settings,
                &StateCredentials(broker),
            );
            let close = answered.closes_connection();
            let code = answered.error_code().code();
            let metrics = &broker.metrics.security;
            let response = match answered {
                AuthenticateAnswer::Continue { auth_bytes } => SaslAuthenticateResponse {
                    auth_bytes: auth_bytes.into(),
                    ..Default::default()
                },
                AuthenticateAnswer::Done {
                    auth_bytes,
                    principal,
                    session_lifetime_ms,
                    mechanism,
                    reauthentication,
                } => {
                    metrics.login(mechanism, true);
                    if !reauthentication {
                        tracing::debug!(%principal, mechanism, host = %caller.host, "authenticated");
                    }
                    caller.principal = principal;
                    SaslAuthenticateResponse {
                        auth_bytes: auth_bytes.into(),
                        session_lifetime_ms,
                        ..Default::default()
                    }
                }
                AuthenticateAnswer::Failed { message, mechanism } => {
                    metrics.login(mechanism, false);
                    // The message is safe to log: it never holds a password or a token.
                    tracing::info!(host = %caller.host, mechanism, reason = %message, "SASL authentication failed");
                    SaslAuthenticateResponse {
                        error_code: code,
                        error_message: Some(message),
                        ..Default::default()
                    }
                }
                AuthenticateAnswer::IllegalState { message, .. } => SaslAuthenticateResponse {
                    error_code: code,
                    error_message: Some(message),
                    ..Default::default()
                },
            };
            answer(&frame, &response, close)
        }
        _ => Ok(Step::Route(frame)),
    }
}
