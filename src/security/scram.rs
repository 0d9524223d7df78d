//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677): the server side of Kafka's SASL/SCRAM
//! exchange, as Apache Kafka's `ScramSaslServer` runs it. Pure: no I/O, no clock, no randomness.
//!
//! ```text
//!  client-first ──► ScramServer::client_first  ──► server-first   (AwaitingFinal)
//!  client-final ──► AwaitingFinal::client_final ──► server-final  (Authenticated)
//! ```
//!
//! The broker keeps, per user and mechanism, what Kafka keeps ([`ScramCredential`]): the salt,
//! StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword,
//! "Server Key") and the iteration count. Neither the password nor the salted password is
//! stored, so a copy of the store does not let anyone log in as a user; ServerKey does let an
//! impostor pass for the broker, which is why no `Debug` output or error shows a key.
//!
//! Invariants:
//! - Each state is a value the next step consumes, so a step cannot be skipped or run twice.
//! - The server nonce suffix comes from the caller, so an exchange is a function of its inputs.
//! - Every input is bounded ([`MESSAGE_BYTES_MAX`], [`USERNAME_BYTES_MAX`]) and no input can
//!   panic: parsing goes through `split`, `strip_prefix` and `get`, never an index.
//! - No error text holds a password, proof, salt or key, or echoes the client's bytes. An
//!   unknown user, a wrong password and a credential below the iteration minimum all read
//!   "Authentication failed: Invalid user credentials".
//!
//! Where this follows RFC 5802 rather than Kafka (no client in use sends anything these change):
//! - the gs2 flag `y` ("I could bind, you don't advertise it") is accepted; Kafka takes only `n`;
//! - client-final's `c=` must be the base64 of the gs2 header; Kafka decodes it and ignores it;
//! - a mandatory extension `m=` fails the exchange, as §5.1 requires; Kafka ignores it;
//! - AuthMessage is made of the bytes the client sent; Kafka re-serialises its parsed fields,
//!   which gives the same bytes unless a client sends extensions other than `tokenauth`;
//! - a username may be any UTF-8 but NUL; Kafka's pattern takes ASCII only;
//! - a foreign authzid is refused before the credential lookup: Kafka looks up first, so its
//!   answer tells a known user from an unknown one.
//!
//! Delegation tokens (`tokenauth=true`) are not supported and are refused.
//!
//! Like Kafka, an unknown user fails at client-first and a wrong password at client-final: the
//! text is the same but the step is not. RFC 5802 §9's remedy (a made-up salt for unknown users,
//! failing at the last step) needs a server secret to keep fake salts stable; not done here.

use std::fmt;
use std::num::NonZeroU32;

use aws_lc_rs::{constant_time, digest, hmac, pbkdf2};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// The longest client message accepted. Real ones are under 200 bytes; the bound keeps an
/// unauthenticated peer from making the broker parse, hash or keep more.
pub const MESSAGE_BYTES_MAX: usize = 4096;

/// The longest username accepted, in bytes after unescaping.
pub const USERNAME_BYTES_MAX: usize = 1024;

/// The two SCRAM mechanisms Kafka offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ScramMechanism {
    Sha256,
    Sha512,
}

impl ScramMechanism {
    pub const ALL: [ScramMechanism; 2] = [ScramMechanism::Sha256, ScramMechanism::Sha512];

    /// The most iterations AlterUserScramCredentials accepts (Kafka's `maxIterations`, the same
    /// for both mechanisms). The broker never runs them — the client does — so the bound
    /// protects clients from a credential that would take them minutes to use.
    pub const MAX_ITERATIONS: u32 = 16_384;

    /// The SASL mechanism name, as SaslHandshake and the JAAS configuration spell it.
    pub fn name(self) -> &'static str {
        match self {
            ScramMechanism::Sha256 => "SCRAM-SHA-256",
            ScramMechanism::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism of a SASL mechanism name; exact match, as Kafka's lookup is.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The mechanism code of Describe/AlterUserScramCredentials (0 is Kafka's UNKNOWN).
    pub fn code(self) -> i8 {
        match self {
            ScramMechanism::Sha256 => 1,
            ScramMechanism::Sha512 => 2,
        }
    }

