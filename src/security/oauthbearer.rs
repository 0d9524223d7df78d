//! SASL/OAUTHBEARER on the broker (KIP-255, RFC 7628): the client's initial response read the
//! way Kafka's `OAuthBearerClientInitialResponse` reads it, its bearer token validated as a
//! signed JWT against a JWKS file the way `BrokerJwtValidator` does it, and the principal, the
//! expiry and the scopes handed back. Pure: the time comes in as an argument, and the only I/O
//! is reading the JWKS file when a validator is built (reloading it means building another).
//!
//! ```text
//! initial response   n,[a=<authzid>],^A auth=Bearer <jwt> ^A [<key>=<value> ^A]* ^A
//!   parse_client_initial_response  → authzid, token, extensions          (≤ 16 KiB)
//! JwtValidator::validate(token, now)
//!   header     alg allowed (never "none", never HMAC) · no "crit"
//!   key        kid → its key in the JWKS (no kid: the one key for the alg) · key type fits alg
//!   signature  jsonwebtoken
//!   claims     exp required, now < exp + skew · nbf ≤ now + skew
//!              iat required, iat ≤ now + skew · iss, aud when configured
//!              subject claim a non-blank string · scope claim
//! authenticate       both, and an authzid, when given, must be the token's principal
//! ```
//!
//! `expires_at_unix_seconds` is the token's `exp`: the connection bounds the session by it
//! (KIP-368 re-authentication), so a client must come back with a fresh token.
//!
//! Every error's text is safe to send to an unauthenticated client and to log: it says what
//! failed and never carries the token or any part of it. The claims are part of the token too,
//! so not even the principal name appears, and jsonwebtoken's own errors (whose JSON messages
//! can quote the payload) are mapped to fixed texts rather than kept as a source.
//!
//! Where this differs from Kafka, deliberately:
//! - `aud` is checked only when an expected audience is configured; jose4j (under Kafka)
//!   also refuses a token that carries an `aud` when none is configured.
//! - A token without `kid` is verified only when exactly one key in the set fits its
//!   algorithm; jose4j would pick one of several.
//! - The authorization id's `=2C` / `=3D` escapes are decoded (RFC 5801) before it is compared
//!   with the principal; Kafka compares the escaped text.
//! - A key repeated in the initial response is refused; Kafka keeps the last one.
//! - Only asymmetric algorithms: a JWKS is public, so an HMAC key in it, or an HMAC token
//!   checked against a public key, would let anyone mint tokens.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
pub use jsonwebtoken::Algorithm;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{AlgorithmFamily, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::str::FromStr;

/// The largest client initial response (and so the largest token) accepted. Kafka bounds it
/// only by `sasl.server.max.receive.size` (512 KiB); identity providers' access tokens are 1-4
/// KiB, and this bounds the base64 and JSON work an unauthenticated client can ask for.
pub const INITIAL_RESPONSE_BYTES_MAX: usize = 16 * 1024;

/// The largest JWKS file read. Providers publish a handful of keys (a few KiB).
pub const JWKS_BYTES_MAX: u64 = 1024 * 1024;

/// The signature algorithms accepted unless configured otherwise: every asymmetric one Kafka's
/// jose4j accepts that jsonwebtoken verifies, EdDSA left for an operator to opt into.
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
];

/// RFC 7628's separator between the GS2 header and each key=value pair (`%x01`, control-A).
const SEPARATOR: u8 = 0x01;
/// The key whose value is `Bearer <token>`; every other key is an extension.
const AUTH_KEY: &str = "auth";

