//! Tests of `security::oauthbearer`.

use super::*;
use aws_lc_rs::hmac;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use proptest::prelude::*;
use serde_json::json;
use std::sync::LazyLock;

const NOW: u64 = 1_700_000_000;
const ISSUER: &str = "https://idp.example/realms/kafka";
const AUDIENCE: &str = "floe";

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// An identity provider's ES256 key, made in the test.
struct SigningKey {
    pair: EcdsaKeyPair,
    kid: String,
}

impl SigningKey {
    fn new(kid: &str) -> SigningKey {
        SigningKey {
            pair: EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap(),
            kid: kid.to_owned(),
        }
    }

    /// Its public half as the provider publishes it.
    fn jwk(&self) -> Value {
        // An uncompressed P-256 point: 0x04, then x and y of 32 bytes each.
        let point: &[u8] = self.pair.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
            "kid": self.kid, "x": b64(x), "y": b64(y),
        })
    }

    fn header(&self) -> Value {
        json!({"alg": "ES256", "typ": "JWT", "kid": self.kid})
    }

    fn sign(&self, claims: &Value) -> String {
        self.sign_with_header(&self.header(), claims)
    }

    fn sign_with_header(&self, header: &Value, claims: &Value) -> String {
        let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .unwrap();
        format!("{input}.{}", b64(signature))
    }
}

fn settings() -> JwtValidatorSettings {
    JwtValidatorSettings {
        expected_issuer: Some(ISSUER.to_owned()),
        expected_audience: vec![AUDIENCE.to_owned()],
        ..JwtValidatorSettings::default()
    }
}

fn validator(keys: &[Value], settings: JwtValidatorSettings) -> JwtValidator {
    JwtValidator::from_jwks_json(&json!({ "keys": keys }).to_string(), settings).unwrap()
}

fn claims() -> Value {
    json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "scope": "produce consume",
        "iat": NOW - 10, "exp": NOW + 300,
    })
}

fn without(mut claims: Value, name: &str) -> Value {
    claims.as_object_mut().unwrap().remove(name);
    claims
}

fn with(mut claims: Value, name: &str, value: Value) -> Value {
    claims[name] = value;
    claims
}

fn initial_response(token: &str) -> Vec<u8> {
    format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()
}

/// The validator's refusal of `token`, checked to say nothing of the token: no section of
/// it, and not the principal its payload names.
fn refusal(validator: &JwtValidator, token: &str, now: u64) -> OAuthError {
    let error = validator.validate(token, now).unwrap_err();
    assert_reveals_nothing(&error, token);
    error
}

fn assert_reveals_nothing(error: &OAuthError, token: &str) {
    let text = format!("{error} / {error:?}");
    for section in token.split('.').filter(|section| section.len() >= 8) {
        assert!(!text.contains(section), "{text}");
    }
    assert!(!text.contains("alice"), "{text}");
}

/// One key `k1` and the test settings, shared by the property tests.
static VALIDATOR: LazyLock<JwtValidator> =
    LazyLock::new(|| validator(&[SigningKey::new("k1").jwk()], settings()));

#[test]
fn a_valid_token_authenticates_its_subject() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let token = key.sign(&claims());
    let validated = authenticate(&validator, &initial_response(&token), NOW).unwrap();
    assert_eq!(
        validated,
        ValidatedToken {
            principal_name: "alice".to_owned(),
            expires_at_unix_seconds: NOW + 300,
            scopes: vec!["produce".to_owned(), "consume".to_owned()],
        }
    );
    // With the principal as authorization id, and extensions, too.
    let response = format!("n,a=alice,\x01auth=Bearer {token}\x01traceId=42\x01\x01");
    let again = authenticate(&validator, response.as_bytes(), NOW).unwrap();
    assert_eq!(again, validated);
}

