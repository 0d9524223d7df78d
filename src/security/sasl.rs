//! SASL on a Kafka listener: one [`Session`] per connection decides which requests may be
//! served, answers SaslHandshake and SaslAuthenticate, and keeps the principal and the session
//! expiry (KIP-368), the way Apache Kafka's `SaslServerAuthenticator` (before authentication)
//! and `KafkaApis` with `SocketServer` (after it) behave. Pure: the time (`now_ms`) and the SCRAM
//! nonce come in as arguments, and nothing here reads a socket or a clock.
//!
//! ```text
//!           ApiVersions (accepted)
//!   Start ─────────────────────────► VersionsAnswered
//!     │                                     │
//!     └─── SaslHandshake(usable m) ─────────┤
//!                                           ▼
//!                                      Exchange(m) ── SaslAuthenticate once (PLAIN, OAUTHBEARER)
//!                                           │         or twice (SCRAM: server-first, -final)
//!                                           ▼ proven
//!   ┌─────────────────────────────────► Complete
//!   │ proven, same principal                │ SaslHandshake(m), the session expires, and no
//!   │                                       │ re-authentication began in the last second
//!   └───────────── Exchange(m, previous) ◄──┤
//!                                           │ SaslHandshake(m' ≠ m), same conditions
//!                                           ▼
//!                                 BadReauthMechanism ── SaslAuthenticate ──► Failed
//!
//!   Any failure (mechanism not offered, bad credentials, request out of turn) ──► Failed
//! ```
//!
//! What [`Session::admit`] answers, by stage and request:
//!
//! ```text
//! stage               ApiVersions  SaslHandshake   SaslAuthenticate  any other
//! Start               serve        serve           close             close
//! VersionsAnswered    close        serve           close             close
//! Exchange, v1        refuse       refuse          serve             refuse
//! Exchange, v0        close        close           serve             close
//! BadReauthMechanism  close        close           serve (fails)     close
//! Complete            serve        serve           serve (34)        serve
//! Complete, expired   close        serve if a re-authentication may begin, else close
//! Failed              close        close           close             close
//! ```
//! "close" is Kafka closing without an answer (`InvalidRequestException` before a handshake,
//! "Disconnecting expired channel" after expiry); "refuse" is Kafka's ILLEGAL_SASL_STATE (34)
//! in the request's own response, then a close.
//!
//! Behaviour worth knowing, all Kafka's:
//! - **Session lifetime** (`calcCompletionTimesAndReturnSessionLifetimeMs`): the smaller of
//!   `connections.max.reauth.ms` (when > 0) and the credential's remaining lifetime (an
//!   OAUTHBEARER token's `exp`), clamped at 0; none of either means no expiry and 0 on the wire.
//!   A token bounds the session even with `connections.max.reauth.ms` = 0, as in Kafka.
//! - **Re-authentication** (KIP-368) starts with a SaslHandshake on an authenticated connection,
//!   only if the session has an expiry and the previous re-authentication began at least
//!   [`REAUTHENTICATION_INTERVAL_MIN_MS`] ago; otherwise the handshake is answered 34 and the
//!   connection stays (KafkaApis' answer). It must keep the mechanism and the principal. While
//!   it runs, Kafka's channel is back in its authenticator, so only SaslAuthenticate is served
//!   and any other request is refused (34, close); the Java client holds its requests until
//!   it ends.
//! - **Expiry**: from `expires_at` on, every request but a SaslHandshake that begins a
//!   re-authentication closes the connection silently.
//! - **Failure texts** never hold a password, token, proof or key: PLAIN's are Kafka's
//!   `PlainSaslServer` ones; SCRAM's come from [`ScramError::kafka_client_message`];
//!   OAUTHBEARER's from [`OAuthError`]'s `Display`, which is safe by construction.
//!
//! Where floe differs, deliberately:
//! - **SaslHandshake v0** announces raw size-prefixed SASL tokens outside Kafka framing. floe
//!   does not read raw tokens: it answers a v0 handshake like a v1 one, and then only
//!   SaslAuthenticate requests carry the exchange. A raw token does not parse as a
//!   SaslAuthenticate request, so such a client is closed. Clients that read ApiVersions (the
//!   Java client, librdkafka) use v1 when it is offered.
//! - **Mechanisms** are offered only when usable: OAUTHBEARER needs a validator. PLAIN and SCRAM
//!   always are, since PLAIN falls back on the replicated SCRAM credentials.
//! - **PLAIN** checks a user named in the PLAIN users file against it, and any other user
//!   against the replicated SCRAM credentials (Kafka's PLAIN knows only its JAAS file). Its
//!   message must hold exactly two NULs (Kafka silently cuts a password at a third), and the
//!   authzid is compared before the password (Kafka compares it after; the answer depends on
//!   the request alone either way).
//! - **A re-authentication with another mechanism** gets its SaslAuthenticate answered with 58
//!   and Kafka's `REAUTH_BAD_MECHANISM` text; Kafka closes without answering.
//!
//! Caveats for the connection that drives a session: call [`Session::admit`], then
//! `handshake`/`authenticate`, in the order requests are read, and finish one before admitting
//! the next, since each can change what the next may do (Kafka reads one request at a time
//! here), and report how an ApiVersions served before the handshake was answered
//! ([`Session::api_versions_answered`]). Kafka delays the close after an authentication failure
//! (`connection.failed.authentication.delay.ms`, 100 ms); that delay is the connection's to
//! apply. A PLAIN login checked against SCRAM credentials runs PBKDF2 on the broker (up to two
//! derivations of [`ScramMechanism::MAX_ITERATIONS`]), so its time also tells a SCRAM user from
//! an unknown name, as the step at which SCRAM fails does (see `scram`).
//!
//! [`ScramError::kafka_client_message`]: crate::security::scram::ScramError::kafka_client_message
//! [`OAuthError`]: crate::security::oauthbearer::OAuthError

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use aws_lc_rs::constant_time;