/// Why an OAUTHBEARER authentication, or the building of a validator, failed. The first group
/// rejects the client (the connection answers SASL_AUTHENTICATION_FAILED with this text); the
/// last group refuses the broker's configuration at start-up.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("malformed OAUTHBEARER client initial response: {reason}")]
    MalformedInitialResponse { reason: &'static str },
    #[error("the OAUTHBEARER client initial response is larger than {max_bytes} bytes")]
    InitialResponseTooLarge { max_bytes: usize },
    #[error("the OAUTHBEARER client initial response has no auth=Bearer token")]
    MissingAuth,
    #[error("the OAUTHBEARER client initial response uses an auth scheme other than Bearer")]
    UnsupportedAuthScheme,
    #[error("the requested authorization id is not the token's principal")]
    AuthorizationIdMismatch,
    #[error("the token is not a well-formed signed JWT")]
    MalformedToken,
    #[error("the token's algorithm is not allowed")]
    AlgorithmNotAllowed,
    #[error("the token has critical header parameters, which are not supported")]
    UnsupportedCriticalHeader,
    #[error("no key in the JWKS matches the token's key id")]
    UnknownKeyId,
    #[error("the key the token's key id names is not a key for the token's algorithm")]
    KeyAlgorithmMismatch,
    #[error("the token has no key id and no single key in the JWKS is for its algorithm")]
    NoSingleKeyForAlgorithm,
    #[error("the token's signature is not valid")]
    BadSignature,
    #[error("the token has no expiration time (exp)")]
    MissingExpiration,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet (nbf)")]
    NotYetValid,
    #[error("the token has no issued-at time (iat)")]
    MissingIssuedAt,
    #[error("the token's issued-at time (iat) is in the future")]
    IssuedInFuture,
    #[error("the token's issuer is not the expected one")]
    WrongIssuer,
    #[error("the token's audience does not include an expected one")]
    WrongAudience,
    #[error("the token has no {claim:?} claim naming its principal")]
    MissingSubject { claim: String },
    #[error("the token's {claim:?} claim is malformed")]
    MalformedClaim { claim: String },

    #[error("invalid OAUTHBEARER validator settings: {reason}")]
    InvalidSettings { reason: &'static str },
    #[error("cannot read the JWKS file {path}")]
    JwksUnreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the JWKS file {path} is larger than {max_bytes} bytes")]
    JwksTooLarge { path: String, max_bytes: u64 },
    #[error("the JWKS is not a JSON object with a \"keys\" array")]
    MalformedJwks(#[source] serde_json::Error),
    #[error("the JWKS holds no key usable to verify token signatures")]
    NoUsableKeys,
}

/// What the client sent first, as Kafka's `OAuthBearerClientInitialResponse` reads it. Its
/// `Debug` leaves the token out, so the value can be logged.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientInitialResponse {
    /// The GS2 header's `a=` name, unescaped; `None` when the header is `n,,`.
    pub authorization_id: Option<String>,
    /// The bearer token (base64url sections and dots only, as Kafka requires).
    pub token: String,
    /// Every key=value pair but `auth`. Kafka's default validator accepts them all unread.
    pub extensions: BTreeMap<String, String>,
}

impl std::fmt::Debug for ClientInitialResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientInitialResponse")
            .field("authorization_id", &self.authorization_id)
            .field("token", &"[redacted]")
            .field("extensions", &self.extensions)
            .finish()
    }
}

fn malformed(reason: &'static str) -> OAuthError {
    OAuthError::MalformedInitialResponse { reason }
}

/// Parses the client's initial response:
/// `n,` `[a=<saslname>]` `,` `%x01` `(<key>=<value> %x01)*` `%x01`, with `auth=Bearer <token>`
/// among the pairs. The character classes are Kafka's: a saslname is ASCII (`%x01-7F`) with
/// `,` and `=` escaped as `=2C` and `=3D`, a key is ASCII letters, a value is printable ASCII
/// plus space, tab, CR and LF, and a token is `[-_.a-zA-Z0-9]+`.
pub fn parse_client_initial_response(bytes: &[u8]) -> Result<ClientInitialResponse, OAuthError> {
    if bytes.len() > INITIAL_RESPONSE_BYTES_MAX {
        return Err(OAuthError::InitialResponseTooLarge {
            max_bytes: INITIAL_RESPONSE_BYTES_MAX,
        });
    }
    // Kafka accepts only "n": no channel binding is offered or used.
    let rest = bytes
        .strip_prefix(b"n,")
        .ok_or_else(|| malformed("it does not start with the GS2 header \"n,\""))?;
    let (authorization_id, rest) = match rest.strip_prefix(b"a=") {
        Some(named) => {
            // A saslname cannot hold a ',' (it is escaped), so the first one ends it.
            let end = named
                .iter()
                .position(|&b| b == b',')
                .ok_or_else(|| malformed("the GS2 header does not end with ','"))?;
            (Some(decode_sasl_name(&named[..end])?), &named[end + 1..])
        }
        None => {
            let rest = rest.strip_prefix(b",").ok_or_else(|| {
                malformed("the GS2 header is neither \"n,,\" nor \"n,a=<authzid>,\"")
            })?;
            (None, rest)
        }
    };
    let pairs = rest
        .strip_prefix(&[SEPARATOR])
        .and_then(|pairs| pairs.strip_suffix(&[SEPARATOR]))
        .ok_or_else(|| malformed("the key=value pairs are not framed by \\x01"))?;

    let mut auth = None;
    let mut extensions = BTreeMap::new();
    if let Some(pairs) = pairs.strip_suffix(&[SEPARATOR]) {
        for pair in pairs.split(|&b| b == SEPARATOR) {
            let (key, value) = parse_pair(pair)?;
            // Two values for one key leave it to the reader which one counts; refuse instead.
            let repeated = if key == AUTH_KEY {
                auth.replace(value).is_some()
            } else {
                extensions.insert(key, value).is_some()
            };
            if repeated {
                return Err(malformed("a key appears twice"));
            }
        }
    } else if !pairs.is_empty() {
        return Err(malformed("a key=value pair is not followed by \\x01"));
    }
    let auth = auth.ok_or(OAuthError::MissingAuth)?;
    Ok(ClientInitialResponse {
        authorization_id,
        token: bearer_token(&auth)?,
        extensions,
    })
}