#[test]
fn the_caller_drives_time_and_the_skew_widens_the_window() {
    let key = SigningKey::new("k1");
    let token = key.sign(&claims()); // exp = NOW + 300
    let skewed = validator(&[key.jwk()], settings()); // 30 s
    skewed.validate(&token, NOW + 329).unwrap();
    assert!(matches!(
        refusal(&skewed, &token, NOW + 330),
        OAuthError::Expired
    ));
    let exact = validator(
        &[key.jwk()],
        JwtValidatorSettings {
            clock_skew_seconds: 0,
            ..settings()
        },
    );
    exact.validate(&token, NOW + 299).unwrap();
    assert!(matches!(
        refusal(&exact, &token, NOW + 300),
        OAuthError::Expired
    ));
    // Expired ten seconds ago: still inside 30 s of skew, not inside none.
    let late = key.sign(&with(claims(), "exp", json!(NOW - 10)));
    skewed.validate(&late, NOW).unwrap();
    assert!(matches!(refusal(&exact, &late, NOW), OAuthError::Expired));
    let long_gone = key.sign(&with(claims(), "exp", json!(NOW - 31)));
    assert!(matches!(
        refusal(&skewed, &long_gone, NOW),
        OAuthError::Expired
    ));
}

#[test]
fn exp_is_required_and_must_be_a_number_of_seconds() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let missing = key.sign(&without(claims(), "exp"));
    assert!(matches!(
        refusal(&validator, &missing, NOW),
        OAuthError::MissingExpiration
    ));
    for bad in [json!("tomorrow"), json!(-5), json!([NOW + 300])] {
        let token = key.sign(&with(claims(), "exp", bad));
        // jsonwebtoken itself refuses an `exp` of the wrong type before the claims are
        // read here; either way the token is refused as malformed.
        assert!(matches!(
            refusal(&validator, &token, NOW),
            OAuthError::MalformedClaim { .. } | OAuthError::MalformedToken
        ));
    }
    // Fractional seconds are fine; the whole ones count.
    let fractional = key.sign(&with(claims(), "exp", json!(NOW as f64 + 300.7)));
    let validated = validator.validate(&fractional, NOW).unwrap();
    assert_eq!(validated.expires_at_unix_seconds, NOW + 300);
}

#[test]
fn a_token_from_the_future_is_refused_beyond_the_skew() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let soon = key.sign(&with(claims(), "nbf", json!(NOW + 30)));
    validator.validate(&soon, NOW).unwrap();
    let later = key.sign(&with(claims(), "nbf", json!(NOW + 31)));
    assert!(matches!(
        refusal(&validator, &later, NOW),
        OAuthError::NotYetValid
    ));
    // The same token becomes valid once its time comes.
    validator.validate(&later, NOW + 1).unwrap();
    let issued_later = key.sign(&with(claims(), "iat", json!(NOW + 31)));
    assert!(matches!(
        refusal(&validator, &issued_later, NOW),
        OAuthError::IssuedInFuture
    ));
    let no_iat = key.sign(&without(claims(), "iat"));
    assert!(matches!(
        refusal(&validator, &no_iat, NOW),
        OAuthError::MissingIssuedAt
    ));
}

#[test]
fn the_issuer_must_be_the_expected_one_when_configured() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    for claims in [
        with(claims(), "iss", json!("https://evil.example")),
        with(claims(), "iss", json!([ISSUER])),
        without(claims(), "iss"),
    ] {
        let token = key.sign(&claims);
        assert!(matches!(
            refusal(&validator, &token, NOW),
            OAuthError::WrongIssuer
        ));
    }
    let any_issuer = JwtValidator::from_jwks_json(
        &json!({ "keys": [key.jwk()] }).to_string(),
        JwtValidatorSettings {
            expected_issuer: None,
            ..settings()
        },
    )
    .unwrap();
    let token = key.sign(&with(claims(), "iss", json!("https://other.example")));
    any_issuer.validate(&token, NOW).unwrap();
}

#[test]
fn the_audience_must_include_an_expected_one_when_configured() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let among_others = key.sign(&with(claims(), "aud", json!(["account", AUDIENCE])));
    validator.validate(&among_others, NOW).unwrap();
    for claims in [
        with(claims(), "aud", json!("account")),
        with(claims(), "aud", json!(["account", 7])),
        with(claims(), "aud", json!(42)),
        without(claims(), "aud"),
    ] {
        let token = key.sign(&claims);
        assert!(matches!(
            refusal(&validator, &token, NOW),
            OAuthError::WrongAudience
        ));
    }
    let any_audience = validator_without_audience(&key);
    let token = key.sign(&with(claims(), "aud", json!("account")));
    any_audience.validate(&token, NOW).unwrap();
}