use crate::protocol::{ApiKey, ErrorCode};
use crate::security::Secret;
use crate::security::oauthbearer::{self, JwtValidator};
use crate::security::scram::{AwaitingFinal, ScramCredential, ScramMechanism, ScramServer};

/// The longest PLAIN message accepted. RFC 4616 asks servers to take 255 bytes per field; this
/// leaves room for long names and passwords and still bounds what a client makes us hash.
pub const PLAIN_MESSAGE_BYTES_MAX: usize = 4096;

/// The most users a PLAIN users file may hold.
pub const PLAIN_USERS_MAX: usize = 100_000;

/// The longest name or password in a PLAIN users file, in bytes.
pub const PLAIN_USERS_FIELD_BYTES_MAX: usize = 1024;

/// The largest PLAIN users file read; whichever of this and [`PLAIN_USERS_MAX`] comes first.
pub const PLAIN_USERS_FILE_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// How soon after the start of one re-authentication another may start (Kafka's
/// `MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS`): a client cannot make the broker run exchange after
/// exchange on one connection.
pub const REAUTHENTICATION_INTERVAL_MIN_MS: i64 = 1000;

/// Kafka's principal type for SASL users (`KafkaPrincipal.USER_TYPE`).
const PRINCIPAL_TYPE: &str = "User";

/// Kafka's `PlainServerCallbackHandler` answer for an unknown user and for a wrong password
/// alike, so that the answer does not tell which.
const PLAIN_INVALID_CREDENTIALS: &str = "Authentication failed: Invalid username or password";

const PLAIN_AUTHORIZATION_ID_MISMATCH: &str =
    "Authentication failed: Client requested an authorization id that is different from username";

/// A SASL mechanism floe serves, by its Kafka name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    Plain,
    Scram(ScramMechanism),
    OAuthBearer,
}

impl Mechanism {
    pub const ALL: [Mechanism; 4] = [
        Mechanism::Plain,
        Mechanism::Scram(ScramMechanism::Sha256),
        Mechanism::Scram(ScramMechanism::Sha512),
        Mechanism::OAuthBearer,
    ];

    /// The name SaslHandshake and `sasl.enabled.mechanisms` use.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::Scram(scram) => scram.name(),
            Mechanism::OAuthBearer => "OAUTHBEARER",
        }
    }

    /// The mechanism of a name; exact match, as Kafka's `enabledMechanisms.contains` is.
    pub fn from_name(name: &str) -> Option<Mechanism> {
        Self::ALL
            .into_iter()
            .find(|mechanism| mechanism.name() == name)
    }
}

/// Users and passwords for SASL/PLAIN, read from a file (Kafka keeps them in its JAAS
/// configuration as `user_<name>="<password>"`).
pub struct PlainUsers {
    users: BTreeMap<String, Secret>,
}

