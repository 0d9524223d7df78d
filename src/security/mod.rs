//! Security: who may speak to a node, and what a Kafka client may do.
//!
//! - `cluster_auth`: the internal listener (Raft, forwarded writes and requests, joins)
//!   serves only requests signed with the cluster's shared secret.
//! - `scram`, `oauthbearer`: SASL mechanisms (pure exchanges; the connection drives them).
//! - `acl`: Kafka ACLs: the model, the replicated set of bindings, the authorizer's decision.

pub mod acl;
pub mod cluster_auth;
pub mod listeners;
pub mod metrics;
pub mod oauthbearer;
pub mod sasl;
pub mod scram;
pub mod tls;

/// A secret string (a token, a password) that is never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(secret: impl Into<String>) -> Secret {
        Secret(secret.into())
    }

    /// Reads a secret from a file; surrounding whitespace (a trailing newline) is not part
    /// of it, and an empty file is refused.
    pub fn from_file(path: &std::path::Path) -> std::io::Result<Secret> {
        let text = std::fs::read_to_string(path)?;
        let secret = text.trim();
        if secret.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is empty", path.display()),
            ));
        }
        Ok(Secret(secret.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Compares in constant time (a timing difference must not reveal a prefix).
    pub fn matches(&self, candidate: &[u8]) -> bool {
        aws_lc_rs::constant_time::verify_slices_are_equal(self.0.as_bytes(), candidate).is_ok()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Whether `addr` (`host:port`, or a bare host) names only this machine: a loopback IP or
/// `localhost`. An unspecified address (`0.0.0.0`, `::`) is not: it listens everywhere.
pub fn is_loopback(addr: &str) -> bool {
    if let Ok(socket) = addr.parse::<std::net::SocketAddr>() {
        return socket.ip().is_loopback();
    }
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_addresses() {
        for addr in [
            "127.0.0.1:9092",
            "[::1]:1",
            "localhost:1",
            "127.3.4.5",
            "LOCALHOST",
        ] {
            assert!(super::is_loopback(addr), "{addr}");
        }
        for addr in [
            "0.0.0.0:9092",
            "[::]:1",
            "10.0.0.1:1",
            "floe-1:9092",
            "example.com",
        ] {
            assert!(!super::is_loopback(addr), "{addr}");
        }
    }
}