fn validator_without_audience(key: &SigningKey) -> JwtValidator {
    validator(
        &[key.jwk()],
        JwtValidatorSettings {
            expected_audience: Vec::new(),
            ..settings()
        },
    )
}

#[test]
fn a_key_id_not_in_the_set_is_refused() {
    let known = SigningKey::new("k1");
    let validator = validator(&[known.jwk()], settings());
    let stranger = SigningKey::new("k9");
    let token = stranger.sign(&claims());
    assert!(matches!(
        refusal(&validator, &token, NOW),
        OAuthError::UnknownKeyId
    ));
}

#[test]
fn a_signature_by_another_key_or_over_other_claims_is_refused() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    // Another key claiming the known key's id.
    let impostor = SigningKey::new("k1");
    let forged = impostor.sign(&claims());
    assert!(matches!(
        refusal(&validator, &forged, NOW),
        OAuthError::BadSignature
    ));
    // A genuine signature moved onto other claims.
    let genuine = key.sign(&claims());
    let signature = genuine.rsplit('.').next().unwrap();
    let tampered = format!(
        "{}.{}.{signature}",
        b64(key.header().to_string()),
        b64(with(claims(), "sub", json!("root")).to_string())
    );
    assert!(matches!(
        refusal(&validator, &tampered, NOW),
        OAuthError::BadSignature
    ));
}

#[test]
fn an_unsigned_token_is_refused() {
    let validator = &*VALIDATOR;
    let header = b64(json!({"alg": "none", "kid": "k1"}).to_string());
    let payload = b64(claims().to_string());
    // "none" with the empty signature RFC 7519 gives it, and with a made-up one.
    let empty = format!("{header}.{payload}.");
    assert!(matches!(
        refusal(validator, &empty, NOW),
        OAuthError::MalformedToken
    ));
    let filled = format!("{header}.{payload}.AAAA");
    assert!(matches!(
        refusal(validator, &filled, NOW),
        OAuthError::AlgorithmNotAllowed
    ));
    for alg in ["None", "es256", ""] {
        let header = b64(json!({"alg": alg, "kid": "k1"}).to_string());
        let token = format!("{header}.{payload}.AAAA");
        assert!(matches!(
            refusal(validator, &token, NOW),
            OAuthError::AlgorithmNotAllowed
        ));
    }
}

#[test]
fn hmac_keyed_with_the_public_key_is_refused() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    // The classic confusion: HS256 with the published key's bytes as the secret.
    let header = json!({"alg": "HS256", "typ": "JWT", "kid": "k1"});
    let input = format!("{}.{}", b64(header.to_string()), b64(claims().to_string()));
    let public_point: &[u8] = key.pair.public_key().as_ref();
    let published = key.jwk().to_string();
    for secret in [public_point, published.as_bytes()] {
        let mac = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), input.as_bytes());
        let token = format!("{input}.{}", b64(mac));
        assert!(matches!(
            refusal(&validator, &token, NOW),
            OAuthError::AlgorithmNotAllowed
        ));
    }
    // Nor can HMAC be configured in, nor a secret key be published in the set.
    let configured = JwtValidator::from_jwks_json(
        &json!({ "keys": [key.jwk()] }).to_string(),
        JwtValidatorSettings {
            algorithms: vec![Algorithm::ES256, Algorithm::HS256],
            ..settings()
        },
    );
    assert!(matches!(
        configured,
        Err(OAuthError::InvalidSettings { .. })
    ));
    let secret_only = json!({"keys": [{"kty": "oct", "kid": "s1", "k": b64(b"secret")}]});
    assert!(matches!(
        JwtValidator::from_jwks_json(&secret_only.to_string(), settings()),
        Err(OAuthError::NoUsableKeys)
    ));
}