/// Why a PLAIN users file was refused. No variant holds a password or a whole line (a line
/// without ':' may be a password).
#[derive(Debug, thiserror::Error)]
pub enum PlainUsersError {
    #[error("cannot read the PLAIN users file {path}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the PLAIN users file {path} is larger than {max_bytes} bytes")]
    TooLarge { path: String, max_bytes: u64 },
    #[error("PLAIN users line {line}: expected `name:password`")]
    MissingSeparator { line: usize },
    #[error("PLAIN users line {line}: the user name is empty")]
    EmptyName { line: usize },
    #[error("PLAIN users line {line}: the user name has leading or trailing whitespace")]
    NameWhitespace { line: usize },
    #[error("PLAIN users line {line}: the password is empty")]
    EmptyPassword { line: usize },
    #[error("PLAIN users line {line}: a name or password holds a NUL, which PLAIN cannot send")]
    Nul { line: usize },
    #[error("PLAIN users line {line}: a name or password is longer than {max_bytes} bytes")]
    FieldTooLong { line: usize, max_bytes: usize },
    #[error("PLAIN users line {line}: user {name:?} is defined twice")]
    Duplicate { line: usize, name: String },
    #[error("the PLAIN users file has more than {max} users")]
    TooManyUsers { max: usize },
}

impl PlainUsers {
    /// Reads one `name:password` per line. The line is split at its first ':', so a name
    /// cannot hold one and a password can; everything after it, spaces included, is the
    /// password. A trailing `\r` (CRLF files) is not part of it. Blank lines and lines whose
    /// first non-blank character is '#' are skipped. A name defined twice is refused rather
    /// than one of them silently winning.
    pub fn parse(text: &str) -> Result<PlainUsers, PlainUsersError> {
        let mut users = BTreeMap::new();
        for (index, text_line) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = text_line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let (name, password) = text_line
                .split_once(':')
                .ok_or(PlainUsersError::MissingSeparator { line })?;
            if name.is_empty() {
                return Err(PlainUsersError::EmptyName { line });
            }
            if password.is_empty() {
                return Err(PlainUsersError::EmptyPassword { line });
            }
            if name.len() > PLAIN_USERS_FIELD_BYTES_MAX
                || password.len() > PLAIN_USERS_FIELD_BYTES_MAX
            {
                return Err(PlainUsersError::FieldTooLong {
                    line,
                    max_bytes: PLAIN_USERS_FIELD_BYTES_MAX,
                });
            }
            // " alice" would become the principal "User: alice": a typo, not a user.
            if name.trim() != name {
                return Err(PlainUsersError::NameWhitespace { line });
            }
            if name.contains('\0') || password.contains('\0') {
                return Err(PlainUsersError::Nul { line });
            }
            if users.contains_key(name) {
                return Err(PlainUsersError::Duplicate {
                    line,
                    name: name.to_owned(),
                });
            }
            if users.len() >= PLAIN_USERS_MAX {
                return Err(PlainUsersError::TooManyUsers {
                    max: PLAIN_USERS_MAX,
                });
            }
            users.insert(name.to_owned(), Secret::new(password));
        }
        Ok(PlainUsers { users })
    }

    /// Reads and parses the file at `path` (once: reloading it means reading it again).
    pub fn from_file(path: &Path) -> Result<PlainUsers, PlainUsersError> {
        use std::io::Read;
        let unreadable = |source: std::io::Error| PlainUsersError::Unreadable {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut text = String::new();
        file.take(PLAIN_USERS_FILE_BYTES_MAX + 1)
            .read_to_string(&mut text)
            .map_err(unreadable)?;
        if text.len() as u64 > PLAIN_USERS_FILE_BYTES_MAX {
            return Err(PlainUsersError::TooLarge {
                path: path.display().to_string(),
                max_bytes: PLAIN_USERS_FILE_BYTES_MAX,
            });
        }
        PlainUsers::parse(&text)
    }

    /// Whether `password` is the password of `name`, compared in constant time; `None` when
    /// the file does not name the user.
    pub fn check(&self, name: &str, password: &[u8]) -> Option<bool> {
        self.users.get(name).map(|secret| secret.matches(password))
    }

    pub fn len(&self) -> usize {
        self.users.len()
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// Shows how many users, never a password (nor the names, which logs do not need).
impl std::fmt::Debug for PlainUsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainUsers")
            .field("users", &self.users.len())
            .finish()
    }
}

/// A SASL listener's settings (Kafka's `sasl.enabled.mechanisms`, its JAAS users, its
/// `sasl.oauthbearer.*` validator and `connections.max.reauth.ms`).
#[derive(Debug, Clone, Default)]
pub struct SaslSettings {
    /// The mechanisms offered, by Kafka name ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
    /// "OAUTHBEARER"). Unknown names and unconfigured mechanisms are left out of what is
    /// offered ([`SaslSettings::usable_mechanisms`]).
    pub enabled: Vec<String>,
    /// PLAIN users from a file; without it PLAIN checks the SCRAM credentials only.
    pub plain_users: Option<Arc<PlainUsers>>,
    /// Validates OAUTHBEARER tokens; without it OAUTHBEARER is not offered.
    pub oauth: Option<Arc<JwtValidator>>,
    /// `connections.max.reauth.ms`; `None`, 0 or less: sessions are not bounded by it (a
    /// token's expiry still bounds them). Milliseconds, like `now_ms` and the wire's
    /// `session_lifetime_ms`.
    pub reauth_max_ms: Option<i64>,
}