/// A GS2 saslname (RFC 5801): ASCII without NUL, `,` and `=` sent as `=2C` and `=3D`.
fn decode_sasl_name(bytes: &[u8]) -> Result<String, OAuthError> {
    if bytes.is_empty() {
        return Err(malformed("the authorization id is empty"));
    }
    let mut name = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((&b, tail)) = rest.split_first() {
        rest = if b == b'=' {
            match tail {
                [b'2', b'C', tail @ ..] => {
                    name.push(',');
                    tail
                }
                [b'3', b'D', tail @ ..] => {
                    name.push('=');
                    tail
                }
                _ => {
                    return Err(malformed(
                        "the authorization id has an '=' not in =2C or =3D",
                    ));
                }
            }
        } else if (0x01..=0x7f).contains(&b) {
            name.push(char::from(b));
            tail
        } else {
            return Err(malformed("the authorization id is not ASCII"));
        };
    }
    Ok(name)
}

/// One `<key>=<value>` pair: the key ASCII letters, the value Kafka's `[\x21-\x7E \t\r\n]+`.
fn parse_pair(pair: &[u8]) -> Result<(String, String), OAuthError> {
    let equals = pair
        .iter()
        .position(|&b| b == b'=')
        .ok_or_else(|| malformed("a key=value pair has no '='"))?;
    let (key, value) = (&pair[..equals], &pair[equals + 1..]);
    if key.is_empty() || !key.iter().all(u8::is_ascii_alphabetic) {
        return Err(malformed("a key is not made of ASCII letters"));
    }
    let value_byte = |b: &u8| matches!(b, 0x21..=0x7e | b' ' | b'\t' | b'\r' | b'\n');
    if value.is_empty() || !value.iter().all(value_byte) {
        return Err(malformed(
            "a value is empty or has characters RFC 7628 does not allow",
        ));
    }
    Ok((ascii(key), ascii(value)))
}

fn ascii(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// The token of `auth=<scheme> <token>`: Kafka's `([\w]+)[ ]+([-_\.a-zA-Z0-9]+)`, the scheme
/// `Bearer` in any case.
fn bearer_token(auth: &str) -> Result<String, OAuthError> {
    let shape = "auth is not \"Bearer <token>\" with a base64url token";
    let (scheme, rest) = auth.split_once(' ').ok_or_else(|| malformed(shape))?;
    let token = rest.trim_start_matches(' ');
    let scheme_ok = !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let token_ok = !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !scheme_ok || !token_ok {
        return Err(malformed(shape));
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(OAuthError::UnsupportedAuthScheme);
    }
    Ok(token.to_owned())
}

/// Kafka's `sasl.oauthbearer.*` settings for validating tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtValidatorSettings {
    /// `sasl.oauthbearer.expected.issuer`: when set, `iss` must be exactly this.
    pub expected_issuer: Option<String>,
    /// `sasl.oauthbearer.expected.audience`: when not empty, `aud` (a string or an array)
    /// must hold at least one of these.
    pub expected_audience: Vec<String>,
    /// `sasl.oauthbearer.sub.claim.name`: the claim whose value is the principal.
    pub subject_claim: String,
    /// `sasl.oauthbearer.scope.claim.name`: the claim listing the token's scopes.
    pub scope_claim: String,
    /// `sasl.oauthbearer.clock.skew.seconds`: how far the broker's clock may be from the
    /// issuer's, both ways, for `exp`, `nbf` and `iat`.
    pub clock_skew_seconds: u64,
    /// The `alg` values accepted; HMAC ones are refused (see the module doc).
    pub algorithms: Vec<Algorithm>,
}

