//! Who may speak on the internal listener: every Raft RPC, forwarded write, learner join and
//! forwarded Kafka request carries an HMAC-SHA256 over what it says, keyed by the cluster's
//! shared secret (`--cluster-secret-file`), and the cluster id its sender knows.
//!
//! ```text
//! sender:   x-floe-cluster: <id or "-">   x-floe-time: <unix ms>   x-floe-nonce: <random hex>
//!           x-floe-signature: hex(HMAC(secret, "POST\n<path?query>\n<cluster>\n<time>\n<nonce>\n" ‖ SHA-256(body)))
//! receiver: signature equal (constant time) · |now − time| ≤ SKEW_MAX · not seen before ·
//!           cluster id equal when both sides know one  → serve;  otherwise 401, logged, counted
//! ```
//!
//! Why an HMAC rather than mutual TLS: every node already has to be given something secret to
//! join; a single shared secret is one file to distribute and rotate, needs no certificate
//! authority, and costs one hash per request. What it does not give is confidentiality: the
//! internal traffic (metadata, not record data) is readable by whoever can watch the network,
//! so the internal listener belongs on a private network. A captured request cannot be
//! replayed: its signature is remembered for the skew window and refused a second time.
//!
//! Without a secret the internal listener must be on a loopback address (`Config::validate`):
//! a node that other machines can reach never serves unauthenticated cluster traffic.

use crate::clock::Clock;
use aws_lc_rs::{constant_time, digest, hmac};
use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

pub const CLUSTER_HEADER: &str = "x-floe-cluster";
pub const TIME_HEADER: &str = "x-floe-time";
pub const SIGNATURE_HEADER: &str = "x-floe-signature";
/// Random per request, so two identical requests in one millisecond are not a replay.
pub const NONCE_HEADER: &str = "x-floe-nonce";
/// Request bytes the gate holds before their signatures are checked, across connections:
/// an unauthenticated peer can make it buffer no more than this.
const UNVERIFIED_BYTES_MAX: usize = 256 * 1024 * 1024;

/// How far a request's time may be from the receiver's clock (both ways).
pub const SKEW_MAX: Duration = Duration::from_secs(120);
/// Signatures remembered against replay; past it the oldest are forgotten early.
const REMEMBERED_MAX: usize = 1_000_000;
/// The shortest secret accepted: 128 bits, as a random hex or base64 string is longer.
pub const SECRET_BYTES_MIN: usize = 16;
/// At most one refusal is logged per this interval (each is counted).
const LOG_EVERY_MS: i64 = 10_000;

/// The cluster's shared secret. Never printed.
#[derive(Clone)]
pub struct ClusterSecret(hmac::Key);

impl std::fmt::Debug for ClusterSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterSecret(..)")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("cannot read the cluster secret file {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the cluster secret in {path} is {len} bytes; at least {SECRET_BYTES_MIN} are needed")]
    TooShort { path: String, len: usize },
}