impl SaslSettings {
    /// The enabled mechanisms that can authenticate anyone, in the configured order and once
    /// each: what SaslHandshake offers.
    pub fn usable_mechanisms(&self) -> Vec<Mechanism> {
        let mut usable: Vec<Mechanism> = Vec::new();
        for mechanism in self
            .enabled
            .iter()
            .filter_map(|name| Mechanism::from_name(name.as_str()))
        {
            let configured = match mechanism {
                Mechanism::Plain | Mechanism::Scram(_) => true,
                Mechanism::OAuthBearer => self.oauth.is_some(),
            };
            if configured && !usable.contains(&mechanism) {
                usable.push(mechanism);
            }
        }
        usable
    }
}

/// What a session needs from the replicated state: the SCRAM credential of a user for one
/// mechanism.
pub trait Credentials {
    fn scram(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential>;
}

/// Whether a request may be served now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Serve it (SaslHandshake and SaslAuthenticate through [`Session`]).
    Serve,
    /// Answer it with ILLEGAL_SASL_STATE (34) in its own response, then close the connection.
    Refuse,
    /// Close the connection without answering.
    Close,
}

/// The answer to a SaslHandshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeAnswer {
    /// NONE, UNSUPPORTED_SASL_MECHANISM or ILLEGAL_SASL_STATE.
    pub error: ErrorCode,
    /// The mechanisms offered (empty with ILLEGAL_SASL_STATE, as Kafka sends it).
    pub mechanisms: Vec<String>,
    /// Close the connection once this answer is sent.
    pub close: bool,
}

impl HandshakeAnswer {
    fn illegal_state(close: bool) -> HandshakeAnswer {
        HandshakeAnswer {
            error: ErrorCode::IllegalSaslState,
            mechanisms: Vec::new(),
            close,
        }
    }
}

/// The answer to a SaslAuthenticate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthenticateAnswer {
    /// Send these bytes with error 0 and `session_lifetime_ms` 0, and wait for the next
    /// SaslAuthenticate (SCRAM's server-first).
    Continue { auth_bytes: Vec<u8> },
    /// Authenticated, or re-authenticated: send these bytes with error 0 and this
    /// `session_lifetime_ms` (0: the session does not expire).
    Done {
        auth_bytes: Vec<u8>,
        /// `User:<name>`.
        principal: String,
        session_lifetime_ms: i64,
        mechanism: &'static str,
        reauthentication: bool,
    },
    /// SASL_AUTHENTICATION_FAILED (58) with this message, then close the connection.
    Failed {
        message: String,
        mechanism: &'static str,
    },
    /// ILLEGAL_SASL_STATE (34) with this message: a SaslAuthenticate out of turn. Then close
    /// when `close` (before a handshake, after a failure); after authentication Kafka answers
    /// it and keeps the connection.
    IllegalState { message: String, close: bool },
}

impl AuthenticateAnswer {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            AuthenticateAnswer::Continue { .. } | AuthenticateAnswer::Done { .. } => {
                ErrorCode::None
            }
            AuthenticateAnswer::Failed { .. } => ErrorCode::SaslAuthenticationFailed,
            AuthenticateAnswer::IllegalState { .. } => ErrorCode::IllegalSaslState,
        }
    }

    /// Whether the connection must close once the answer is sent.
    pub fn closes_connection(&self) -> bool {
        match self {
            AuthenticateAnswer::Continue { .. } | AuthenticateAnswer::Done { .. } => false,
            AuthenticateAnswer::Failed { .. } => true,
            AuthenticateAnswer::IllegalState { close, .. } => *close,
        }
    }
}

/// The SASL state of one connection on a SASL listener.
#[derive(Debug)]
pub struct Session {
    stage: Stage,
}

#[derive(Debug)]
enum Stage {
    /// Kafka's INITIAL_REQUEST / HANDSHAKE_OR_VERSIONS_REQUEST: ApiVersions (once) or
    /// SaslHandshake.
    Start,
    /// Kafka's HANDSHAKE_REQUEST: ApiVersions was answered; SaslHandshake must come next.
    VersionsAnswered,
    /// Kafka's AUTHENTICATE: a handshake chose the mechanism; SaslAuthenticate carries tokens.
    Exchange(Exchange),
    /// Kafka's REAUTH_BAD_MECHANISM: a re-authentication asked for another mechanism.
    BadReauthMechanism {
        requested: Mechanism,
        previous: Established,
    },
    /// Kafka's COMPLETE: requests go to the handlers.
    Complete(Established),
    /// The connection is closing; nothing more is served.
    Failed,
}