    pub fn from_code(code: i8) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.code() == code)
    }

    /// The fewest iterations a credential may have, to be set and to be used (Kafka's 4096,
    /// RFC 7677's recommended minimum).
    pub fn min_iterations(self) -> u32 {
        4096
    }

    /// Whether AlterUserScramCredentials may set a credential with `iterations`.
    pub fn accepts_iterations(self, iterations: u32) -> bool {
        (self.min_iterations()..=Self::MAX_ITERATIONS).contains(&iterations)
    }

    /// Bytes of H(), HMAC() and so of every key and proof.
    pub fn output_len(self) -> usize {
        match self {
            ScramMechanism::Sha256 => digest::SHA256_OUTPUT_LEN,
            ScramMechanism::Sha512 => digest::SHA512_OUTPUT_LEN,
        }
    }

    fn digest_algorithm(self) -> &'static digest::Algorithm {
        self.hmac_algorithm().digest_algorithm()
    }

    fn hmac_algorithm(self) -> hmac::Algorithm {
        match self {
            ScramMechanism::Sha256 => hmac::HMAC_SHA256,
            ScramMechanism::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn pbkdf2_algorithm(self) -> pbkdf2::Algorithm {
        match self {
            ScramMechanism::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramMechanism::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }
}

/// What the broker keeps to authenticate one user with one mechanism (Kafka's
/// `ScramCredential`). Replicated, so it must stay a plain value.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScramCredential {
    pub salt: Vec<u8>,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
    pub iterations: u32,
}

impl ScramCredential {
    /// The credential for `password`. Kafka applies no SASLprep: the password's bytes (UTF-8,
    /// as the client sends them) go into Hi() as they are.
    ///
    /// `iterations` is the caller's to check ([`ScramMechanism::accepts_iterations`]); zero is
    /// derived as one, and such a credential is refused at client-first anyway.
    pub fn from_password(
        mechanism: ScramMechanism,
        password: &[u8],
        salt: &[u8],
        iterations: u32,
    ) -> ScramCredential {
        let rounds = NonZeroU32::new(iterations).unwrap_or(NonZeroU32::MIN);
        let salted = salted_password(mechanism, password, salt, rounds);
        Self::from_salted_password(mechanism, &salted, salt, iterations)
    }

    /// The credential for a salted password (Hi(password, salt, iterations)), which is what
    /// AlterUserScramCredentials carries: the client salts, so the password never reaches the
    /// broker.
    pub fn from_salted_password(
        mechanism: ScramMechanism,
        salted_password: &[u8],
        salt: &[u8],
        iterations: u32,
    ) -> ScramCredential {
        let client_key = hmac_of(mechanism, salted_password, b"Client Key");
        let stored_key = digest::digest(mechanism.digest_algorithm(), client_key.as_ref());
        let server_key = hmac_of(mechanism, salted_password, b"Server Key");
        ScramCredential {
            salt: salt.to_vec(),
            stored_key: <[u8]>::to_vec(stored_key.as_ref()),
            server_key: <[u8]>::to_vec(server_key.as_ref()),
            iterations,
        }
    }
}

/// Shows the shape, never the keys: a credential ends up in logs through the types that hold it.
impl fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramCredential")
            .field("salt_len", &self.salt.len())
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// Why an exchange failed. Every text is safe to send to the unauthenticated client; see
/// [`ScramError::kafka_client_message`] for the text Kafka's broker actually sends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramError {
    #[error("Invalid SCRAM client message: {bytes} bytes is over the limit of {max}")]
    TooLong { bytes: usize, max: usize },
    #[error("Invalid SCRAM client first message format: {0}")]
    InvalidClientFirst(&'static str),
    #[error(
        "Invalid SCRAM client first message format: a username of {bytes} bytes is over the \
         limit of {max}"
    )]
    UsernameTooLong { bytes: usize, max: usize },
    #[error("Authentication failed: SCRAM channel binding is not supported")]
    ChannelBindingUnsupported,
    #[error("Authentication failed: delegation token authentication (tokenauth) is not supported")]
    TokenAuthUnsupported,
    #[error(
        "Authentication failed: Client requested an authorization id that is different from \
         username"
    )]
    AuthorizationIdMismatch,
    /// No credential for the user with this mechanism. Reads as `WrongPassword` on purpose.
    #[error("Authentication failed: Invalid user credentials")]
    UnknownUser,
    /// The stored credential is below the mechanism's minimum (Kafka refuses to use it). Reads
    /// as `WrongPassword` on purpose: the client must not learn that the user exists.
    #[error("Authentication failed: Invalid user credentials")]
    TooFewIterations { iterations: u32, minimum: u32 },
    #[error("Invalid SCRAM client final message format: {0}")]
    InvalidClientFinal(&'static str),
    #[error("Invalid channel binding in the final client message.")]
    ChannelBindingMismatch,
    #[error("Invalid client nonce in the final client message.")]
    NonceMismatch,
    /// The proof does not match the stored credential.
    #[error("Authentication failed: Invalid user credentials")]
    WrongPassword,
    /// The caller's nonce suffix is empty or not printable: a broker bug, not the client's.
    #[error("Authentication failed: Credentials could not be obtained")]
    InvalidServerNonce,
}