#[test]
fn a_key_serves_only_its_own_algorithm() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let payload = b64(claims().to_string());
    for alg in ["ES384", "RS256", "PS256"] {
        let header = b64(json!({"alg": alg, "kid": "k1"}).to_string());
        let token = format!("{header}.{payload}.AAAA");
        assert!(matches!(
            refusal(&validator, &token, NOW),
            OAuthError::KeyAlgorithmMismatch
        ));
    }
    // Without its "alg", the key's curve still decides: P-256 is not ES384's curve.
    let mut undeclared = key.jwk();
    undeclared.as_object_mut().unwrap().remove("alg");
    let validator = self::validator(&[undeclared], settings());
    let header = b64(json!({"alg": "ES384", "kid": "k1"}).to_string());
    let token = format!("{header}.{payload}.AAAA");
    assert!(matches!(
        refusal(&validator, &token, NOW),
        OAuthError::KeyAlgorithmMismatch
    ));
}

#[test]
fn a_token_without_key_id_needs_a_single_key_for_its_algorithm() {
    let key = SigningKey::new("k1");
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let token = key.sign_with_header(&header, &claims());
    let single = validator(&[key.jwk()], settings());
    single.validate(&token, NOW).unwrap();
    let two = validator(&[key.jwk(), SigningKey::new("k2").jwk()], settings());
    assert!(matches!(
        refusal(&two, &token, NOW),
        OAuthError::NoSingleKeyForAlgorithm
    ));
    // With its key id the same token is verified among two.
    let named = key.sign(&claims());
    two.validate(&named, NOW).unwrap();
}

#[test]
fn critical_header_parameters_are_refused() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let header = json!({"alg": "ES256", "kid": "k1", "crit": ["exp"]});
    let token = key.sign_with_header(&header, &claims());
    assert!(matches!(
        refusal(&validator, &token, NOW),
        OAuthError::UnsupportedCriticalHeader
    ));
}

#[test]
fn the_subject_claim_must_name_a_principal() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    for claims in [
        without(claims(), "sub"),
        with(claims(), "sub", json!("  ")),
        with(claims(), "sub", Value::Null),
    ] {
        let token = key.sign(&claims);
        assert!(matches!(
            refusal(&validator, &token, NOW),
            OAuthError::MissingSubject { claim } if claim == "sub"
        ));
    }
    let numeric = key.sign(&with(claims(), "sub", json!(42)));
    assert!(matches!(
        refusal(&validator, &numeric, NOW),
        OAuthError::MalformedClaim { claim } if claim == "sub"
    ));
    let padded = key.sign(&with(claims(), "sub", json!(" alice ")));
    assert_eq!(
        validator.validate(&padded, NOW).unwrap().principal_name,
        "alice"
    );
    // Another claim can name the principal (sasl.oauthbearer.sub.claim.name).
    let by_client_id = self::validator(
        &[key.jwk()],
        JwtValidatorSettings {
            subject_claim: "client_id".to_owned(),
            ..settings()
        },
    );
    let service = key.sign(&with(claims(), "client_id", json!("svc-orders")));
    let validated = by_client_id.validate(&service, NOW).unwrap();
    assert_eq!(validated.principal_name, "svc-orders");
}

#[test]
fn scopes_come_from_a_string_or_an_array_without_blanks_or_repeats() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let scopes = |scope: Value| {
        let token = key.sign(&with(claims(), "scope", scope));
        validator.validate(&token, NOW).map(|t| t.scopes)
    };
    assert_eq!(scopes(json!(" a  b c ")).unwrap(), ["a", "b", "c"]);
    assert_eq!(scopes(json!(["x", " y "])).unwrap(), ["x", "y"]);
    assert!(scopes(json!(7)).unwrap().is_empty());
    let none = key.sign(&without(claims(), "scope"));
    assert!(validator.validate(&none, NOW).unwrap().scopes.is_empty());
    for bad in [
        json!(" "),
        json!("a a"),
        json!(["x", "x"]),
        json!(["x", ""]),
        json!([1]),
    ] {
        assert!(matches!(
            scopes(bad),
            Err(OAuthError::MalformedClaim { claim }) if claim == "scope"
        ));
    }
}