#[derive(Debug)]
struct Exchange {
    mechanism: Mechanism,
    step: Step,
    /// SaslHandshake v1 or later: a request other than SaslAuthenticate is answered 34 before
    /// the close. After v0 the client expects raw tokens, so a Kafka answer means nothing to it.
    framed: bool,
    /// The session being re-authenticated; `None` for the first authentication.
    previous: Option<Established>,
}

#[derive(Debug)]
enum Step {
    Plain,
    ScramFirst(ScramServer),
    ScramFinal(ScramMechanism, Box<AwaitingFinal>),
    OAuthBearer,
}

impl Step {
    fn first(mechanism: Mechanism) -> Step {
        match mechanism {
            Mechanism::Plain => Step::Plain,
            Mechanism::Scram(scram) => Step::ScramFirst(ScramServer::new(scram)),
            Mechanism::OAuthBearer => Step::OAuthBearer,
        }
    }
}

/// An authenticated session.
#[derive(Debug)]
struct Established {
    user: String,
    /// `User:<user>`, kept whole so that [`Session::principal`] can lend it.
    principal: String,
    mechanism: Mechanism,
    /// From this instant on the session is expired; `None`: never.
    expires_at_ms: Option<i64>,
    last_reauthentication_start_ms: Option<i64>,
}

impl Established {
    fn expired(&self, now_ms: i64) -> bool {
        self.expires_at_ms.is_some_and(|at| now_ms >= at)
    }

    /// Kafka's `KafkaChannel.maybeBeginServerReauthentication`: only a session with an expiry
    /// re-authenticates, and not twice within a second.
    fn may_begin_reauthentication(&self, now_ms: i64) -> bool {
        self.expires_at_ms.is_some()
            && self.last_reauthentication_start_ms.is_none_or(|start| {
                now_ms.saturating_sub(start) >= REAUTHENTICATION_INTERVAL_MIN_MS
            })
    }
}

/// A mechanism's verdict: who the client proved to be.
struct Proven {
    user: String,
    /// When the credential stops being valid (an OAUTHBEARER token's `exp`), in ms.
    credential_expires_at_ms: Option<i64>,
    auth_bytes: Vec<u8>,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    pub fn new() -> Session {
        Session {
            stage: Stage::Start,
        }
    }

    /// `User:<name>` once authenticated; while re-authenticating, still the established one.
    pub fn principal(&self) -> Option<&str> {
        self.established().map(|session| session.principal.as_str())
    }

    /// The mechanism the session authenticated with.
    pub fn mechanism(&self) -> Option<Mechanism> {
        self.established().map(|session| session.mechanism)
    }

    /// When the session expires (ms, the clock of `now_ms`); `None` when it never does.
    pub fn expires_at_ms(&self) -> Option<i64> {
        self.established().and_then(|session| session.expires_at_ms)
    }

    fn established(&self) -> Option<&Established> {
        match &self.stage {
            Stage::Complete(session)
            | Stage::BadReauthMechanism {
                previous: session, ..
            } => Some(session),
            Stage::Exchange(exchange) => exchange.previous.as_ref(),
            Stage::Start | Stage::VersionsAnswered | Stage::Failed => None,
        }
    }

    /// Whether a request with `api_key` may be served now (see the table in the module doc).
    pub fn admit(&self, api_key: i16, now_ms: i64) -> Admission {
        let is = |key: ApiKey| api_key == key as i16;
        let versions = is(ApiKey::ApiVersions);
        let handshake = is(ApiKey::SaslHandshake);
        let authenticate = is(ApiKey::SaslAuthenticate);
        match &self.stage {
            Stage::Start if versions || handshake => Admission::Serve,
            Stage::VersionsAnswered if handshake => Admission::Serve,
            Stage::Exchange(_) | Stage::BadReauthMechanism { .. } if authenticate => {
                Admission::Serve
            }
            Stage::Exchange(exchange) if exchange.framed => Admission::Refuse,
            // Kafka checks for a re-authentication before the expiry, so a client may renew
            // a session that has just expired.
            Stage::Complete(session) if handshake && session.may_begin_reauthentication(now_ms) => {
                Admission::Serve
            }
            Stage::Complete(session) if session.expired(now_ms) => Admission::Close,
            Stage::Complete(_) => Admission::Serve,
            Stage::Start
            | Stage::VersionsAnswered
            | Stage::Exchange(_)
            | Stage::BadReauthMechanism { .. }
            | Stage::Failed => Admission::Close,
        }
    }