impl ScramError {
    /// The text Apache Kafka's broker puts in the SaslAuthenticate response for this failure.
    /// Its `SaslServerAuthenticator` forwards the message of a `SaslAuthenticationException`
    /// (only the authzid refusal, in `ScramSaslServer`) and replaces every other with one
    /// generic sentence, so that nothing about the user leaks.
    pub fn kafka_client_message(
        &self,
        mechanism: ScramMechanism,
        reauthentication: bool,
    ) -> String {
        match self {
            ScramError::AuthorizationIdMismatch => self.to_string(),
            ScramError::TooLong { .. }
            | ScramError::InvalidClientFirst(_)
            | ScramError::UsernameTooLong { .. }
            | ScramError::ChannelBindingUnsupported
            | ScramError::TokenAuthUnsupported
            | ScramError::UnknownUser
            | ScramError::TooFewIterations { .. }
            | ScramError::InvalidClientFinal(_)
            | ScramError::ChannelBindingMismatch
            | ScramError::NonceMismatch
            | ScramError::WrongPassword
            | ScramError::InvalidServerNonce => {
                let phase = if reauthentication {
                    "re-authentication"
                } else {
                    "authentication"
                };
                format!(
                    "Authentication failed during {phase} due to invalid credentials with SASL \
                     mechanism {}",
                    mechanism.name()
                )
            }
        }
    }
}

/// An exchange waiting for the client-first message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScramServer {
    mechanism: ScramMechanism,
}

impl ScramServer {
    pub fn new(mechanism: ScramMechanism) -> Self {
        ScramServer { mechanism }
    }

    pub fn mechanism(&self) -> ScramMechanism {
        self.mechanism
    }

    /// Answers the client-first message with the server-first message: the client's nonce
    /// extended by `nonce_suffix`, the user's salt and iteration count. `lookup` maps the
    /// username to its credential for this mechanism; it runs only once the message is known
    /// to be well formed.
    ///
    /// `nonce_suffix` must be unpredictable (Kafka uses 130 bits from `SecureRandom`) and
    /// printable ASCII without ','.
    pub fn client_first(
        self,
        message: &[u8],
        nonce_suffix: &str,
        lookup: impl FnOnce(&str) -> Option<ScramCredential>,
    ) -> Result<(Vec<u8>, AwaitingFinal), ScramError> {
        if !is_printable(nonce_suffix) {
            return Err(ScramError::InvalidServerNonce);
        }
        let text = message_text(message, ScramError::InvalidClientFirst)?;
        let first = ClientFirst::parse(text)?;
        if first.token_auth {
            return Err(ScramError::TokenAuthUnsupported);
        }
        if first
            .authzid
            .as_ref()
            .is_some_and(|id| *id != first.username)
        {
            return Err(ScramError::AuthorizationIdMismatch);
        }
        let credential = lookup(first.username.as_str()).ok_or(ScramError::UnknownUser)?;
        let minimum = self.mechanism.min_iterations();
        if credential.iterations < minimum {
            return Err(ScramError::TooFewIterations {
                iterations: credential.iterations,
                minimum,
            });
        }
        let nonce = format!("{}{nonce_suffix}", first.nonce);
        let server_first = format!(
            "r={nonce},s={},i={}",
            STANDARD.encode(&credential.salt),
            credential.iterations
        );
        let awaiting = AwaitingFinal {
            mechanism: self.mechanism,
            username: first.username,
            credential,
            gs2_header: first.gs2_header.to_owned(),
            nonce,
            client_first_bare: first.bare.to_owned(),
            server_first: server_first.clone(),
        };
        Ok((server_first.into_bytes(), awaiting))
    }
}