#[test]
fn the_authorization_id_must_be_the_tokens_principal() {
    let key = SigningKey::new("k1");
    let validator = validator(&[key.jwk()], settings());
    let token = key.sign(&claims());
    let response = format!("n,a=mallory,\x01auth=Bearer {token}\x01\x01");
    let error = authenticate(&validator, response.as_bytes(), NOW).unwrap_err();
    assert!(matches!(error, OAuthError::AuthorizationIdMismatch));
    assert_reveals_nothing(&error, &token);
    assert!(!error.to_string().contains("mallory"));
    // An escaped name is compared unescaped.
    let odd = key.sign(&with(claims(), "sub", json!("a,b=c")));
    let response = format!("n,a=a=2Cb=3Dc,\x01auth=Bearer {odd}\x01\x01");
    let validated = authenticate(&validator, response.as_bytes(), NOW).unwrap();
    assert_eq!(validated.principal_name, "a,b=c");
}

#[test]
fn initial_responses_parse_as_kafka_reads_them() {
    let plain = parse_client_initial_response(b"n,,\x01auth=Bearer abc.d-f.g_i\x01\x01");
    let plain = plain.unwrap();
    assert_eq!(plain.authorization_id, None);
    assert_eq!(plain.token, "abc.d-f.g_i");
    assert!(plain.extensions.is_empty());

    let full = parse_client_initial_response(
        b"n,a=user=2Cone=3D,\x01auth=BEARER   tok\x01traceId=x y=z\t\x01host=h\x01\x01",
    )
    .unwrap();
    assert_eq!(full.authorization_id.as_deref(), Some("user,one="));
    assert_eq!(full.token, "tok");
    let extensions: Vec<(&str, &str)> = full
        .extensions
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(extensions, [("host", "h"), ("traceId", "x y=z\t")]);
    // The token stays out of its Debug text.
    assert!(!format!("{full:?}").contains("tok\""));
    assert!(format!("{full:?}").contains("[redacted]"));
}

#[test]
fn malformed_initial_responses_are_refused() {
    let malformed: &[&[u8]] = &[
        b"",
        b"n",
        b"y,,\x01auth=Bearer t\x01\x01",
        b"p=tls-unique,,\x01auth=Bearer t\x01\x01",
        b"n,,auth=Bearer t\x01\x01",
        b"n,,\x01auth=Bearer t",
        b"n,,\x01auth=Bearer t\x01",
        b"n,,\x01auth=Bearer t\x01\x01\x01",
        b"n,,\x01\x01auth=Bearer t\x01\x01",
        b"n,,\x01",
        b"n,a=,\x01auth=Bearer t\x01\x01",
        b"n,a=x=41,\x01auth=Bearer t\x01\x01",
        b"n,a=\xc3\xa9,\x01auth=Bearer t\x01\x01",
        b"n,a=x\x01auth=Bearer t\x01\x01",
        b"n,,\x01auth=Bearer\x01\x01",
        b"n,,\x01auth=Bearer \x01\x01",
        b"n,,\x01auth=Bearer\tt\x01\x01",
        b"n,,\x01auth=Bearer t+/=\x01\x01",
        b"n,,\x01auth=Bearer t u\x01\x01",
        b"n,,\x01auth= t\x01\x01",
        b"n,,\x01auth=Bearer t\x01bad-key=v\x01\x01",
        b"n,,\x01auth=Bearer t\x01=v\x01\x01",
        b"n,,\x01auth=Bearer t\x01k=\x01\x01",
        b"n,,\x01auth=Bearer t\x01k\x01\x01",
        b"n,,\x01auth=Bearer t\x01k=\x7f\x01\x01",
        b"n,,\x01auth=Bearer t\x01k=\xc3\xa9\x01\x01",
        b"n,,\x01auth=Bearer t\x01auth=Bearer u\x01\x01",
        b"n,,\x01auth=Bearer t\x01k=1\x01k=2\x01\x01",
    ];
    for bytes in malformed {
        let error = parse_client_initial_response(bytes).unwrap_err();
        assert!(
            matches!(error, OAuthError::MalformedInitialResponse { .. }),
            "{:?}: {error}",
            String::from_utf8_lossy(bytes)
        );
    }
    for bytes in [&b"n,,\x01\x01"[..], &b"n,,\x01Auth=Bearer t\x01\x01"[..]] {
        assert!(matches!(
            parse_client_initial_response(bytes),
            Err(OAuthError::MissingAuth)
        ));
    }
    assert!(matches!(
        parse_client_initial_response(b"n,,\x01auth=Basic dXNlcg\x01\x01"),
        Err(OAuthError::UnsupportedAuthScheme)
    ));
    let huge = initial_response(&"a".repeat(INITIAL_RESPONSE_BYTES_MAX));
    assert!(matches!(
        parse_client_initial_response(&huge),
        Err(OAuthError::InitialResponseTooLarge { .. })
    ));
}