    /// Records the answer to an ApiVersions request served before the handshake. `accepted`
    /// is false when it was answered UNSUPPORTED_VERSION or INVALID_REQUEST: Kafka then lets
    /// the client try again (the version downgrade every client does), and only an accepted
    /// one moves on to "SaslHandshake next". Elsewhere this changes nothing.
    pub fn api_versions_answered(&mut self, accepted: bool) {
        if accepted && matches!(self.stage, Stage::Start) {
            self.stage = Stage::VersionsAnswered;
        }
    }

    /// Answers a SaslHandshake of `version` asking for `mechanism`. Before authentication it
    /// starts the exchange; on an authenticated connection it starts a re-authentication when
    /// one may begin (and records `now_ms` as its start), else answers 34 and keeps the
    /// connection, as KafkaApis does.
    pub fn handshake(
        &mut self,
        mechanism: &str,
        version: i16,
        now_ms: i64,
        settings: &SaslSettings,
    ) -> HandshakeAnswer {
        // Whatever is not put back below leaves the session failed.
        match std::mem::replace(&mut self.stage, Stage::Failed) {
            Stage::Start | Stage::VersionsAnswered => {
                self.begin(mechanism, version, None, settings)
            }
            Stage::Complete(session) if session.may_begin_reauthentication(now_ms) => {
                let session = Established {
                    last_reauthentication_start_ms: Some(now_ms),
                    ..session
                };
                self.begin(mechanism, version, Some(session), settings)
            }
            Stage::Complete(session) if !session.expired(now_ms) => {
                self.stage = Stage::Complete(session);
                HandshakeAnswer::illegal_state(false)
            }
            // `admit` closes all of these; answering 34 is for a caller that did not ask it.
            Stage::Complete(_)
            | Stage::Exchange(_)
            | Stage::BadReauthMechanism { .. }
            | Stage::Failed => HandshakeAnswer::illegal_state(true),
        }
    }

    fn begin(
        &mut self,
        requested: &str,
        version: i16,
        previous: Option<Established>,
        settings: &SaslSettings,
    ) -> HandshakeAnswer {
        let usable = settings.usable_mechanisms();
        let mechanisms: Vec<String> = usable.iter().map(|m| m.name().to_owned()).collect();
        let Some(mechanism) = usable.into_iter().find(|m| m.name() == requested) else {
            // Kafka answers with the list, then fails the connection.
            return HandshakeAnswer {
                error: ErrorCode::UnsupportedSaslMechanism,
                mechanisms,
                close: true,
            };
        };
        self.stage = match previous {
            // Kafka accepts the handshake and fails the exchange that follows.
            Some(previous) if previous.mechanism != mechanism => Stage::BadReauthMechanism {
                requested: mechanism,
                previous,
            },
            previous => Stage::Exchange(Exchange {
                mechanism,
                step: Step::first(mechanism),
                framed: version >= 1,
                previous,
            }),
        };
        HandshakeAnswer {
            error: ErrorCode::None,
            mechanisms,
            close: false,
        }
    }

    /// Answers a SaslAuthenticate carrying `auth_bytes`. `nonce` is the server's part of a
    /// SCRAM nonce (unpredictable, printable ASCII without ','; used at client-first only);
    /// `credentials` are the replicated SCRAM credentials.
    pub fn authenticate(
        &mut self,
        auth_bytes: &[u8],
        now_ms: i64,
        nonce: &str,
        settings: &SaslSettings,
        credentials: &dyn Credentials,
    ) -> AuthenticateAnswer {
        match std::mem::replace(&mut self.stage, Stage::Failed) {
            Stage::Exchange(exchange) => {
                self.step(exchange, auth_bytes, now_ms, nonce, settings, credentials)
            }
            Stage::BadReauthMechanism {
                requested,
                previous,
            } => AuthenticateAnswer::Failed {
                message: format!(
                    "SASL mechanism '{}' requested by client is not supported for \
                     re-authentication of mechanism '{}'",
                    requested.name(),
                    previous.mechanism.name()
                ),
                mechanism: requested.name(),
            },
            Stage::Complete(session) => {
                self.stage = Stage::Complete(session);
                AuthenticateAnswer::IllegalState {
                    message: "SaslAuthenticate request received after successful authentication"
                        .to_owned(),
                    close: false,
                }
            }
            Stage::Start | Stage::VersionsAnswered => AuthenticateAnswer::IllegalState {
                message:
                    "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake."
                        .to_owned(),
                close: true,
            },
            Stage::Failed => AuthenticateAnswer::IllegalState {
                message: "SaslAuthenticate request received after authentication failed".to_owned(),
                close: true,
            },
        }
    }