/// An exchange that has sent server-first and waits for the client's proof.
#[derive(Debug, Clone)]
pub struct AwaitingFinal {
    mechanism: ScramMechanism,
    username: String,
    credential: ScramCredential,
    gs2_header: String,
    /// Client nonce followed by server nonce suffix.
    nonce: String,
    client_first_bare: String,
    server_first: String,
}

impl AwaitingFinal {
    /// The user the client claims to be; not authenticated yet.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// Checks the client's proof and answers with the server-final message, which proves to
    /// the client that the broker holds its credential.
    pub fn client_final(self, message: &[u8]) -> Result<(Vec<u8>, Authenticated), ScramError> {
        let malformed = ScramError::InvalidClientFinal;
        let text = message_text(message, malformed)?;
        // The proof is the last attribute and base64 has no ',': everything before the last
        // ',' is client-final-message-without-proof, part of AuthMessage as sent.
        let (without_proof, proof_field) = text.rsplit_once(',').ok_or(malformed("no proof"))?;
        let proof_base64 = proof_field
            .strip_prefix("p=")
            .ok_or(malformed("no proof"))?;
        let mut fields = without_proof.split(',');
        let channel_base64 = fields
            .next()
            .and_then(|field| field.strip_prefix("c="))
            .ok_or(malformed("no channel binding"))?;
        let nonce = fields
            .next()
            .and_then(|field| field.strip_prefix("r="))
            .ok_or(malformed("no nonce"))?;
        for field in fields {
            extension(field).ok_or(malformed("an extension is not key=value"))?;
        }
        let channel = STANDARD
            .decode(channel_base64)
            .map_err(|_| malformed("channel binding is not base64"))?;
        let proof = STANDARD
            .decode(proof_base64)
            .map_err(|_| malformed("proof is not base64"))?;
        if channel != self.gs2_header.as_bytes() {
            return Err(ScramError::ChannelBindingMismatch);
        }
        if nonce != self.nonce {
            return Err(ScramError::NonceMismatch);
        }
        if proof.len() != self.mechanism.output_len() {
            return Err(malformed("proof has the wrong length"));
        }
        let auth_message = format!(
            "{},{},{without_proof}",
            self.client_first_bare, self.server_first
        );
        let client_signature = hmac_of(
            self.mechanism,
            &self.credential.stored_key,
            auth_message.as_bytes(),
        );
        let client_key = xor(&proof, client_signature.as_ref());
        let computed_stored_key = digest::digest(self.mechanism.digest_algorithm(), &client_key);
        constant_time::verify_slices_are_equal(
            computed_stored_key.as_ref(),
            &self.credential.stored_key,
        )
        .map_err(|_| ScramError::WrongPassword)?;
        let server_signature = hmac_of(
            self.mechanism,
            &self.credential.server_key,
            auth_message.as_bytes(),
        );
        let server_final = format!("v={}", STANDARD.encode(server_signature));
        Ok((
            server_final.into_bytes(),
            Authenticated {
                username: self.username,
            },
        ))
    }
}

/// A finished exchange: the client holds the password of `username`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub username: String,
}

/// client-first-message, borrowed from the bytes the client sent.
struct ClientFirst<'a> {
    /// `n,,`, `y,,` or with an authzid: repeated, base64, in client-final's `c=`.
    gs2_header: &'a str,
    authzid: Option<String>,
    username: String,
    nonce: &'a str,
    /// client-first-message-bare, part of AuthMessage as sent.
    bare: &'a str,
    token_auth: bool,
}