#[test]
fn tokens_of_the_wrong_shape_are_malformed() {
    let validator = &*VALIDATOR;
    let header = b64(json!({"alg": "ES256", "kid": "k1"}).to_string());
    let payload = b64(claims().to_string());
    for token in [
        String::new(),
        "abc".to_owned(),
        format!("{header}.{payload}"),
        format!("{header}..AAAA"),
        format!(".{payload}.AAAA"),
        format!("{header}.{payload}.AAAA.BBBB.CCCC"),
        format!("{header}=.{payload}.AAAA"),
        format!("{}.{payload}.AAAA", b64("not json")),
        format!("{}.{payload}.AAAA", b64(r#"{"kid":"k1"}"#)),
        format!("{}.{payload}.AAAA", b64(r#"{"alg":"ES256","kid":7}"#)),
        format!("{header}.{}.AAAA", "a".repeat(INITIAL_RESPONSE_BYTES_MAX)),
    ] {
        assert!(
            matches!(refusal(validator, &token, NOW), OAuthError::MalformedToken),
            "{token}"
        );
    }
}

#[test]
fn a_jwks_keeps_the_keys_it_can_use_and_skips_the_rest() {
    let key = SigningKey::new("k1");
    let jwks = json!({"keys": [
        {"kty": "oct", "kid": "s1", "k": b64(b"secret")},
        {"kty": "RSA", "kid": "e1", "use": "enc", "n": b64([0xc5u8; 256]), "e": "AQAB"},
        {"kty": "RSA", "kid": "o1", "alg": "RSA-OAEP", "n": b64([0xc5u8; 256]), "e": "AQAB"},
        {"kty": "RSA", "kid": "r1", "alg": "RS256", "n": b64([0xc5u8; 256]), "e": "AQAB"},
        {"kty": "EC", "kid": "p5", "crv": "P-521", "x": b64([1u8; 66]), "y": b64([2u8; 66])},
        {"kty": "EC", "kid": "b1", "crv": "P-256", "x": "!!", "y": "??"},
        {"kty": "PQ", "kid": "q1"},
        "not a key",
        key.jwk(),
    ]});
    let validator = JwtValidator::from_jwks_json(&jwks.to_string(), settings()).unwrap();
    assert_eq!(validator.key_count(), 2); // r1 and k1
    validator.validate(&key.sign(&claims()), NOW).unwrap();
    // A skipped key is as unknown as a missing one.
    let header = json!({"alg": "ES256", "kid": "p5"});
    let token = key.sign_with_header(&header, &claims());
    assert!(matches!(
        refusal(&validator, &token, NOW),
        OAuthError::UnknownKeyId
    ));

    for unusable in [
        json!({"keys": []}),
        json!({"keys": [{"kty": "oct", "k": "AA"}]}),
    ] {
        assert!(matches!(
            JwtValidator::from_jwks_json(&unusable.to_string(), settings()),
            Err(OAuthError::NoUsableKeys)
        ));
    }
    for malformed in ["", "[]", "{\"keys\": 3}", "{\"key\": []}"] {
        assert!(matches!(
            JwtValidator::from_jwks_json(malformed, settings()),
            Err(OAuthError::MalformedJwks(_))
        ));
    }
}

#[test]
fn settings_that_cannot_work_are_refused() {
    let jwks = json!({ "keys": [SigningKey::new("k1").jwk()] }).to_string();
    for settings in [
        JwtValidatorSettings {
            subject_claim: " ".to_owned(),
            ..settings()
        },
        JwtValidatorSettings {
            scope_claim: String::new(),
            ..settings()
        },
        JwtValidatorSettings {
            algorithms: Vec::new(),
            ..settings()
        },
    ] {
        assert!(matches!(
            JwtValidator::from_jwks_json(&jwks, settings),
            Err(OAuthError::InvalidSettings { .. })
        ));
    }
}

#[test]
fn a_jwks_file_is_read_once_and_bounded() {
    let key = SigningKey::new("k1");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), json!({ "keys": [key.jwk()] }).to_string()).unwrap();
    let validator = JwtValidator::from_jwks_file(file.path(), settings()).unwrap();
    validator.validate(&key.sign(&claims()), NOW).unwrap();

    let missing = file.path().with_extension("missing");
    assert!(matches!(
        JwtValidator::from_jwks_file(&missing, settings()),
        Err(OAuthError::JwksUnreadable { .. })
    ));
    let huge = " ".repeat(JWKS_BYTES_MAX as usize + 1);
    std::fs::write(file.path(), huge).unwrap();
    assert!(matches!(
        JwtValidator::from_jwks_file(file.path(), settings()),
        Err(OAuthError::JwksTooLarge { .. })
    ));
}

/// A claim's value: the good one, or anything a careless or hostile issuer might write.
fn claim_value(good: Value) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(good),
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (NOW - 100..NOW + 100).prop_map(Value::from),
        "[ a-z]{0,6}".prop_map(Value::String),
        proptest::collection::vec("[ a-z]{0,3}", 0..4).prop_map(|items| json!(items)),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = parse_client_initial_response(&bytes);
        let _ = authenticate(&VALIDATOR, &bytes, NOW);
    }

    #[test]
    fn arbitrary_bytes_after_a_header_never_panic(
        prefix in proptest::sample::select(vec![
            &b"n,,\x01"[..],
            &b"n,a=alice,\x01"[..],
            &b"n,,\x01auth=Bearer "[..],
            &b"n,,\x01k=v\x01auth="[..],
        ]),
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let message = [prefix, &bytes[..]].concat();
        let _ = parse_client_initial_response(&message);
        let _ = authenticate(&VALIDATOR, &message, NOW);
    }

    #[test]
    fn arbitrary_tokens_never_panic(token in "[-_.a-zA-Z0-9]{0,400}") {
        let _ = authenticate(&VALIDATOR, &initial_response(&token), NOW);
    }

    #[test]
    fn arbitrary_sections_never_panic(
        header in proptest::collection::vec(any::<u8>(), 0..200),
        payload in proptest::collection::vec(any::<u8>(), 0..200),
        signature in proptest::collection::vec(any::<u8>(), 0..100),
    ) {
        let token = format!("{}.{}.{}", b64(header), b64(payload), b64(signature));
        if let Err(error) = VALIDATOR.validate(&token, NOW) {
            assert_reveals_nothing(&error, &token);
        }
    }

    #[test]
    fn signed_tokens_with_arbitrary_claims_never_panic(
        exp in claim_value(json!(NOW + 300)),
        nbf in claim_value(Value::Null),
        iat in claim_value(json!(NOW - 10)),
        iss in claim_value(json!(ISSUER)),
        aud in claim_value(json!(AUDIENCE)),
        sub in claim_value(json!("alice")),
        scope in claim_value(json!("produce")),
    ) {
        let key = SigningKey::new("k1");
        let validator = validator(&[key.jwk()], settings());
        let claims: Map<String, Value> = [
            ("exp", exp), ("nbf", nbf), ("iat", iat), ("iss", iss),
            ("aud", aud), ("sub", sub), ("scope", scope),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        let token = key.sign(&Value::Object(claims));
        match validator.validate(&token, NOW) {
            Ok(validated) => {
                prop_assert!(validated.expires_at_unix_seconds.saturating_add(30) > NOW);
                prop_assert!(!validated.principal_name.trim().is_empty());
            }
            Err(error) => {
                let text = format!("{error} / {error:?}");
                for section in token.split('.') {
                    prop_assert!(!text.contains(section));
                }
            }
        }
    }
}