    fn step(
        &mut self,
        exchange: Exchange,
        auth_bytes: &[u8],
        now_ms: i64,
        nonce: &str,
        settings: &SaslSettings,
        credentials: &dyn Credentials,
    ) -> AuthenticateAnswer {
        let Exchange {
            mechanism,
            step,
            framed,
            previous,
        } = exchange;
        let reauthentication = previous.is_some();
        let proven = match step {
            Step::Plain => prove_plain(auth_bytes, reauthentication, settings, credentials),
            Step::ScramFirst(server) => {
                let scram = server.mechanism();
                match server.client_first(auth_bytes, nonce, |user| credentials.scram(user, scram))
                {
                    Ok((server_first, awaiting)) => {
                        self.stage = Stage::Exchange(Exchange {
                            mechanism,
                            step: Step::ScramFinal(scram, Box::new(awaiting)),
                            framed,
                            previous,
                        });
                        return AuthenticateAnswer::Continue {
                            auth_bytes: server_first,
                        };
                    }
                    Err(error) => Err(error.kafka_client_message(scram, reauthentication)),
                }
            }
            Step::ScramFinal(scram, awaiting) => match (*awaiting).client_final(auth_bytes) {
                Ok((server_final, authenticated)) => Ok(Proven {
                    user: authenticated.username,
                    credential_expires_at_ms: None,
                    auth_bytes: server_final,
                }),
                Err(error) => Err(error.kafka_client_message(scram, reauthentication)),
            },
            Step::OAuthBearer => prove_oauthbearer(auth_bytes, now_ms, reauthentication, settings),
        };
        match proven {
            Ok(proven) => self.establish(mechanism, proven, previous, now_ms, settings),
            Err(message) => AuthenticateAnswer::Failed {
                message,
                mechanism: mechanism.name(),
            },
        }
    }

    /// Completes an exchange: the session is (again) authenticated, with a new expiry.
    fn establish(
        &mut self,
        mechanism: Mechanism,
        proven: Proven,
        previous: Option<Established>,
        now_ms: i64,
        settings: &SaslSettings,
    ) -> AuthenticateAnswer {
        let reauthentication = previous.is_some();
        let last_reauthentication_start_ms = match previous {
            // Kafka's `ensurePrincipalUnchanged`, with its text.
            Some(previous) if previous.user != proven.user => {
                return AuthenticateAnswer::Failed {
                    message: format!(
                        "Cannot change principals during re-authentication from \
                         {PRINCIPAL_TYPE}.{}: {PRINCIPAL_TYPE}.{}",
                        previous.user, proven.user
                    ),
                    mechanism: mechanism.name(),
                };
            }
            Some(previous) => previous.last_reauthentication_start_ms,
            None => None,
        };
        let credential_remaining_ms = proven
            .credential_expires_at_ms
            .map(|at| at.saturating_sub(now_ms));
        let lifetime_ms = session_lifetime_ms(settings.reauth_max_ms, credential_remaining_ms);
        let principal = format!("{PRINCIPAL_TYPE}:{}", proven.user);
        self.stage = Stage::Complete(Established {
            user: proven.user,
            principal: principal.clone(),
            mechanism,
            expires_at_ms: lifetime_ms.map(|lifetime| now_ms.saturating_add(lifetime)),
            last_reauthentication_start_ms,
        });
        AuthenticateAnswer::Done {
            auth_bytes: proven.auth_bytes,
            principal,
            session_lifetime_ms: lifetime_ms.unwrap_or(0),
            mechanism: mechanism.name(),
            reauthentication,
        }
    }
}

/// Kafka's `calcCompletionTimesAndReturnSessionLifetimeMs`: the session's lifetime, `None`
/// when it never expires. A lifetime of 0 (a credential already past its end) still expires
/// the session at once, as in Kafka, though the client is told 0.
fn session_lifetime_ms(
    reauth_max_ms: Option<i64>,
    credential_remaining_ms: Option<i64>,
) -> Option<i64> {
    let reauth_max_ms = reauth_max_ms.filter(|&max| max > 0);
    let lifetime = match (credential_remaining_ms, reauth_max_ms) {
        (None, None) => return None,
        (None, Some(max)) => max,
        (Some(remaining), None) => remaining,
        (Some(remaining), Some(max)) => remaining.min(max),
    };
    Some(lifetime.max(0))
}