impl Default for JwtValidatorSettings {
    /// Kafka's defaults: no issuer or audience check, `sub`, `scope`, 30 s of skew.
    fn default() -> Self {
        JwtValidatorSettings {
            expected_issuer: None,
            expected_audience: Vec::new(),
            subject_claim: "sub".to_owned(),
            scope_claim: "scope".to_owned(),
            clock_skew_seconds: 30,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
        }
    }
}

/// What a valid token says about its bearer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedToken {
    /// The subject claim's value, trimmed (Kafka's `principalName`).
    pub principal_name: String,
    /// The token's `exp`: the session may last until then and no longer (KIP-368).
    pub expires_at_unix_seconds: u64,
    /// The scope claim, in the token's order: a space-separated string split up (as Kafka's
    /// `OAuthBearerScopeClaimUtils` does) or an array of strings; empty without one.
    pub scopes: Vec<String>,
}

/// Validates bearer tokens against the keys of one JWKS document (Kafka's `BrokerJwtValidator`
/// with `sasl.oauthbearer.jwks.endpoint.url=file:...`).
#[derive(Debug, Clone)]
pub struct JwtValidator {
    keys: Vec<VerificationKey>,
    settings: JwtValidatorSettings,
}

/// One usable key of the set.
#[derive(Debug, Clone)]
struct VerificationKey {
    key_id: Option<String>,
    shape: KeyShape,
    /// The key's own `alg`, when it declares one: then only that algorithm may use it.
    declared: Option<Algorithm>,
    decoding: DecodingKey,
}

/// The kinds of public key jsonwebtoken verifies with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyShape {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl VerificationKey {
    /// The key, if it is a public signature key jsonwebtoken can use; otherwise it is skipped,
    /// as jose4j skips keys it does not understand rather than refusing the whole set.
    fn from_jwk(jwk: &Jwk) -> Option<VerificationKey> {
        if jwk
            .common
            .public_key_use
            .as_ref()
            .is_some_and(|usage| *usage != PublicKeyUse::Signature)
        {
            return None;
        }
        let shape = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => KeyShape::Rsa,
            AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
                EllipticCurve::P256 => KeyShape::P256,
                EllipticCurve::P384 => KeyShape::P384,
                _ => return None,
            },
            AlgorithmParameters::OctetKeyPair(okp) => match okp.curve {
                EllipticCurve::Ed25519 => KeyShape::Ed25519,
                _ => return None,
            },
            // A secret in a public document is no secret: never verify with it.
            AlgorithmParameters::OctetKey(_) => return None,
        };
        let declared = match jwk.common.key_algorithm.map(signature_algorithm) {
            // It names an algorithm, but not one signatures are made with: not a signing key.
            Some(None) => return None,
            declared => declared.flatten(),
        };
        Some(VerificationKey {
            key_id: jwk.common.key_id.clone(),
            shape,
            declared,
            decoding: DecodingKey::from_jwk(jwk).ok()?,
        })
    }

    /// Whether a token signed with `alg` may be verified with this key.
    fn verifies(&self, alg: Algorithm) -> bool {
        let shape = match alg {
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => KeyShape::Rsa,
            Algorithm::ES256 => KeyShape::P256,
            Algorithm::ES384 => KeyShape::P384,
            Algorithm::EdDSA => KeyShape::Ed25519,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => return false,
        };
        self.shape == shape && self.declared.is_none_or(|declared| declared == alg)
    }
}

