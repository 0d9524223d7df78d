//! TLS for the `SSL` and `SASL_SSL` listeners (rustls), with optional client certificates
//! (mTLS) and reload without a restart.
//!
//! The crypto provider is aws-lc-rs: the object-store client (object_store, reqwest) already
//! builds it, so TLS adds no second C library to compile; `ring` would add one. Certificates,
//! keys and the client CA are PEM files (Kafka's `ssl.keystore.type=PEM` and
//! `ssl.truststore.type=PEM`). Every `reload_interval` the files' modification times are
//! compared; when one changed, a new server configuration is built and used for every new
//! connection (open connections keep theirs). A configuration that fails to build is logged
//! and the previous one stays.
//!
//! A client certificate's principal is Kafka's default (`ssl.principal.mapping.rules=DEFAULT`):
//! `User:` and the subject in RFC 2253 form, as Java's `X500Principal.getName()` writes it —
//! the last RDN first (`User:CN=alice,OU=eng,O=example`).

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

/// Whether clients must present a certificate (Kafka's `ssl.client.auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    None,
    Requested,
    Required,
}

impl ClientAuth {
    pub fn parse(text: &str) -> Option<ClientAuth> {
        match text.to_ascii_lowercase().as_str() {
            "none" => Some(ClientAuth::None),
            "requested" => Some(ClientAuth::Requested),
            "required" => Some(ClientAuth::Required),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct TlsSettings {
    /// The server's certificate chain, leaf first.
    pub certificate_chain: PathBuf,
    pub private_key: PathBuf,
    /// The CAs client certificates must chain to.
    pub client_ca: Option<PathBuf>,
    pub client_auth: ClientAuth,
    pub reload_interval: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {what} from {path}: {reason}")]
    Pem {
        what: &'static str,
        path: String,
        reason: String,
    },
    #[error("{path} holds no {what}")]
    Empty { what: &'static str, path: String },
    #[error(
        "client authentication is {0:?} but no client CA file is given (--ssl-truststore-file)"
    )]
    NoClientCa(ClientAuth),
    #[error("invalid TLS configuration: {0}")]
    Rustls(String),
}

fn pem_error(what: &'static str, path: &Path, e: impl std::fmt::Display) -> TlsError {
    TlsError::Pem {
        what,
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

fn certificates(path: &Path, what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| pem_error(what, path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(what, path, e))?;
    if certs.is_empty() {
        return Err(TlsError::Empty {
            what,
            path: path.display().to_string(),
        });
    }
    Ok(certs)
}

/// Builds a server configuration from the files as they are now.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<ServerConfig>, TlsError> {
    if settings.client_auth != ClientAuth::None && settings.client_ca.is_none() {
        return Err(TlsError::NoClientCa(settings.client_auth));
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let chain = certificates(&settings.certificate_chain, "certificates")?;
    let key = PrivateKeyDer::from_pem_file(&settings.private_key)
        .map_err(|e| pem_error("a private key", &settings.private_key, e))?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    let builder = match (settings.client_auth, &settings.client_ca) {
        (ClientAuth::None, _) => builder.with_no_client_auth(),
        (auth, None) => return Err(TlsError::NoClientCa(auth)),
        (auth, Some(ca)) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in certificates(ca, "CA certificates")? {
                roots
                    .add(cert)
                    .map_err(|e| pem_error("CA certificates", ca, e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if auth == ClientAuth::Requested {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| TlsError::Rustls(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    Ok(Arc::new(config))
}

/// The server configuration new connections use, rebuilt when its files change.
pub struct ReloadingTls {
    settings: TlsSettings,
    current: RwLock<(Arc<ServerConfig>, Vec<Option<SystemTime>>)>,
}

fn modified(settings: &TlsSettings) -> Vec<Option<SystemTime>> {
    [
        Some(&settings.certificate_chain),
        Some(&settings.private_key),
        settings.client_ca.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
    .collect()
}

impl ReloadingTls {
    pub fn open(settings: TlsSettings) -> Result<ReloadingTls, TlsError> {
        let stamps = modified(&settings);
        let config = server_config(&settings)?;
        Ok(ReloadingTls {
            settings,
            current: RwLock::new((config, stamps)),
        })
    }

    pub fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        tokio_rustls::TlsAcceptor::from(current.0.clone())
    }

    /// Rebuilds the configuration if a file changed; true when a new one is in use.
    pub fn reload_if_changed(&self) -> bool {
        let stamps = modified(&self.settings);
        {
            let current = self.current.read().unwrap_or_else(|p| p.into_inner());
            if current.1 == stamps {
                return false;
            }
        }
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        // The stamps are taken even when the build fails, so a broken file is reported once
        // per change, not at every check.
        current.1 = stamps;
        match server_config(&self.settings) {
            Ok(config) => {
                current.0 = config;
                tracing::info!(certificate = %self.settings.certificate_chain.display(), "TLS certificates reloaded");
                true
            }
            Err(e) => {
                tracing::error!(error = %e, "TLS certificates changed but cannot be loaded; the previous ones stay in use");
                false
            }
        }
    }

    /// Checks the files every `reload_interval` until the task is dropped.
    pub async fn keep_reloading(self: Arc<Self>, clock: crate::clock::Clock) {
        loop {
            clock.sleep(self.settings.reload_interval).await;
            self.reload_if_changed();
        }
    }
}

/// Kafka's default principal for a client certificate: `User:` and its subject in RFC 2253
/// form. `None` when the certificate cannot be parsed.
pub fn certificate_principal(der: &[u8]) -> Option<String> {
    use x509_parser::prelude::FromDer;
    let (_, cert) = x509_parser::certificate::X509Certificate::from_der(der).ok()?;
    let mut rdns: Vec<String> = Vec::new();
    for rdn in cert.subject().iter_rdn() {
        let attributes: Vec<String> = rdn
            .iter()
            .map(|attribute| {
                let oid = attribute.attr_type().to_id_string();
                let value = attribute.as_str().map_or_else(
                    |_| format!("#{}", hex(attribute.attr_value().data)),
                    escape_rfc2253,
                );
                format!("{}={value}", keyword(&oid).unwrap_or(&oid))
            })
            .collect();
        rdns.push(attributes.join("+"));
    }
    rdns.reverse();
    Some(format!("User:{}", rdns.join(",")))
}

/// The attribute keywords RFC 2253 (and Java) write by name; others are written as OIDs.
fn keyword(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.9" => "STREET",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "0.9.2342.19200300.100.1.1" => "UID",
        "0.9.2342.19200300.100.1.25" => "DC",
        _ => return None,
    })
}

fn escape_rfc2253(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let last = value.chars().count().saturating_sub(1);
    for (i, c) in value.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certificate(subject: &[(rcgen::DnType, &str)]) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).expect("params");
        let mut name = rcgen::DistinguishedName::new();
        for (kind, value) in subject {
            name.push(kind.clone(), *value);
        }
        params.distinguished_name = name;
        let key = rcgen::KeyPair::generate().expect("key");
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    #[test]
    fn the_principal_is_the_subject_last_rdn_first() {
        let der = certificate(&[
            (rcgen::DnType::CountryName, "NL"),
            (rcgen::DnType::OrganizationName, "Example, Inc"),
            (rcgen::DnType::OrganizationalUnitName, "eng"),
            (rcgen::DnType::CommonName, "alice"),
        ]);
        assert_eq!(
            certificate_principal(&der).as_deref(),
            Some("User:CN=alice,OU=eng,O=Example\\, Inc,C=NL")
        );
        assert_eq!(certificate_principal(b"not a certificate"), None);
    }

    #[test]
    fn a_configuration_builds_and_reloads_when_its_files_change() {
        let dir = tempfile::tempdir().expect("dir");
        let write = |name: &str| {
            let key = rcgen::KeyPair::generate().expect("key");
            let params = rcgen::CertificateParams::new(vec![name.to_string()]).expect("params");
            let cert = params.self_signed(&key).expect("cert");
            std::fs::write(dir.path().join("cert.pem"), cert.pem()).expect("write");
            std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).expect("write");
        };
        write("first");
        let settings = TlsSettings {
            certificate_chain: dir.path().join("cert.pem"),
            private_key: dir.path().join("key.pem"),
            client_ca: None,
            client_auth: ClientAuth::None,
            reload_interval: Duration::from_secs(1),
        };
        let tls = ReloadingTls::open(settings.clone()).expect("opens");
        assert!(!tls.reload_if_changed(), "nothing changed");
        // Modification times may have a coarse grain: move them explicitly.
        write("second");
        let later = std::fs::metadata(dir.path().join("cert.pem"))
            .and_then(|m| m.modified())
            .expect("mtime")
            + Duration::from_secs(5);
        for file in ["cert.pem", "key.pem"] {
            let f = std::fs::File::options()
                .write(true)
                .open(dir.path().join(file))
                .expect("open");
            f.set_modified(later).expect("touch");
        }
        assert!(tls.reload_if_changed(), "the new files are loaded");
        // A broken file keeps the previous configuration.
        std::fs::write(dir.path().join("key.pem"), "garbage").expect("write");
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join("key.pem"))
            .expect("open");
        f.set_modified(later + Duration::from_secs(5))
            .expect("touch");
        assert!(!tls.reload_if_changed());
        let required = TlsSettings {
            client_auth: ClientAuth::Required,
            ..settings
        };
        assert!(matches!(
            server_config(&required),
            Err(TlsError::NoClientCa(_))
        ));
    }
}