impl<'a> ClientFirst<'a> {
    /// gs2-header [reserved-mext ","] username "," nonce ["," extensions]
    fn parse(text: &'a str) -> Result<Self, ScramError> {
        let malformed = ScramError::InvalidClientFirst;
        let (flag, rest) = text.split_once(',').ok_or(malformed("no gs2 header"))?;
        match flag {
            "n" | "y" => {}
            _ if flag.starts_with("p=") => return Err(ScramError::ChannelBindingUnsupported),
            _ => return Err(malformed("unknown channel binding flag")),
        }
        let (authzid_field, bare) = rest.split_once(',').ok_or(malformed("no gs2 header"))?;
        let authzid = match authzid_field {
            "" => None,
            field => Some(
                field
                    .strip_prefix("a=")
                    .and_then(unescape_sasl_name)
                    .ok_or(malformed("invalid authorization id"))?,
            ),
        };
        // Both separators are ASCII, so this length is a char boundary.
        let gs2_header = text
            .get(..flag.len() + authzid_field.len() + 2)
            .ok_or(malformed("no gs2 header"))?;

        let mut fields = bare.split(',');
        let user_field = fields.next().ok_or(malformed("no username"))?;
        if user_field.starts_with("m=") {
            return Err(malformed("mandatory extensions are not supported"));
        }
        let username = user_field
            .strip_prefix("n=")
            .and_then(unescape_sasl_name)
            .ok_or(malformed("invalid username"))?;
        if username.len() > USERNAME_BYTES_MAX {
            return Err(ScramError::UsernameTooLong {
                bytes: username.len(),
                max: USERNAME_BYTES_MAX,
            });
        }
        let nonce = fields
            .next()
            .and_then(|field| field.strip_prefix("r="))
            .ok_or(malformed("no nonce"))?;
        if !is_printable(nonce) {
            return Err(malformed("nonce is empty or not printable"));
        }
        let mut token_auth = false;
        for field in fields {
            let (key, value) =
                extension(field).ok_or(malformed("an extension is not key=value"))?;
            // Kafka reads the flag with Java's `Boolean.parseBoolean`: "true" in any case.
            token_auth |= key == "tokenauth" && value.eq_ignore_ascii_case("true");
        }
        Ok(ClientFirst {
            gs2_header,
            authzid,
            username,
            nonce,
            bare,
            token_auth,
        })
    }
}

/// The message as text, once it is known to be small enough and UTF-8.
fn message_text(
    message: &[u8],
    malformed: fn(&'static str) -> ScramError,
) -> Result<&str, ScramError> {
    if message.len() > MESSAGE_BYTES_MAX {
        return Err(ScramError::TooLong {
            bytes: message.len(),
            max: MESSAGE_BYTES_MAX,
        });
    }
    std::str::from_utf8(message).map_err(|_| malformed("not UTF-8"))
}

/// A nonce: one or more printable ASCII characters other than ',' (RFC 5802 `printable`).
fn is_printable(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
}

/// An extension attribute `key=value` (Kafka's `[A-Za-z]+=[^,]+`; the ',' is split off
/// already), without NUL.
fn extension(field: &str) -> Option<(&str, &str)> {
    let (key, value) = field.split_once('=')?;
    let key_ok = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphabetic());
    let value_ok = !value.is_empty() && !value.contains('\0');
    (key_ok && value_ok).then_some((key, value))
}

/// A saslname with `=2C` and `=3D` decoded to ',' and '='; `None` for an empty name, NUL, or
/// any other '='.
fn unescape_sasl_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mut username = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find(['=', '\0']) {
        let (plain, escape) = rest.split_at_checked(at)?;
        username.push_str(plain);
        if let Some(after) = escape.strip_prefix("=2C") {
            username.push(',');
            rest = after;
        } else if let Some(after) = escape.strip_prefix("=3D") {
            username.push('=');
            rest = after;
        } else {
            return None;
        }
    }
    username.push_str(rest);
    Some(username)
}

/// `left ^ right`, byte by byte; the caller has checked that the lengths match.
fn xor(left: &[u8], right: &[u8]) -> Vec<u8> {
    left.iter().zip(right).map(|(l, r)| l ^ r).collect()
}

fn hmac_of(mechanism: ScramMechanism, key: &[u8], data: &[u8]) -> hmac::Tag {
    hmac::sign(&hmac::Key::new(mechanism.hmac_algorithm(), key), data)
}

