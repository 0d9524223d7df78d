//! Tests of `security::sasl`.

use super::*;
use crate::security::oauthbearer::{JwtValidatorSettings, OAuthError};
use crate::security::scram::{ScramClient, ScramError};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use proptest::prelude::*;
use serde_json::json;
use std::sync::LazyLock;

const NOW_S: u64 = 1_700_000_000;
const NOW: i64 = 1_700_000_000_000;
const SALT: &[u8] = b"0123456789abcdef";
const PRODUCE: i16 = ApiKey::Produce as i16;
const VERSIONS: i16 = ApiKey::ApiVersions as i16;
const HANDSHAKE: i16 = ApiKey::SaslHandshake as i16;
const AUTHENTICATE: i16 = ApiKey::SaslAuthenticate as i16;

/// The replicated SCRAM credentials, as a map.
#[derive(Default)]
struct Store(BTreeMap<(String, ScramMechanism), ScramCredential>);

impl Store {
    fn with(mut self, user: &str, mechanism: ScramMechanism, password: &[u8]) -> Store {
        let credential = ScramCredential::from_password(mechanism, password, SALT, 4096);
        self.0.insert((user.to_owned(), mechanism), credential);
        self
    }
}

impl Credentials for Store {
    fn scram(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential> {
        self.0.get(&(user.to_owned(), mechanism)).cloned()
    }
}

/// A credential for every name (made without PBKDF2), so that SCRAM gets past client-first.
struct AnyUser;

impl Credentials for AnyUser {
    fn scram(&self, _user: &str, mechanism: ScramMechanism) -> Option<ScramCredential> {
        Some(ScramCredential::from_salted_password(
            mechanism, &[7; 64], SALT, 4096,
        ))
    }
}

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// An identity provider with one ES256 key.
struct Issuer {
    pair: EcdsaKeyPair,
}

impl Issuer {
    fn new() -> Issuer {
        Issuer {
            pair: EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap(),
        }
    }

    fn validator(&self) -> JwtValidator {
        // An uncompressed P-256 point: 0x04, then x and y of 32 bytes each.
        let point: &[u8] = self.pair.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        let jwks = json!({"keys": [{
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": "k1",
            "x": b64(x), "y": b64(y),
        }]});
        JwtValidator::from_jwks_json(&jwks.to_string(), JwtValidatorSettings::default()).unwrap()
    }

    fn token(&self, subject: &str, expires_at_unix_seconds: u64) -> String {
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": "k1"});
        let claims = json!({"sub": subject, "iat": NOW_S - 10, "exp": expires_at_unix_seconds});
        let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .unwrap();
        format!("{input}.{}", b64(signature))
    }
}

fn bearer(token: &str) -> Vec<u8> {
    format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| (*name).to_owned()).collect()
}