/// The signature algorithm a JWK's `alg` names; `None` for HMAC, encryption (RSA-OAEP, ...) and
/// unknown names, whose keys are skipped.
fn signature_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    match alg {
        KeyAlgorithm::RS256 => Some(Algorithm::RS256),
        KeyAlgorithm::RS384 => Some(Algorithm::RS384),
        KeyAlgorithm::RS512 => Some(Algorithm::RS512),
        KeyAlgorithm::PS256 => Some(Algorithm::PS256),
        KeyAlgorithm::PS384 => Some(Algorithm::PS384),
        KeyAlgorithm::PS512 => Some(Algorithm::PS512),
        KeyAlgorithm::ES256 => Some(Algorithm::ES256),
        KeyAlgorithm::ES384 => Some(Algorithm::ES384),
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
        _ => None,
    }
}

/// The JWKS document, its keys left raw so that one key of a type jsonwebtoken does not know
/// (its `JwkSet` would fail on it) costs only that key.
#[derive(Deserialize)]
struct JwksDocument {
    keys: Vec<Value>,
}

/// The JOSE header fields read before jsonwebtoken sees the token, to choose the key and to
/// name what is wrong (`"alg": "none"` is an algorithm not allowed, not a malformed token).
#[derive(Deserialize)]
struct JoseHeader {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    crit: Option<serde::de::IgnoredAny>,
}

impl JwtValidator {
    /// A validator for the keys of `json`, a JWKS document (RFC 7517 section 5).
    pub fn from_jwks_json(
        json: &str,
        settings: JwtValidatorSettings,
    ) -> Result<JwtValidator, OAuthError> {
        let invalid = |reason| Err(OAuthError::InvalidSettings { reason });
        if settings.subject_claim.trim().is_empty() {
            return invalid("the subject claim name is blank");
        }
        if settings.scope_claim.trim().is_empty() {
            return invalid("the scope claim name is blank");
        }
        if settings
            .algorithms
            .iter()
            .any(|alg| alg.family() == AlgorithmFamily::Hmac)
        {
            return invalid("HMAC algorithms cannot be verified with a public key set");
        }
        if settings.algorithms.is_empty() {
            return invalid("no signature algorithm is allowed");
        }
        let document: JwksDocument =
            serde_json::from_str(json).map_err(OAuthError::MalformedJwks)?;
        let keys: Vec<VerificationKey> = document
            .keys
            .into_iter()
            .filter_map(|key| serde_json::from_value::<Jwk>(key).ok())
            .filter_map(|jwk| VerificationKey::from_jwk(&jwk))
            .collect();
        if keys.is_empty() {
            return Err(OAuthError::NoUsableKeys);
        }
        Ok(JwtValidator { keys, settings })
    }

    /// A validator for the keys of the JWKS file at `path` (read once, here).
    pub fn from_jwks_file(
        path: &Path,
        settings: JwtValidatorSettings,
    ) -> Result<JwtValidator, OAuthError> {
        use std::io::Read;
        let unreadable = |source: std::io::Error| OAuthError::JwksUnreadable {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut json = String::new();
        file.take(JWKS_BYTES_MAX + 1)
            .read_to_string(&mut json)
            .map_err(unreadable)?;
        if json.len() as u64 > JWKS_BYTES_MAX {
            return Err(OAuthError::JwksTooLarge {
                path: path.display().to_string(),
                max_bytes: JWKS_BYTES_MAX,
            });
        }
        JwtValidator::from_jwks_json(&json, settings)
    }

    /// How many keys of the set can verify tokens (the others were skipped).
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Validates `token` as of `now_unix_seconds`: header, key, signature, then claims, so
    /// nothing in an unverified payload decides which error is reported.
    pub fn validate(
        &self,
        token: &str,
        now_unix_seconds: u64,
    ) -> Result<ValidatedToken, OAuthError> {
        if token.len() > INITIAL_RESPONSE_BYTES_MAX {
            return Err(OAuthError::MalformedToken);
        }
        // Three non-empty sections, as Kafka's `SerializedJwt` requires: an unsigned token
        // ("h.p.") or an encrypted one (five sections) is refused here.
        let mut sections = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) = (
            sections.next(),
            sections.next(),
            sections.next(),
            sections.next(),
        ) else {
            return Err(OAuthError::MalformedToken);
        };
        if header.is_empty() || payload.is_empty() || signature.is_empty() {
            return Err(OAuthError::MalformedToken);
        }
        let header = decode_header(header)?;
        let alg = Algorithm::from_str(&header.alg)
            .ok()
            .filter(|&alg| self.allows(alg))
            .ok_or(OAuthError::AlgorithmNotAllowed)?;
        // RFC 7515 4.1.11: a recipient must refuse critical extensions it does not understand,
        // and this one understands none.
        if header.crit.is_some() {
            return Err(OAuthError::UnsupportedCriticalHeader);
        }
        let key = self.key_for(header.kid.as_deref(), alg)?;
        let claims = verified_claims(token, key, alg)?;
        self.check_claims(&claims, now_unix_seconds)
    }

