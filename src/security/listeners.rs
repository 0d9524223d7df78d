//! Kafka listeners: named ports, each with a security protocol and an advertised address
//! (Kafka's `listeners`, `advertised.listeners`, `listener.security.protocol.map`).
//!
//! ```text
//! --listeners PLAINTEXT://127.0.0.1:9092,SECURE://0.0.0.0:9093
//! --listener-security-protocol-map SECURE:SASL_SSL     (the four protocol names map to themselves)
//! --advertised-listeners SECURE://kafka.example.com:9093
//! ```
//! Every agent registers each listener's advertised address under its name; a client is
//! always told the addresses of the listener it connected to (Metadata, FindCoordinator).

use std::collections::BTreeMap;

/// How a listener's connections are secured (Kafka's `SecurityProtocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecurityProtocol {
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    pub fn parse(name: &str) -> Option<SecurityProtocol> {
        match name.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Some(SecurityProtocol::Plaintext),
            "SSL" => Some(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Some(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Some(SecurityProtocol::SaslSsl),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    pub fn tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    pub fn sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }
}

/// One listener: where it binds, what clients are told, how it is secured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    /// Its name, upper case (`PLAINTEXT`, `SECURE`, ...).
    pub name: String,
    pub protocol: SecurityProtocol,
    /// The address it binds (`host:port`; an empty host binds every interface).
    pub bind: String,
    /// The address clients are told (`host:port`); `None`: the bound address.
    pub advertised: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerError {
    #[error("listener '{0}' is not of the form NAME://host:port")]
    Malformed(String),
    #[error("listener name '{0}' is used twice")]
    Duplicate(String),
    #[error(
        "listener '{0}' has no security protocol: name it PLAINTEXT, SSL, SASL_PLAINTEXT or \
         SASL_SSL, or map it with --listener-security-protocol-map"
    )]
    NoProtocol(String),
    #[error("'{0}' in the security protocol map is not NAME:PROTOCOL with a known protocol")]
    BadMapEntry(String),
    #[error("advertised listener '{0}' names no listener")]
    UnknownAdvertised(String),
    #[error("at least one listener is needed")]
    None,
}

/// `NAME://host:port` → (NAME upper case, host:port).
fn split_listener(entry: &str) -> Result<(String, String), ListenerError> {
    let malformed = || ListenerError::Malformed(entry.to_string());
    let (name, addr) = entry.split_once("://").ok_or_else(malformed)?;
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let port_ok = addr
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    if !valid_name || !port_ok {
        return Err(malformed());
    }
    Ok((name.to_ascii_uppercase(), addr.to_string()))
}

fn comma_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// Parses the three Kafka settings into listeners, in the order given (the first is the
/// one a node names when it must name one address).
pub fn parse(
    listeners: &str,
    advertised: &str,
    protocol_map: &str,
) -> Result<Vec<ListenerConfig>, ListenerError> {
    let mut map: BTreeMap<String, SecurityProtocol> = BTreeMap::new();
    for entry in comma_list(protocol_map) {
        let bad = || ListenerError::BadMapEntry(entry.to_string());
        let (name, protocol) = entry.split_once(':').ok_or_else(bad)?;
        let protocol = SecurityProtocol::parse(protocol.trim()).ok_or_else(bad)?;
        map.insert(name.trim().to_ascii_uppercase(), protocol);
    }
    let mut parsed: Vec<ListenerConfig> = Vec::new();
    for entry in comma_list(listeners) {
        let (name, bind) = split_listener(entry)?;
        if parsed.iter().any(|l| l.name == name) {
            return Err(ListenerError::Duplicate(name));
        }
        let protocol = map
            .get(&name)
            .copied()
            .or_else(|| SecurityProtocol::parse(&name))
            .ok_or_else(|| ListenerError::NoProtocol(name.clone()))?;
        let bind = match bind.strip_prefix(':') {
            // Kafka's `PLAINTEXT://:9092`: every interface.
            Some(port) => format!("0.0.0.0:{port}"),
            None => bind,
        };
        parsed.push(ListenerConfig {
            name,
            protocol,
            bind,
            advertised: None,
        });
    }
    if parsed.is_empty() {
        return Err(ListenerError::None);
    }
    for entry in comma_list(advertised) {
        let (name, addr) = split_listener(entry)?;
        let listener = parsed
            .iter_mut()
            .find(|l| l.name == name)
            .ok_or(ListenerError::UnknownAdvertised(name))?;
        listener.advertised = Some(addr);
    }
    Ok(parsed)
}

/// `host:port` → (host, port), brackets around an IPv6 host removed.
pub fn host_port(addr: &str) -> (String, i32) {
    match addr.rsplit_once(':') {
        Some((host, port)) => (
            host.trim_matches(['[', ']']).to_string(),
            port.parse().unwrap_or(9092),
        ),
        None => (addr.to_string(), 9092),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_style_listeners_parse() {
        let parsed = parse(
            "PLAINTEXT://127.0.0.1:9092, secure://:9093,SSL://[::1]:9094",
            "SECURE://kafka.example.com:19093",
            "SECURE:SASL_SSL",
        )
        .expect("parses");
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed[0].protocol, SecurityProtocol::Plaintext);
        assert_eq!(parsed[1].name, "SECURE");
        assert_eq!(parsed[1].protocol, SecurityProtocol::SaslSsl);
        assert_eq!(parsed[1].bind, "0.0.0.0:9093");
        assert_eq!(
            parsed[1].advertised.as_deref(),
            Some("kafka.example.com:19093")
        );
        assert_eq!(parsed[2].bind, "[::1]:9094");
        assert_eq!(host_port("[::1]:9094"), ("::1".to_string(), 9094));
    }

    #[test]
    fn bad_listeners_are_refused_with_a_reason() {
        let err = |l: &str, a: &str, m: &str| parse(l, a, m).expect_err("refused");
        assert_eq!(
            err("INTERNAL://:1", "", ""),
            ListenerError::NoProtocol("INTERNAL".into())
        );
        assert!(matches!(
            err("PLAINTEXT:9092", "", ""),
            ListenerError::Malformed(_)
        ));
        assert!(matches!(
            err("PLAINTEXT://h:x", "", ""),
            ListenerError::Malformed(_)
        ));
        assert!(matches!(
            err("SSL://:1,SSL://:2", "", ""),
            ListenerError::Duplicate(_)
        ));
        assert!(matches!(
            err("SSL://:1", "", "SSL:TLS"),
            ListenerError::BadMapEntry(_)
        ));
        assert!(matches!(
            err("SSL://:1", "OTHER://h:1", ""),
            ListenerError::UnknownAdvertised(_)
        ));
        assert_eq!(err("", "", ""), ListenerError::None);
    }
}