/// PLAIN and both SCRAMs; alice in the PLAIN users file.
fn base_settings(reauth_max_ms: Option<i64>) -> SaslSettings {
    SaslSettings {
        enabled: names(&["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]),
        plain_users: Some(Arc::new(PlainUsers::parse("alice:alice-secret\n").unwrap())),
        oauth: None,
        reauth_max_ms,
    }
}

fn oauth_settings(issuer: &Issuer, reauth_max_ms: Option<i64>) -> SaslSettings {
    SaslSettings {
        enabled: names(&["OAUTHBEARER", "PLAIN"]),
        plain_users: None,
        oauth: Some(Arc::new(issuer.validator())),
        reauth_max_ms,
    }
}

fn plain(authzid: &str, user: &str, password: &str) -> Vec<u8> {
    format!("{authzid}\0{user}\0{password}").into_bytes()
}

fn plain_login(
    session: &mut Session,
    settings: &SaslSettings,
    credentials: &dyn Credentials,
    message: &[u8],
    now: i64,
) -> AuthenticateAnswer {
    let handshake = session.handshake("PLAIN", 1, now, settings);
    assert_eq!(handshake.error, ErrorCode::None);
    session.authenticate(message, now, "srv", settings, credentials)
}

/// Both SaslAuthenticate rounds of a SCRAM exchange, the client side played by
/// `ScramClient`; checks the server-final message as a client does.
fn scram_exchange(
    session: &mut Session,
    settings: &SaslSettings,
    store: &Store,
    mechanism: ScramMechanism,
    user: &str,
    password: &[u8],
    now: i64,
) -> AuthenticateAnswer {
    let client = ScramClient::new(mechanism, user, password, "clientnonce");
    let first = session.authenticate(&client.client_first(), now, "servernonce", settings, store);
    let server_first = match first {
        AuthenticateAnswer::Continue { auth_bytes } => auth_bytes,
        other => return other,
    };
    assert_eq!(session.admit(AUTHENTICATE, now), Admission::Serve);
    let (client_final, expected_server_final) = client.client_final(&server_first);
    let answer = session.authenticate(&client_final, now, "servernonce", settings, store);
    if let AuthenticateAnswer::Done { auth_bytes, .. } = &answer {
        assert_eq!(
            auth_bytes, &expected_server_final,
            "the broker proves it holds the key"
        );
    }
    answer
}

fn scram_login(
    session: &mut Session,
    settings: &SaslSettings,
    store: &Store,
    mechanism: ScramMechanism,
    user: &str,
    password: &[u8],
    now: i64,
) -> AuthenticateAnswer {
    let handshake = session.handshake(mechanism.name(), 1, now, settings);
    assert_eq!(handshake.error, ErrorCode::None);
    scram_exchange(session, settings, store, mechanism, user, password, now)
}

fn done(
    principal: &str,
    lifetime: i64,
    mechanism: &'static str,
    reauth: bool,
) -> AuthenticateAnswer {
    AuthenticateAnswer::Done {
        auth_bytes: Vec::new(),
        principal: principal.to_owned(),
        session_lifetime_ms: lifetime,
        mechanism,
        reauthentication: reauth,
    }
}

fn failed(message: &str, mechanism: &'static str) -> AuthenticateAnswer {
    AuthenticateAnswer::Failed {
        message: message.to_owned(),
        mechanism,
    }
}

fn assert_closed(session: &Session, now: i64) {
    for key in [VERSIONS, HANDSHAKE, AUTHENTICATE, PRODUCE] {
        assert_eq!(session.admit(key, now), Admission::Close, "api key {key}");
    }
}

#[test]
fn plain_logs_in_a_file_user_and_a_scram_user() {
    let settings = base_settings(None);
    let store = Store::default()
        .with("bob", ScramMechanism::Sha256, b"bob-secret")
        .with("carol", ScramMechanism::Sha512, b"carol-secret");

    let mut session = Session::new();
    assert_eq!(session.admit(VERSIONS, NOW), Admission::Serve);
    session.api_versions_answered(true);
    let message = plain("", "alice", "alice-secret");
    let answer = plain_login(&mut session, &settings, &store, &message, NOW);
    assert_eq!(answer, done("User:alice", 0, "PLAIN", false));
    assert_eq!(answer.error_code(), ErrorCode::None);
    assert!(!answer.closes_connection());
    assert_eq!(session.principal(), Some("User:alice"));
    assert_eq!(session.mechanism(), Some(Mechanism::Plain));
    // No reauth_max_ms and no credential expiry: the session never expires.
    assert_eq!(session.expires_at_ms(), None);
    assert_eq!(session.admit(PRODUCE, i64::MAX), Admission::Serve);
    assert_eq!(session.admit(VERSIONS, NOW), Admission::Serve);

    for (user, password) in [("bob", "bob-secret"), ("carol", "carol-secret")] {
        let mut session = Session::new();
        let answer = plain_login(
            &mut session,
            &settings,
            &store,
            &plain("", user, password),
            NOW,
        );
        assert_eq!(answer, done(&format!("User:{user}"), 0, "PLAIN", false));
    }

    // An authzid equal to the user is accepted.
    let mut session = Session::new();
    let message = plain("alice", "alice", "alice-secret");
    let answer = plain_login(&mut session, &settings, &store, &message, NOW);
    assert_eq!(answer, done("User:alice", 0, "PLAIN", false));
}

#[test]
fn plain_refuses_wrong_passwords_and_unknown_users_alike() {
    let settings = base_settings(None);
    // alice also has a SCRAM credential; the file decides for her all the same.
    let store = Store::default()
        .with("bob", ScramMechanism::Sha256, b"bob-secret")
        .with("alice", ScramMechanism::Sha256, b"scram-password");
    let refused = [
        plain("", "alice", "wrong"),
        plain("", "alice", "scram-password"),
        plain("", "bob", "wrong"),
        plain("", "nobody", "anything"),
    ];
    for message in refused {
        let mut session = Session::new();
        let answer = plain_login(&mut session, &settings, &store, &message, NOW);
        assert_eq!(
            answer,
            failed(
                "Authentication failed: Invalid username or password",
                "PLAIN"
            )
        );
        assert_eq!(answer.error_code(), ErrorCode::SaslAuthenticationFailed);
        assert!(answer.closes_connection());
        assert_eq!(session.principal(), None);
        assert_closed(&session, NOW);
    }

    let mut session = Session::new();
    let message = plain("admin", "alice", "alice-secret");
    let answer = plain_login(&mut session, &settings, &store, &message, NOW);
    assert_eq!(
        answer,
        failed(
            "Authentication failed: Client requested an authorization id that is different \
             from username",
            "PLAIN"
        )
    );
}

#[test]
fn malformed_plain_messages_get_kafkas_generic_answer() {
    let settings = base_settings(None);
    let long = plain("", "alice", &"p".repeat(PLAIN_MESSAGE_BYTES_MAX));
    let cases: [&[u8]; 9] = [
        b"",
        b"alice",
        b"\0alice",
        b"alice\0alice-secret",
        b"\0\0alice-secret",
        b"\0alice\0",
        b"\0alice\0alice-secret\0",
        b"\0al\xffice\0alice-secret",
        &long,
    ];
    for message in cases {
        let mut session = Session::new();
        let answer = plain_login(&mut session, &settings, &Store::default(), message, NOW);
        assert_eq!(
            answer,
            failed(
                "Authentication failed during authentication due to invalid credentials \
                 with SASL mechanism PLAIN",
                "PLAIN"
            ),
            "{:?}",
            String::from_utf8_lossy(message)
        );
    }
}

#[test]
fn scram_sha_256_and_512_log_in() {
    let settings = base_settings(None);
    for mechanism in ScramMechanism::ALL {
        let store = Store::default().with("dave", mechanism, b"dave-pw");
        let mut session = Session::new();
        let answer = scram_login(
            &mut session,
            &settings,
            &store,
            mechanism,
            "dave",
            b"dave-pw",
            NOW,
        );
        let (principal, session_lifetime_ms, name, reauthentication) = match answer {
            AuthenticateAnswer::Done {
                principal,
                session_lifetime_ms,
                mechanism,
                reauthentication,
                ..
            } => (principal, session_lifetime_ms, mechanism, reauthentication),
            other => panic!("{mechanism:?} did not log in: {other:?}"),
        };
        assert_eq!(principal, "User:dave");
        assert_eq!(session_lifetime_ms, 0);
        assert_eq!(name, mechanism.name());
        assert!(!reauthentication);
        assert_eq!(session.principal(), Some("User:dave"));
        assert_eq!(session.mechanism(), Some(Mechanism::Scram(mechanism)));

        let mut session = Session::new();
        let answer = scram_login(
            &mut session,
            &settings,
            &store,
            mechanism,
            "dave",
            b"wrong",
            NOW,
        );
        let expected = ScramError::WrongPassword.kafka_client_message(mechanism, false);
        assert_eq!(answer, failed(&expected, mechanism.name()));
        assert_closed(&session, NOW);

        // A user without a credential for this mechanism fails at client-first, alike.
        let mut session = Session::new();
        let answer = scram_login(
            &mut session,
            &settings,
            &store,
            mechanism,
            "erin",
            b"pw",
            NOW,
        );
        assert_eq!(answer, failed(&expected, mechanism.name()));
    }
}

#[test]
fn oauthbearer_sessions_last_no_longer_than_the_token() {
    let issuer = Issuer::new();
    let token = issuer.token("erin", NOW_S + 300);
    // Kafka: the token bounds the session even when connections.max.reauth.ms is unset.
    for (reauth_max_ms, lifetime) in [
        (None, 300_000),
        (Some(0), 300_000),
        (Some(60_000), 60_000),
        (Some(600_000), 300_000),
    ] {
        let settings = oauth_settings(&issuer, reauth_max_ms);
        let mut session = Session::new();
        let handshake = session.handshake("OAUTHBEARER", 1, NOW, &settings);
        assert_eq!(handshake.mechanisms, names(&["OAUTHBEARER", "PLAIN"]));
        let answer =
            session.authenticate(&bearer(&token), NOW, "srv", &settings, &Store::default());
        assert_eq!(answer, done("User:erin", lifetime, "OAUTHBEARER", false));
        assert_eq!(session.expires_at_ms(), Some(NOW + lifetime));
        assert_eq!(session.admit(PRODUCE, NOW + lifetime - 1), Admission::Serve);
        assert_eq!(session.admit(PRODUCE, NOW + lifetime), Admission::Close);
        assert_eq!(session.admit(HANDSHAKE, NOW + lifetime), Admission::Serve);
    }

    let settings = oauth_settings(&issuer, None);
    let expired = issuer.token("erin", NOW_S - 60);
    let mut session = Session::new();
    session.handshake("OAUTHBEARER", 1, NOW, &settings);
    let answer = session.authenticate(&bearer(&expired), NOW, "srv", &settings, &Store::default());
    assert_eq!(
        answer,
        failed(&OAuthError::Expired.to_string(), "OAUTHBEARER")
    );
    let AuthenticateAnswer::Failed { message, .. } = answer else {
        unreachable!()
    };
    for section in expired.split('.') {
        assert!(!message.contains(section), "{message}");
    }
    assert_closed(&session, NOW);
}

#[test]
fn oauthbearer_reauthentication_keeps_the_principal() {
    let issuer = Issuer::new();
    let settings = oauth_settings(&issuer, None);
    let store = Store::default();
    let mut session = Session::new();
    session.handshake("OAUTHBEARER", 1, NOW, &settings);
    let first = session.authenticate(
        &bearer(&issuer.token("erin", NOW_S + 60)),
        NOW,
        "srv",
        &settings,
        &store,
    );
    assert_eq!(first, done("User:erin", 60_000, "OAUTHBEARER", false));

    // At 90 % of the lifetime the client comes back with a fresh token.
    let t1 = NOW + 54_000;
    assert_eq!(session.admit(HANDSHAKE, t1), Admission::Serve);
    let handshake = session.handshake("OAUTHBEARER", 1, t1, &settings);
    assert_eq!(handshake.error, ErrorCode::None);
    assert!(!handshake.close);
    // While it runs, only SaslAuthenticate is served, as in Kafka.
    assert_eq!(session.admit(PRODUCE, t1), Admission::Refuse);
    assert_eq!(session.principal(), Some("User:erin"));
    let renewed = session.authenticate(
        &bearer(&issuer.token("erin", NOW_S + 120)),
        t1,
        "srv",
        &settings,
        &store,
    );
    assert_eq!(renewed, done("User:erin", 66_000, "OAUTHBEARER", true));
    assert_eq!(session.expires_at_ms(), Some(NOW + 120_000));
    assert_eq!(session.admit(PRODUCE, NOW + 100_000), Admission::Serve);

    let t2 = t1 + 1_000;
    session.handshake("OAUTHBEARER", 1, t2, &settings);
    let other = session.authenticate(
        &bearer(&issuer.token("mallory", NOW_S + 120)),
        t2,
        "srv",
        &settings,
        &store,
    );
    assert_eq!(
        other,
        failed(
            "Cannot change principals during re-authentication from User.erin: User.mallory",
            "OAUTHBEARER"
        )
    );
    assert_eq!(session.principal(), None);
    assert_closed(&session, t2);
}

#[test]
fn scram_reauthentication_keeps_the_principal() {
    let settings = base_settings(Some(10_000));
    let store = Store::default()
        .with("frank", ScramMechanism::Sha256, b"frank-pw")
        .with("grace", ScramMechanism::Sha256, b"grace-pw");
    let mut session = Session::new();
    let first = scram_login(
        &mut session,
        &settings,
        &store,
        ScramMechanism::Sha256,
        "frank",
        b"frank-pw",
        NOW,
    );
    assert!(matches!(
        first,
        AuthenticateAnswer::Done {
            session_lifetime_ms: 10_000,
            reauthentication: false,
            ..
        }
    ));
    assert_eq!(session.expires_at_ms(), Some(NOW + 10_000));

    // The first re-authentication may come at any time.
    let t1 = NOW + 8_000;
    let second = scram_login(
        &mut session,
        &settings,
        &store,
        ScramMechanism::Sha256,
        "frank",
        b"frank-pw",
        t1,
    );
    let (principal, session_lifetime_ms, reauthentication) = match second {
        AuthenticateAnswer::Done {
            principal,
            session_lifetime_ms,
            reauthentication,
            ..
        } => (principal, session_lifetime_ms, reauthentication),
        other => panic!("re-authentication failed: {other:?}"),
    };
    assert_eq!(
        (principal.as_str(), session_lifetime_ms, reauthentication),
        ("User:frank", 10_000, true)
    );
    assert_eq!(session.expires_at_ms(), Some(t1 + 10_000));

    // Within a second of its start, another is answered 34 and the connection stays.
    let t2 = t1 + 999;
    assert_eq!(session.admit(HANDSHAKE, t2), Admission::Serve);
    assert_eq!(
        session.handshake("SCRAM-SHA-256", 1, t2, &settings),
        HandshakeAnswer {
            error: ErrorCode::IllegalSaslState,
            mechanisms: Vec::new(),
            close: false
        }
    );
    assert_eq!(session.principal(), Some("User:frank"));
    assert_eq!(session.admit(PRODUCE, t2), Admission::Serve);

    // A wrong password says "re-authentication".
    let t3 = t1 + 1_000;
    let mut copy = Session::new();
    scram_login(
        &mut copy,
        &settings,
        &store,
        ScramMechanism::Sha256,
        "frank",
        b"frank-pw",
        NOW,
    );
    let wrong = scram_login(
        &mut copy,
        &settings,
        &store,
        ScramMechanism::Sha256,
        "frank",
        b"nope",
        t3,
    );
    let expected = ScramError::WrongPassword.kafka_client_message(ScramMechanism::Sha256, true);
    assert_eq!(wrong, failed(&expected, "SCRAM-SHA-256"));
    assert!(expected.contains("re-authentication"));

    // Another user's valid credentials do not change the principal.
    let third = scram_login(
        &mut session,
        &settings,
        &store,
        ScramMechanism::Sha256,
        "grace",
        b"grace-pw",
        t3,
    );
    assert_eq!(
        third,
        failed(
            "Cannot change principals during re-authentication from User.frank: User.grace",
            "SCRAM-SHA-256"
        )
    );
    assert_closed(&session, t3);
}

#[test]
fn reauthentication_cannot_change_the_mechanism() {
    let settings = base_settings(Some(10_000));
    let store = Store::default();
    let mut session = Session::new();
    let message = plain("", "alice", "alice-secret");
    plain_login(&mut session, &settings, &store, &message, NOW);

    // As in Kafka the handshake succeeds and the exchange that follows fails.
    let handshake = session.handshake("SCRAM-SHA-256", 1, NOW + 1, &settings);
    assert_eq!(handshake.error, ErrorCode::None);
    assert_eq!(session.admit(PRODUCE, NOW + 1), Admission::Close);
    assert_eq!(session.admit(AUTHENTICATE, NOW + 1), Admission::Serve);
    let answer = session.authenticate(b"n,,n=alice,r=abc", NOW + 1, "srv", &settings, &store);
    assert_eq!(
        answer,
        failed(
            "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for \
             re-authentication of mechanism 'PLAIN'",
            "SCRAM-SHA-256"
        )
    );
    assert_closed(&session, NOW + 1);

    // A mechanism not offered at all is UNSUPPORTED_SASL_MECHANISM, as at first.
    let mut session = Session::new();
    plain_login(&mut session, &settings, &store, &message, NOW);
    let handshake = session.handshake("GSSAPI", 1, NOW + 1, &settings);
    assert_eq!(handshake.error, ErrorCode::UnsupportedSaslMechanism);
    assert!(handshake.close);
    assert_closed(&session, NOW + 1);
}

#[test]
fn plain_reauthentication_refuses_other_requests_while_it_runs() {
    let settings = base_settings(Some(10_000));
    let store = Store::default();
    let mut session = Session::new();
    let message = plain("", "alice", "alice-secret");
    plain_login(&mut session, &settings, &store, &message, NOW);
    let t1 = NOW + 9_000;
    assert_eq!(
        session.handshake("PLAIN", 1, t1, &settings).error,
        ErrorCode::None
    );
    for key in [PRODUCE, VERSIONS, HANDSHAKE] {
        assert_eq!(session.admit(key, t1), Admission::Refuse);
    }
    assert_eq!(session.admit(AUTHENTICATE, t1), Admission::Serve);
    let answer = session.authenticate(&message, t1, "srv", &settings, &store);
    assert_eq!(answer, done("User:alice", 10_000, "PLAIN", true));
    assert_eq!(session.admit(PRODUCE, t1), Admission::Serve);
}

#[test]
fn an_expired_session_is_closed_unless_it_reauthenticates() {
    let settings = base_settings(Some(1_000));
    let store = Store::default();
    let message = plain("", "alice", "alice-secret");
    let mut session = Session::new();
    let answer = plain_login(&mut session, &settings, &store, &message, NOW);
    assert_eq!(answer, done("User:alice", 1_000, "PLAIN", false));
    assert_eq!(session.admit(PRODUCE, NOW + 999), Admission::Serve);
    for key in [PRODUCE, VERSIONS, AUTHENTICATE] {
        assert_eq!(session.admit(key, NOW + 1_000), Admission::Close);
    }
    // A re-authentication begun after expiry is still accepted, as in Kafka.
    assert_eq!(session.admit(HANDSHAKE, NOW + 5_000), Admission::Serve);
    let answer = plain_login(&mut session, &settings, &store, &message, NOW + 5_000);
    assert_eq!(answer, done("User:alice", 1_000, "PLAIN", true));
    assert_eq!(session.admit(PRODUCE, NOW + 5_500), Admission::Serve);
    assert_eq!(session.admit(PRODUCE, NOW + 6_000), Admission::Close);

    // A session shorter than the re-authentication interval cannot be renewed more often:
    // expired, and within a second of the last start, it is closed.
    let settings = base_settings(Some(500));
    let mut session = Session::new();
    plain_login(&mut session, &settings, &store, &message, NOW);
    let renewed = plain_login(&mut session, &settings, &store, &message, NOW + 500);
    assert_eq!(renewed, done("User:alice", 500, "PLAIN", true));
    assert_eq!(session.admit(HANDSHAKE, NOW + 1_000), Admission::Close);
    assert_eq!(
        session.handshake("PLAIN", 1, NOW + 1_000, &settings),
        HandshakeAnswer {
            error: ErrorCode::IllegalSaslState,
            mechanisms: Vec::new(),
            close: true
        }
    );
}

#[test]
fn before_authentication_only_the_sasl_requests_are_served() {
    let settings = base_settings(None);
    let mut session = Session::new();
    assert_eq!(session.admit(VERSIONS, NOW), Admission::Serve);
    assert_eq!(session.admit(HANDSHAKE, NOW), Admission::Serve);
    for key in [AUTHENTICATE, PRODUCE, -1, i16::MAX] {
        assert_eq!(session.admit(key, NOW), Admission::Close, "api key {key}");
    }
    // An ApiVersions answered UNSUPPORTED_VERSION lets the client try another version.
    session.api_versions_answered(false);
    assert_eq!(session.admit(VERSIONS, NOW), Admission::Serve);
    session.api_versions_answered(true);
    assert_eq!(session.admit(VERSIONS, NOW), Admission::Close);
    assert_eq!(session.admit(HANDSHAKE, NOW), Admission::Serve);
    assert_eq!(session.admit(PRODUCE, NOW), Admission::Close);
    assert_eq!(session.principal(), None);

    let handshake = session.handshake("SCRAM-SHA-512", 1, NOW, &settings);
    assert_eq!(
        handshake,
        HandshakeAnswer {
            error: ErrorCode::None,
            mechanisms: names(&["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]),
            close: false
        }
    );
    for key in [PRODUCE, VERSIONS, HANDSHAKE] {
        assert_eq!(session.admit(key, NOW), Admission::Refuse, "api key {key}");
    }
    assert_eq!(session.admit(AUTHENTICATE, NOW), Admission::Serve);
    // A second handshake mid-exchange fails the connection.
    assert_eq!(
        session.handshake("PLAIN", 1, NOW, &settings),
        HandshakeAnswer {
            error: ErrorCode::IllegalSaslState,
            mechanisms: Vec::new(),
            close: true
        }
    );
    assert_closed(&session, NOW);

    // After a v0 handshake the client expects raw tokens: other requests are closed on,
    // and a framed exchange still works.
    let mut raw = Session::new();
    assert_eq!(
        raw.handshake("PLAIN", 0, NOW, &settings).error,
        ErrorCode::None
    );
    assert_eq!(raw.admit(PRODUCE, NOW), Admission::Close);
    assert_eq!(raw.admit(AUTHENTICATE, NOW), Admission::Serve);
    let message = plain("", "alice", "alice-secret");
    let answer = raw.authenticate(&message, NOW, "srv", &settings, &Store::default());
    assert_eq!(answer, done("User:alice", 0, "PLAIN", false));
}

#[test]
fn authenticate_out_of_turn_is_an_illegal_sasl_state() {
    let settings = base_settings(None);
    let store = Store::default();
    let message = plain("", "alice", "alice-secret");

    let mut session = Session::new();
    let answer = session.authenticate(&message, NOW, "srv", &settings, &store);
    assert!(matches!(
        answer,
        AuthenticateAnswer::IllegalState { close: true, .. }
    ));
    assert_eq!(answer.error_code(), ErrorCode::IllegalSaslState);
    assert!(answer.closes_connection());
    assert_eq!(session.principal(), None);
    assert_closed(&session, NOW);

    // After authentication Kafka answers 34 and keeps the connection.
    let mut session = Session::new();
    plain_login(&mut session, &settings, &store, &message, NOW);
    let answer = session.authenticate(&message, NOW, "srv", &settings, &store);
    assert_eq!(
        answer,
        AuthenticateAnswer::IllegalState {
            message: "SaslAuthenticate request received after successful authentication".to_owned(),
            close: false
        }
    );
    // No expiry, so no re-authentication: a handshake is answered 34 too.
    assert_eq!(session.admit(HANDSHAKE, NOW), Admission::Serve);
    assert_eq!(
        session.handshake("PLAIN", 1, NOW, &settings),
        HandshakeAnswer {
            error: ErrorCode::IllegalSaslState,
            mechanisms: Vec::new(),
            close: false
        }
    );
    assert_eq!(session.principal(), Some("User:alice"));
    assert_eq!(session.admit(PRODUCE, NOW), Admission::Serve);
}

#[test]
fn only_usable_mechanisms_are_offered() {
    let settings = SaslSettings {
        enabled: names(&[
            "SCRAM-SHA-512",
            "PLAIN",
            "SCRAM-SHA-512",
            "GSSAPI",
            "OAUTHBEARER",
        ]),
        ..base_settings(None)
    };
    let offered = [Mechanism::Scram(ScramMechanism::Sha512), Mechanism::Plain];
    assert_eq!(settings.usable_mechanisms(), offered);
    for requested in ["OAUTHBEARER", "GSSAPI", "plain", "SCRAM-SHA-256", ""] {
        let mut session = Session::new();
        assert_eq!(
            session.handshake(requested, 1, NOW, &settings),
            HandshakeAnswer {
                error: ErrorCode::UnsupportedSaslMechanism,
                mechanisms: names(&["SCRAM-SHA-512", "PLAIN"]),
                close: true
            },
            "{requested}"
        );
        assert_closed(&session, NOW);
    }
    let issuer = Issuer::new();
    let with_validator = SaslSettings {
        oauth: Some(Arc::new(issuer.validator())),
        ..settings
    };
    assert_eq!(
        with_validator.usable_mechanisms(),
        [
            Mechanism::Scram(ScramMechanism::Sha512),
            Mechanism::Plain,
            Mechanism::OAuthBearer
        ]
    );
    for mechanism in Mechanism::ALL {
        assert_eq!(Mechanism::from_name(mechanism.name()), Some(mechanism));
    }
}

#[test]
fn session_lifetime_follows_kafka() {
    assert_eq!(session_lifetime_ms(None, None), None);
    assert_eq!(session_lifetime_ms(Some(0), None), None);
    assert_eq!(session_lifetime_ms(Some(-5), None), None);
    assert_eq!(session_lifetime_ms(Some(100), None), Some(100));
    assert_eq!(session_lifetime_ms(None, Some(70)), Some(70));
    assert_eq!(session_lifetime_ms(Some(0), Some(70)), Some(70));
    assert_eq!(session_lifetime_ms(Some(100), Some(70)), Some(70));
    assert_eq!(session_lifetime_ms(Some(50), Some(70)), Some(50));
    assert_eq!(session_lifetime_ms(None, Some(-10)), Some(0));
    assert_eq!(session_lifetime_ms(Some(50), Some(-10)), Some(0));
}

#[test]
fn plain_users_files_parse() {
    let text = "# operators\n\nalice:alice-secret\r\n  # indented comment\n   \nbob:pa:ss word \n";
    let users = PlainUsers::parse(text).unwrap();
    assert_eq!(users.len(), 2);
    assert!(!users.is_empty());
    assert_eq!(users.check("alice", b"alice-secret"), Some(true));
    assert_eq!(users.check("alice", b"alice-secre"), Some(false));
    assert_eq!(users.check("alice", b"alice-secret\r"), Some(false));
    assert_eq!(users.check("bob", b"pa:ss word "), Some(true));
    assert_eq!(users.check("bob", b"pa"), Some(false));
    assert_eq!(users.check("carol", b"x"), None);
    assert!(!format!("{users:?}").contains("secret"));
    assert!(PlainUsers::parse("# nobody yet\n").unwrap().is_empty());
}

#[test]
fn malformed_plain_users_files_are_refused() {
    let refusal = |text: &str| PlainUsers::parse(text).unwrap_err();
    assert!(matches!(
        refusal("alice\n"),
        PlainUsersError::MissingSeparator { line: 1 }
    ));
    assert!(matches!(
        refusal("a:1\n:pw\n"),
        PlainUsersError::EmptyName { line: 2 }
    ));
    assert!(matches!(
        refusal("alice:\n"),
        PlainUsersError::EmptyPassword { line: 1 }
    ));
    assert!(matches!(
        refusal(" alice:pw\n"),
        PlainUsersError::NameWhitespace { line: 1 }
    ));
    assert!(matches!(
        refusal("alice :pw\n"),
        PlainUsersError::NameWhitespace { line: 1 }
    ));
    assert!(matches!(
        refusal("al\0ice:pw\n"),
        PlainUsersError::Nul { line: 1 }
    ));
    assert!(matches!(
        refusal("alice:p\0w\n"),
        PlainUsersError::Nul { line: 1 }
    ));
    let long_name = format!("{}:pw", "n".repeat(PLAIN_USERS_FIELD_BYTES_MAX + 1));
    assert!(matches!(
        refusal(&long_name),
        PlainUsersError::FieldTooLong { line: 1, .. }
    ));
    let long_password = format!("n:{}", "p".repeat(PLAIN_USERS_FIELD_BYTES_MAX + 1));
    assert!(matches!(
        refusal(&long_password),
        PlainUsersError::FieldTooLong { line: 1, .. }
    ));
    let at_limit = format!("{}:{}", "n".repeat(1024), "p".repeat(1024));
    assert_eq!(PlainUsers::parse(&at_limit).unwrap().len(), 1);
    assert!(matches!(
        refusal("a:1\n# c\na:2\n"),
        PlainUsersError::Duplicate { line: 3, name } if name == "a"
    ));
    // No error shows a password, even a line that may be one.
    for text in ["hunter2\n", "a:hunter2\na:hunter2\n", "a :hunter2\n"] {
        let error = PlainUsers::parse(text).unwrap_err();
        assert!(!format!("{error} {error:?}").contains("hunter2"), "{error}");
    }

    let many: String = (0..=PLAIN_USERS_MAX).map(|i| format!("u{i}:p\n")).collect();
    assert!(matches!(
        PlainUsers::parse(&many),
        Err(PlainUsersError::TooManyUsers {
            max: PLAIN_USERS_MAX
        })
    ));
}

#[test]
fn plain_users_files_are_read() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "alice:alice-secret\n").unwrap();
    let users = PlainUsers::from_file(file.path()).unwrap();
    assert_eq!(users.check("alice", b"alice-secret"), Some(true));
    let missing = file.path().with_extension("missing");
    assert!(matches!(
        PlainUsers::from_file(&missing),
        Err(PlainUsersError::Unreadable { .. })
    ));
}

static ALL_MECHANISMS: LazyLock<SaslSettings> = LazyLock::new(|| SaslSettings {
    enabled: names(&["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]),
    oauth: Some(Arc::new(Issuer::new().validator())),
    ..base_settings(Some(1_000))
});

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_nor_authenticate(
        mechanism in proptest::sample::select(vec![
            "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI",
        ]),
        version in 0i16..3,
        first in prop_oneof![
            Just(b"n,,n=user,r=abc".to_vec()),
            Just(b"\0alice\0".to_vec()),
            proptest::collection::vec(any::<u8>(), 0..600),
        ],
        second in proptest::collection::vec(any::<u8>(), 0..600),
        keys in proptest::collection::vec(any::<i16>(), 0..6),
        nonce in "[ -~]{0,8}",
    ) {
        let settings = &*ALL_MECHANISMS;
        let mut session = Session::new();
        let _ = session.handshake(mechanism, version, NOW, settings);
        for bytes in [&first, &second] {
            let answer = session.authenticate(bytes, NOW, &nonce, settings, &AnyUser);
            prop_assert!(!matches!(answer, AuthenticateAnswer::Done { .. }), "{answer:?}");
            let _ = answer.closes_connection();
        }
        for key in keys {
            let _ = session.admit(key, NOW);
            let _ = session.handshake(mechanism, version, NOW, settings);
        }
        prop_assert_eq!(session.principal(), None);
    }
}