    fn allows(&self, alg: Algorithm) -> bool {
        alg.family() != AlgorithmFamily::Hmac && self.settings.algorithms.contains(&alg)
    }

    fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<&VerificationKey, OAuthError> {
        match kid {
            Some(kid) => {
                let mut named = self
                    .keys
                    .iter()
                    .filter(|key| key.key_id.as_deref() == Some(kid))
                    .peekable();
                if named.peek().is_none() {
                    return Err(OAuthError::UnknownKeyId);
                }
                named
                    .find(|key| key.verifies(alg))
                    .ok_or(OAuthError::KeyAlgorithmMismatch)
            }
            None => {
                let mut fitting = self.keys.iter().filter(|key| key.verifies(alg));
                match (fitting.next(), fitting.next()) {
                    (Some(key), None) => Ok(key),
                    _ => Err(OAuthError::NoSingleKeyForAlgorithm),
                }
            }
        }
    }

    /// The checks `BrokerJwtValidator` asks of jose4j and then makes itself, with jose4j's
    /// clock-skew arithmetic: expired from `exp + skew` on, not valid before `nbf - skew`.
    fn check_claims(
        &self,
        claims: &Map<String, Value>,
        now: u64,
    ) -> Result<ValidatedToken, OAuthError> {
        let skew = self.settings.clock_skew_seconds;
        let exp = numeric_date(claims, "exp")?.ok_or(OAuthError::MissingExpiration)?;
        if now >= exp.saturating_add(skew) {
            return Err(OAuthError::Expired);
        }
        if let Some(nbf) = numeric_date(claims, "nbf")?
            && now.saturating_add(skew) < nbf
        {
            return Err(OAuthError::NotYetValid);
        }
        // Kafka requires `iat` (`setRequireIssuedAt`).
        let iat = numeric_date(claims, "iat")?.ok_or(OAuthError::MissingIssuedAt)?;
        if now.saturating_add(skew) < iat {
            return Err(OAuthError::IssuedInFuture);
        }
        if let Some(expected) = &self.settings.expected_issuer
            && claims.get("iss").and_then(Value::as_str) != Some(expected.as_str())
        {
            return Err(OAuthError::WrongIssuer);
        }
        if !self.settings.expected_audience.is_empty()
            && !audience_matches(claims.get("aud"), &self.settings.expected_audience)
        {
            return Err(OAuthError::WrongAudience);
        }
        Ok(ValidatedToken {
            principal_name: subject_of(claims, &self.settings.subject_claim)?,
            expires_at_unix_seconds: exp,
            scopes: scopes_of(claims, &self.settings.scope_claim)?,
        })
    }
}

fn decode_header(section: &str) -> Result<JoseHeader, OAuthError> {
    let json = URL_SAFE_NO_PAD
        .decode(section)
        .map_err(|_| OAuthError::MalformedToken)?;
    serde_json::from_slice(&json).map_err(|_| OAuthError::MalformedToken)
}