impl ClusterSecret {
    pub fn new(secret: &[u8]) -> ClusterSecret {
        ClusterSecret(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// Reads the secret from a file; surrounding whitespace (a trailing newline) is not part
    /// of it.
    pub fn from_file(path: &std::path::Path) -> Result<ClusterSecret, SecretError> {
        let text = std::fs::read(path).map_err(|source| SecretError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let secret = text.trim_ascii();
        if secret.len() < SECRET_BYTES_MIN {
            return Err(SecretError::TooShort {
                path: path.display().to_string(),
                len: secret.len(),
            });
        }
        Ok(ClusterSecret::new(secret))
    }
}

/// What a signed request says about itself.
#[derive(Debug, Clone, Copy)]
pub struct Signed<'a> {
    pub cluster: Option<&'a str>,
    pub time_ms: i64,
    pub nonce: &'a str,
    pub signature: &'a str,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the request is not signed with the cluster secret")]
    Unsigned,
    #[error("the request's signature does not match (another cluster's secret, or altered)")]
    BadSignature,
    #[error("the request's time is {skew_ms} ms from this node's clock (at most {} s allowed)", SKEW_MAX.as_secs())]
    Stale { skew_ms: i64 },
    #[error("the request was already served once (a replay)")]
    Replayed,
    #[error("the request comes from cluster {theirs}; this is cluster {ours}")]
    OtherCluster { theirs: String, ours: String },
}

/// The HMAC of a request (pure).
#[allow(clippy::too_many_arguments)]
pub fn signature(
    secret: &ClusterSecret,
    method: &str,
    path_and_query: &str,
    cluster: Option<&str>,
    time_ms: i64,
    nonce: &str,
    body: &[u8],
) -> String {
    let body_hash = digest::digest(&digest::SHA256, body);
    let mut context = hmac::Context::with_key(&secret.0);
    let head = format!(
        "{method}\n{path_and_query}\n{}\n{time_ms}\n{nonce}\n",
        cluster.unwrap_or("-")
    );
    context.update(head.as_bytes());
    context.update(body_hash.as_ref());
    hex(context.sign().as_ref())
}

/// Checks a request's signature, time and cluster (pure; replay is `ClusterAuth`'s).
#[allow(clippy::too_many_arguments)]
pub fn check(
    secret: &ClusterSecret,
    signed: Signed<'_>,
    method: &str,
    path_and_query: &str,
    body: &[u8],
    now_ms: i64,
    own_cluster: Option<&str>,
) -> Result<(), Refusal> {
    let expected = signature(
        secret,
        method,
        path_and_query,
        signed.cluster,
        signed.time_ms,
        signed.nonce,
        body,
    );
    if constant_time::verify_slices_are_equal(expected.as_bytes(), signed.signature.as_bytes())
        .is_err()
    {
        return Err(Refusal::BadSignature);
    }
    let skew_ms = now_ms.saturating_sub(signed.time_ms);
    if skew_ms.unsigned_abs() > SKEW_MAX.as_millis() as u64 {
        return Err(Refusal::Stale { skew_ms });
    }
    if let (Some(theirs), Some(ours)) = (signed.cluster, own_cluster)
        && theirs != ours
    {
        return Err(Refusal::OtherCluster {
            theirs: theirs.to_string(),
            ours: ours.to_string(),
        });
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// Signatures served within the skew window, oldest first.
#[derive(Default)]
struct Remembered {
    order: VecDeque<(i64, String)>,
    seen: HashSet<String>,
}

impl Remembered {
    /// Records `signature`; false when it was already there (a replay).
    fn first_time(&mut self, signature: &str, now_ms: i64) -> bool {
        let horizon = now_ms - 2 * SKEW_MAX.as_millis() as i64;
        while let Some((at, _)) = self.order.front() {
            if *at >= horizon && self.order.len() < REMEMBERED_MAX {
                break;
            }
            if let Some((_, old)) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        if !self.seen.insert(signature.to_string()) {
            return false;
        }
        self.order.push_back((now_ms, signature.to_string()));
        true
    }
}

/// A node's side of cluster authentication: signs what it sends, checks what it receives.
pub struct ClusterAuth {
    secret: Option<ClusterSecret>,
    /// The cluster id this node knows (from its copy of the state), once it knows one.
    cluster_id: Box<dyn Fn() -> Option<String> + Send + Sync>,
    clock: Clock,
    remembered: Mutex<Remembered>,
    refused: AtomicU64,
    last_logged_ms: AtomicI64,
    /// The largest body the gate reads (the listener's own limit).
    pub body_bytes_max: usize,
    /// Bytes of bodies being read whose signature is not checked yet (KiB permits).
    unverified: tokio::sync::Semaphore,
}

impl std::fmt::Debug for ClusterAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterAuth")
            .field("signed", &self.secret.is_some())
            .finish()
    }
}

impl ClusterAuth {
    pub fn new(
        secret: Option<ClusterSecret>,
        cluster_id: Box<dyn Fn() -> Option<String> + Send + Sync>,
        clock: Clock,
    ) -> ClusterAuth {
        ClusterAuth {
            secret,
            cluster_id,
            clock,
            remembered: Mutex::default(),
            refused: AtomicU64::new(0),
            last_logged_ms: AtomicI64::new(i64::MIN),
            body_bytes_max: 64 * 1024 * 1024,
            unverified: tokio::sync::Semaphore::new(UNVERIFIED_BYTES_MAX / 1024),
        }
    }

    /// No secret: nothing is signed or checked (a loopback-only internal listener).
    pub fn open(clock: Clock) -> ClusterAuth {
        ClusterAuth::new(None, Box::new(|| None), clock)
    }

    pub fn is_signed(&self) -> bool {
        self.secret.is_some()
    }

    /// Requests refused so far.
    pub fn refused_total(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// The headers to send with a POST of `body` to `path_and_query`.
    pub fn headers(&self, path_and_query: &str, body: &[u8]) -> Vec<(&'static str, String)> {
        let Some(secret) = &self.secret else {
            return Vec::new();
        };
        let cluster = (self.cluster_id)();
        let time_ms = self.clock.now_ms();
        let mut random = [0u8; 8];
        // A failed draw leaves zeros: the request may then be taken for a replay of one sent
        // in the same millisecond, and is retried like any refused RPC.
        let _ = aws_lc_rs::rand::fill(&mut random);
        let nonce = hex(&random);
        let signature = signature(
            secret,
            "POST",
            path_and_query,
            cluster.as_deref(),
            time_ms,
            &nonce,
            body,
        );
        vec![
            (CLUSTER_HEADER, cluster.unwrap_or_else(|| "-".into())),
            (TIME_HEADER, time_ms.to_string()),
            (NONCE_HEADER, nonce),
            (SIGNATURE_HEADER, signature),
        ]
    }

    /// Checks a received request; a refusal is counted and (at most every few seconds) logged.
    pub fn verify(
        &self,
        header: impl Fn(&str) -> Option<String>,
        method: &str,
        path_and_query: &str,
        body: &[u8],
        peer: &str,
    ) -> Result<(), Refusal> {
        let Some(secret) = &self.secret else {
            return Ok(());
        };
        let result = self.verify_signed(secret, header, method, path_and_query, body);
        if let Err(refusal) = &result {
            self.refused.fetch_add(1, Ordering::Relaxed);
            let now = self.clock.now_ms();
            let last = self.last_logged_ms.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= LOG_EVERY_MS
                && self
                    .last_logged_ms
                    .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                tracing::warn!(%peer, path = path_and_query, %refusal, refused_total = self.refused_total(), "refused a request on the internal listener");
            }
        }
        result
    }

    fn verify_signed(
        &self,
        secret: &ClusterSecret,
        header: impl Fn(&str) -> Option<String>,
        method: &str,
        path_and_query: &str,
        body: &[u8],
    ) -> Result<(), Refusal> {
        let (Some(cluster), Some(time), Some(nonce), Some(signature)) = (
            header(CLUSTER_HEADER),
            header(TIME_HEADER),
            header(NONCE_HEADER),
            header(SIGNATURE_HEADER),
        ) else {
            return Err(Refusal::Unsigned);
        };
        let time_ms = time.parse::<i64>().map_err(|_| Refusal::Unsigned)?;
        let signed = Signed {
            cluster: (cluster != "-").then_some(cluster.as_str()),
            time_ms,
            nonce: &nonce,
            signature: &signature,
        };
        let now = self.clock.now_ms();
        let own = (self.cluster_id)();
        check(
            secret,
            signed,
            method,
            path_and_query,
            body,
            now,
            own.as_deref(),
        )?;
        let mut remembered = self
            .remembered
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !remembered.first_time(&signature, now) {
            return Err(Refusal::Replayed);
        }
        Ok(())
    }
}

/// The internal listener's gate: an axum middleware that refuses, with 401 and before any
/// handler runs, every request `ClusterAuth::verify` refuses.
pub async fn gate(
    axum::extract::State(auth): axum::extract::State<std::sync::Arc<ClusterAuth>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if !auth.is_signed() {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    // Before any body is read: a request without a signature is refused at once, and a body
    // is read only within the budget of unverified bytes (its declared length, bounded).
    if parts.headers.get(SIGNATURE_HEADER).is_none() {
        let _ = auth.verify(
            |_| None,
            parts.method.as_str(),
            &path,
            b"",
            &peer.to_string(),
        );
        return (
            axum::http::StatusCode::UNAUTHORIZED,
            format!("{}\n", Refusal::Unsigned),
        )
            .into_response();
    }
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let Some(declared) = declared.filter(|len| *len <= auth.body_bytes_max) else {
        return (
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "a body needs a Content-Length within the limit\n",
        )
            .into_response();
    };
    let kib = u32::try_from(declared.div_ceil(1024).max(1)).unwrap_or(u32::MAX);
    let Ok(_held) = auth.unverified.try_acquire_many(kib) else {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "too many unverified bytes in flight\n",
        )
            .into_response();
    };
    let Ok(bytes) = axum::body::to_bytes(body, declared).await else {
        return (
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "body too large\n",
        )
            .into_response();
    };
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    if let Err(refusal) = auth.verify(
        header,
        parts.method.as_str(),
        &path,
        &bytes,
        &peer.to_string(),
    ) {
        return (axum::http::StatusCode::UNAUTHORIZED, format!("{refusal}\n")).into_response();
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret() -> ClusterSecret {
        ClusterSecret::new(b"0123456789abcdef0123456789abcdef")
    }

    fn signed(sig: &str, time_ms: i64) -> Signed<'_> {
        Signed {
            cluster: Some("c1"),
            time_ms,
            nonce: "n",
            signature: sig,
        }
    }

    #[test]
    fn a_signed_request_passes_and_any_change_fails() {
        let s = secret();
        let sig = signature(&s, "POST", "/raft/append", Some("c1"), 1_000, "n", b"body");
        let ok = check(
            &s,
            signed(&sig, 1_000),
            "POST",
            "/raft/append",
            b"body",
            1_000,
            Some("c1"),
        );
        assert_eq!(ok, Ok(()));
        for (path, body) in [("/raft/vote", &b"body"[..]), ("/raft/append", b"bodY")] {
            let r = check(
                &s,
                signed(&sig, 1_000),
                "POST",
                path,
                body,
                1_000,
                Some("c1"),
            );
            assert_eq!(r, Err(Refusal::BadSignature));
        }
        let other = ClusterSecret::new(b"another cluster's secret, long enough");
        let r = check(
            &other,
            signed(&sig, 1_000),
            "POST",
            "/raft/append",
            b"body",
            1_000,
            None,
        );
        assert_eq!(r, Err(Refusal::BadSignature));
        // The time is signed too: moving it breaks the signature.
        let r = check(
            &s,
            signed(&sig, 1_001),
            "POST",
            "/raft/append",
            b"body",
            1_000,
            None,
        );
        assert_eq!(r, Err(Refusal::BadSignature));
    }

    #[test]
    fn stale_and_foreign_requests_are_refused() {
        let s = secret();
        let skew = SKEW_MAX.as_millis() as i64;
        let sig = signature(&s, "POST", "/p", Some("c1"), 0, "n", b"");
        let late = check(&s, signed(&sig, 0), "POST", "/p", b"", skew + 1, None);
        assert_eq!(late, Err(Refusal::Stale { skew_ms: skew + 1 }));
        let early = check(&s, signed(&sig, 0), "POST", "/p", b"", -skew - 1, None);
        assert_eq!(early, Err(Refusal::Stale { skew_ms: -skew - 1 }));
        let foreign = check(&s, signed(&sig, 0), "POST", "/p", b"", 0, Some("c2"));
        assert!(matches!(foreign, Err(Refusal::OtherCluster { .. })));
        // A sender that does not know the cluster yet (a node joining) is not refused for it.
        let sig = signature(&s, "POST", "/p", None, 0, "n", b"");
        let joining = Signed {
            cluster: None,
            time_ms: 0,
            nonce: "n",
            signature: &sig,
        };
        assert_eq!(check(&s, joining, "POST", "/p", b"", 0, Some("c2")), Ok(()));
    }

    #[test]
    fn a_replay_is_refused_and_unsigned_requests_too() {
        let auth = ClusterAuth::new(
            Some(secret()),
            Box::new(|| Some("c1".to_string())),
            Clock::system(),
        );
        let headers: std::collections::HashMap<&str, String> =
            auth.headers("/raft/write", b"x").into_iter().collect();
        let header = |name: &str| headers.get(name).cloned();
        assert_eq!(
            auth.verify(header, "POST", "/raft/write", b"x", "peer"),
            Ok(())
        );
        assert_eq!(
            auth.verify(header, "POST", "/raft/write", b"x", "peer"),
            Err(Refusal::Replayed)
        );
        assert_eq!(
            auth.verify(|_| None, "POST", "/raft/write", b"x", "peer"),
            Err(Refusal::Unsigned)
        );
        assert_eq!(auth.refused_total(), 2);
    }

    #[test]
    fn remembered_signatures_are_bounded_by_time() {
        let mut r = Remembered::default();
        assert!(r.first_time("a", 0));
        assert!(!r.first_time("a", 1));
        let later = 2 * SKEW_MAX.as_millis() as i64 + 1;
        assert!(r.first_time("b", later));
        assert_eq!(r.order.len(), 1, "the old signature is forgotten");
    }
}