/// Hi(password, salt, iterations) of RFC 5802, which is PBKDF2 with HMAC as the PRF and one
/// output block.
fn salted_password(
    mechanism: ScramMechanism,
    password: &[u8],
    salt: &[u8],
    iterations: NonZeroU32,
) -> Vec<u8> {
    let mut salted = vec![0; mechanism.output_len()];
    pbkdf2::derive(
        mechanism.pbkdf2_algorithm(),
        iterations,
        salt,
        password,
        &mut salted,
    );
    salted
}

/// The client side, for tests here and in the handlers: what librdkafka and the Java client send.
#[cfg(test)]
pub(crate) struct ScramClient {
    mechanism: ScramMechanism,
    username: String,
    password: Vec<u8>,
    nonce: String,
}

#[cfg(test)]
impl ScramClient {
    pub(crate) fn new(
        mechanism: ScramMechanism,
        username: &str,
        password: &[u8],
        nonce: &str,
    ) -> Self {
        ScramClient {
            mechanism,
            username: username.to_owned(),
            password: password.to_vec(),
            nonce: nonce.to_owned(),
        }
    }

    fn first_bare(&self) -> String {
        let sasl_name = self.username.replace('=', "=3D").replace(',', "=2C");
        format!("n={sasl_name},r={}", self.nonce)
    }

    pub(crate) fn client_first(&self) -> Vec<u8> {
        format!("n,,{}", self.first_bare()).into_bytes()
    }

    /// The client-final message answering `server_first`, and the server-final message a
    /// server holding the credential must send back.
    pub(crate) fn client_final(&self, server_first: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let server_first = std::str::from_utf8(server_first).expect("server-first is UTF-8");
        let mut fields = server_first.split(',');
        let mut field = |prefix: &str| {
            fields
                .next()
                .and_then(|f| f.strip_prefix(prefix))
                .expect("server-first has r=, s= and i=")
                .to_owned()
        };
        let nonce = field("r=");
        let salt = STANDARD.decode(field("s=")).expect("the salt is base64");
        let iterations: NonZeroU32 = field("i=").parse().expect("iterations are a number");
        assert!(
            nonce.starts_with(&self.nonce),
            "the server nonce extends the client's"
        );
        let salted = salted_password(self.mechanism, &self.password, &salt, iterations);
        let client_key = hmac_of(self.mechanism, &salted, b"Client Key");
        let stored_key = digest::digest(self.mechanism.digest_algorithm(), client_key.as_ref());
        let without_proof = format!("c={},r={nonce}", STANDARD.encode("n,,"));
        let auth_message = format!("{},{server_first},{without_proof}", self.first_bare());
        let signature = hmac_of(self.mechanism, stored_key.as_ref(), auth_message.as_bytes());
        let proof = xor(client_key.as_ref(), signature.as_ref());
        let server_key = hmac_of(self.mechanism, &salted, b"Server Key");
        let server_signature =
            hmac_of(self.mechanism, server_key.as_ref(), auth_message.as_bytes());
        (
            format!("{without_proof},p={}", STANDARD.encode(proof)).into_bytes(),
            format!("v={}", STANDARD.encode(server_signature)).into_bytes(),
        )
    }
}

/// One whole exchange between [`ScramClient`] and [`ScramServer`]; also checks the server's
/// signature, as a client does.
#[cfg(test)]
pub(crate) fn exchange(
    mechanism: ScramMechanism,
    username: &str,
    password: &[u8],
    lookup: impl FnOnce(&str) -> Option<ScramCredential>,
) -> Result<Authenticated, ScramError> {
    let client = ScramClient::new(mechanism, username, password, "fyko+d2lbbFgONRv9qkxdawL");
    let (server_first, awaiting) = ScramServer::new(mechanism).client_first(
        &client.client_first(),
        "3rfcNHYJY1ZVvWVs7j",
        lookup,
    )?;
    let (client_final, expected_server_final) = client.client_final(&server_first);
    let (server_final, authenticated) = awaiting.client_final(&client_final)?;
    assert_eq!(
        server_final, expected_server_final,
        "the server proves it holds the credential"
    );
    Ok(authenticated)
}

#[cfg(test)]
#[path = "scram_tests.rs"]
mod tests;