/// The token's claims once jsonwebtoken has checked its signature with `key`. jsonwebtoken's
/// own claim checks are off: it would read the system clock for `exp` and `nbf`, and the
/// checks here take the caller's `now` and give errors of their own.
fn verified_claims(
    token: &str,
    key: &VerificationKey,
    alg: Algorithm,
) -> Result<Map<String, Value>, OAuthError> {
    let mut validation = Validation::new(alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
        .map(|data| data.claims)
        .map_err(|error| match error.kind() {
            ErrorKind::InvalidSignature
            | ErrorKind::InvalidEcdsaKey
            | ErrorKind::InvalidEddsaKey
            | ErrorKind::InvalidRsaKey(_)
            | ErrorKind::InvalidKeyFormat => OAuthError::BadSignature,
            ErrorKind::InvalidAlgorithm
            | ErrorKind::MissingAlgorithm
            | ErrorKind::InvalidAlgorithmName => OAuthError::AlgorithmNotAllowed,
            // Base64, JSON and shape errors; their texts can quote the token, so none is kept.
            _ => OAuthError::MalformedToken,
        })
}

/// A NumericDate claim (RFC 7519 section 2) in whole seconds; absent or null is `None`.
fn numeric_date(claims: &Map<String, Value>, name: &str) -> Result<Option<u64>, OAuthError> {
    let malformed_claim = || OAuthError::MalformedClaim {
        claim: name.to_owned(),
    };
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => match (number.as_u64(), number.as_f64()) {
            (Some(seconds), _) => Ok(Some(seconds)),
            // Fractional seconds are allowed; like jose4j, keep the whole ones (`as`
            // saturates for values past u64).
            (None, Some(seconds)) if seconds.is_finite() && seconds >= 0.0 => {
                Ok(Some(seconds as u64))
            }
            _ => Err(malformed_claim()),
        },
        Some(_) => Err(malformed_claim()),
    }
}

fn audience_matches(aud: Option<&Value>, expected: &[String]) -> bool {
    let expected_one = |aud: &str| expected.iter().any(|e| e == aud);
    match aud {
        Some(Value::String(aud)) => expected_one(aud.as_str()),
        Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).any(expected_one),
        _ => false,
    }
}

/// The principal: the subject claim, a string not blank, trimmed (Kafka's
/// `validateClaimSubject`).
fn subject_of(claims: &Map<String, Value>, name: &str) -> Result<String, OAuthError> {
    match claims.get(name) {
        Some(Value::String(subject)) if !subject.trim().is_empty() => Ok(subject.trim().to_owned()),
        None | Some(Value::Null) | Some(Value::String(_)) => Err(OAuthError::MissingSubject {
            claim: name.to_owned(),
        }),
        Some(_) => Err(OAuthError::MalformedClaim {
            claim: name.to_owned(),
        }),
    }
}

/// The scopes, as Kafka's `validateScopes` wants them: none blank, none twice, each trimmed.
/// A claim that is neither a string nor an array gives no scopes, as in Kafka.
fn scopes_of(claims: &Map<String, Value>, name: &str) -> Result<Vec<String>, OAuthError> {
    let malformed_claim = || OAuthError::MalformedClaim {
        claim: name.to_owned(),
    };
    let raw: Vec<&str> = match claims.get(name) {
        // Kafka keeps a blank string whole, and then refuses it as a blank scope.
        Some(Value::String(scope)) if scope.trim().is_empty() => return Err(malformed_claim()),
        Some(Value::String(scope)) => scope.trim().split(' ').filter(|s| !s.is_empty()).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().ok_or_else(malformed_claim))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let mut seen = BTreeSet::new();
    let mut scopes = Vec::with_capacity(raw.len());
    for scope in raw {
        let scope = scope.trim();
        if scope.is_empty() || !seen.insert(scope) {
            return Err(malformed_claim());
        }
        scopes.push(scope.to_owned());
    }
    Ok(scopes)
}

/// The whole server side of an OAUTHBEARER exchange, which is one message: parses the
/// client's initial response, validates its token as of `now_unix_seconds`, and, as Kafka's
/// `OAuthBearerSaslServer` does, refuses an authorization id other than the token's principal.
///
/// Kafka answers a token it rejects with an RFC 7628 error challenge (`{"status":
/// "invalid_token"}`), waits for the client's `%x01`, then fails; failing at once with this
/// error's text in the SaslAuthenticate response is what clients see in the end either way.
pub fn authenticate(
    validator: &JwtValidator,
    client_initial_response: &[u8],
    now_unix_seconds: u64,
) -> Result<ValidatedToken, OAuthError> {
    let response = parse_client_initial_response(client_initial_response)?;
    let token = validator.validate(&response.token, now_unix_seconds)?;
    if let Some(requested) = &response.authorization_id
        && *requested != token.principal_name
    {
        return Err(OAuthError::AuthorizationIdMismatch);
    }
    Ok(token)
}

#[cfg(test)]
#[path = "oauthbearer_tests.rs"]
mod tests;
