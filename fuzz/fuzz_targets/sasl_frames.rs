//! Any bytes as a SASL exchange: the first byte picks the mechanism (PLAIN, SCRAM-SHA-256,
//! SCRAM-SHA-512, OAUTHBEARER), the rest is split into SaslAuthenticate messages. The session
//! must answer every message, never panic, and never authenticate (no credential exists that
//! random bytes could match, and no token can be signed by the key in the JWKS).
#![no_main]

use floe::security::oauthbearer::{JwtValidator, JwtValidatorSettings};
use floe::security::sasl::{AuthenticateAnswer, Credentials, SaslSettings, Session};
use floe::security::scram::{ScramCredential, ScramMechanism};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

/// One SCRAM user, "user", for both mechanisms, with a password drawn at start (so no input
/// can know it).
struct OneUser;

fn password() -> &'static [u8] {
    static PASSWORD: OnceLock<[u8; 32]> = OnceLock::new();
    PASSWORD.get_or_init(|| {
        let mut bytes = [0u8; 32];
        aws_lc_rs::rand::fill(&mut bytes).expect("random");
        bytes
    })
}

impl Credentials for OneUser {
    fn scram(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential> {
        (user == "user")
            .then(|| ScramCredential::from_password(mechanism, password(), b"salt", 4096))
    }
}

fn settings() -> &'static SaslSettings {
    static SETTINGS: OnceLock<SaslSettings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let jwks = r#"{"keys":[{"kty":"EC","crv":"P-256","kid":"k","alg":"ES256",
            "x":"Z9Z95uQiXadd2x3EBGN1gOwoCzV7epweUkKtEQWO_08",
            "y":"fT2wdcHAvmHXMG-g_2wc1PNwOA2KaMD7_SIDKNCmskw"}]}"#;
        let validator = JwtValidator::from_jwks_json(jwks, JwtValidatorSettings::default())
            .expect("a valid JWKS");
        SaslSettings {
            enabled: ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
                .map(String::from)
                .to_vec(),
            plain_users: None,
            oauth: Some(Arc::new(validator)),
            reauth_max_ms: Some(60_000),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mechanism = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"][usize::from(pick % 4)];
    let mut session = Session::new();
    session.handshake(mechanism, 1, 0, settings());
    for message in rest.split(|b| *b == 0xff).take(4) {
        match session.authenticate(message, 0, "fuzz-nonce", settings(), &OneUser) {
            AuthenticateAnswer::Done { .. } => panic!("random bytes authenticated"),
            AuthenticateAnswer::Failed { .. } | AuthenticateAnswer::IllegalState { .. } => return,
            AuthenticateAnswer::Continue { .. } => {}
        }
    }
});