/// Kafka's answer to a failure whose cause must not reach the client (its `SaslException`
/// path in `SaslServerAuthenticator`).
fn generic_failure(mechanism: Mechanism, reauthentication: bool) -> String {
    let phase = if reauthentication {
        "re-authentication"
    } else {
        "authentication"
    };
    format!(
        "Authentication failed during {phase} due to invalid credentials with SASL mechanism {}",
        mechanism.name()
    )
}

/// RFC 4616's message: `[authzid] NUL authcid NUL passwd`.
struct PlainMessage<'a> {
    authzid: &'a str,
    authcid: &'a str,
    password: &'a [u8],
}

impl<'a> PlainMessage<'a> {
    fn parse(message: &'a [u8]) -> Option<PlainMessage<'a>> {
        if message.len() > PLAIN_MESSAGE_BYTES_MAX {
            return None;
        }
        let mut fields = message.splitn(3, |&b| b == 0);
        let (authzid, authcid, password) = (fields.next()?, fields.next()?, fields.next()?);
        // RFC 4616: every field is 1*SAFE, and SAFE excludes NUL.
        if authcid.is_empty() || password.is_empty() || password.contains(&0) {
            return None;
        }
        Some(PlainMessage {
            authzid: std::str::from_utf8(authzid).ok()?,
            authcid: std::str::from_utf8(authcid).ok()?,
            password,
        })
    }
}

fn prove_plain(
    message: &[u8],
    reauthentication: bool,
    settings: &SaslSettings,
    credentials: &dyn Credentials,
) -> Result<Proven, String> {
    let Some(message) = PlainMessage::parse(message) else {
        return Err(generic_failure(Mechanism::Plain, reauthentication));
    };
    if !message.authzid.is_empty() && message.authzid != message.authcid {
        return Err(PLAIN_AUTHORIZATION_ID_MISMATCH.to_owned());
    }
    if !plain_password_matches(message.authcid, message.password, settings, credentials) {
        return Err(PLAIN_INVALID_CREDENTIALS.to_owned());
    }
    Ok(Proven {
        user: message.authcid.to_owned(),
        credential_expires_at_ms: None,
        auth_bytes: Vec::new(),
    })
}

fn plain_password_matches(
    user: &str,
    password: &[u8],
    settings: &SaslSettings,
    credentials: &dyn Credentials,
) -> bool {
    // The file is authoritative for the users it names: a wrong file password is not tried
    // again against the SCRAM credentials.
    if let Some(verdict) = settings
        .plain_users
        .as_deref()
        .and_then(|users| users.check(user, password))
    {
        return verdict;
    }
    [ScramMechanism::Sha512, ScramMechanism::Sha256]
        .into_iter()
        .any(|mechanism| {
            credentials
                .scram(user, mechanism)
                .is_some_and(|stored| scram_password_matches(mechanism, password, &stored))
        })
}

/// Whether `password` is the one `stored` was made from: StoredKey derived again and compared
/// in constant time.
fn scram_password_matches(
    mechanism: ScramMechanism,
    password: &[u8],
    stored: &ScramCredential,
) -> bool {
    // The range AlterUserScramCredentials accepts: SCRAM refuses a credential below it, and
    // the bound above caps the PBKDF2 work a PLAIN login costs the broker.
    if !mechanism.accepts_iterations(stored.iterations) {
        return false;
    }
    let derived =
        ScramCredential::from_password(mechanism, password, &stored.salt, stored.iterations);
    constant_time::verify_slices_are_equal(&derived.stored_key, &stored.stored_key).is_ok()
}

fn prove_oauthbearer(
    message: &[u8],
    now_ms: i64,
    reauthentication: bool,
    settings: &SaslSettings,
) -> Result<Proven, String> {
    let Some(validator) = settings.oauth.as_deref() else {
        // The settings lost their validator since the handshake: nothing can check the token.
        return Err(generic_failure(Mechanism::OAuthBearer, reauthentication));
    };
    let now_unix_seconds = u64::try_from(now_ms.div_euclid(1000)).unwrap_or(0);
    let token = oauthbearer::authenticate(validator, message, now_unix_seconds)
        .map_err(|error| error.to_string())?;
    // Kafka's `OAuthBearerToken.lifetimeMs`: `exp` in ms.
    let expires_at_ms = i64::try_from(token.expires_at_unix_seconds)
        .ok()
        .and_then(|seconds| seconds.checked_mul(1000))
        .unwrap_or(i64::MAX);
    Ok(Proven {
        user: token.principal_name,
        credential_expires_at_ms: Some(expires_at_ms),
        auth_bytes: Vec::new(),
    })
}

#[cfg(test)]
#[path = "sasl_tests.rs"]
mod tests;
