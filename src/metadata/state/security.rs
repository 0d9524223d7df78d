//! The replicated part of security: ACL bindings, SCRAM credentials, and the addresses each
//! agent advertises on each named listener.
//!
//! All three are bounded, and every command is validated here, so an entry in the log can
//! only ever yield an error outcome, never hurt a node.

use super::limits::Limits;
use crate::security::acl::{AclBinding, AclBindingFilter, AclError, Acls};
use crate::security::scram::{ScramCredential, ScramMechanism};
use imbl::OrdMap;
use serde::{Deserialize, Serialize};

/// SCRAM credentials held (a user has at most one per mechanism).
pub const SCRAM_CREDENTIALS_MAX: usize = 100_000;
/// Endpoints one agent may advertise: its named listeners, and their lanes (`NAME#n`).
pub const ENDPOINTS_PER_AGENT_MAX: usize = 16;
/// The longest SCRAM user name (Kafka has no limit; the state needs one).
pub const SCRAM_USER_BYTES_MAX: usize = 1024;
/// The longest salt and key accepted (SHA-512's output is 64 bytes; salts are short).
const SCRAM_BYTES_MAX: usize = 256;

/// One listener's advertised address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The listener's name, upper case, or one of its lanes' (`NAME#n`, see `placement`).
    pub listener: String,
    pub host: String,
    pub port: i32,
}

/// A change to one user's SCRAM credentials (AlterUserScramCredentials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScramChange {
    Upsert {
        user: String,
        mechanism: ScramMechanism,
        credential: ScramCredential,
    },
    Delete {
        user: String,
        mechanism: ScramMechanism,
    },
}

/// Why a SCRAM change was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum ScramStateError {
    #[error("the user has no credential for this mechanism")]
    NotFound,
    #[error("the user name is empty or longer than {SCRAM_USER_BYTES_MAX} bytes")]
    BadUser,
    #[error("the credential is malformed or its iteration count is out of range")]
    Unacceptable,
    #[error("too many SCRAM credentials (at most {SCRAM_CREDENTIALS_MAX})")]
    TooMany,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecurityState {
    acls: Acls,
    #[serde(deserialize_with = "super::persistent::ord_map")]
    scram: OrdMap<(String, ScramMechanism), ScramCredential>,
    #[serde(deserialize_with = "super::persistent::ord_map")]
    endpoints: OrdMap<i32, Vec<Endpoint>>,
}

impl SecurityState {
    pub fn acls(&self) -> &Acls {
        &self.acls
    }

    pub fn scram_credential(
        &self,
        user: &str,
        mechanism: ScramMechanism,
    ) -> Option<&ScramCredential> {
        self.scram.get(&(user.to_string(), mechanism))
    }

    /// Users with SCRAM credentials and their mechanisms and iterations, by user.
    pub fn scram_users(&self) -> impl Iterator<Item = (&str, ScramMechanism, u32)> {
        self.scram
            .iter()
            .map(|((user, mechanism), c)| (user.as_str(), *mechanism, c.iterations))
    }

    /// The addresses `agent` advertises per listener (empty: only its registry address).
    pub fn endpoints(&self, agent: i32) -> &[Endpoint] {
        self.endpoints.get(&agent).map_or(&[], Vec::as_slice)
    }

    /// Per binding, in order: created (or already there), or why not. All or none is not
    /// Kafka's rule: each binding stands alone.
    pub(super) fn create_acls(&mut self, bindings: Vec<AclBinding>) -> Vec<Result<(), AclError>> {
        bindings
            .into_iter()
            .map(|binding| self.acls.create(binding).map(|_| ()))
            .collect()
    }

    /// Per filter, in order: the bindings it removed.
    pub(super) fn delete_acls(
        &mut self,
        filters: Vec<AclBindingFilter>,
    ) -> Vec<Result<Vec<AclBinding>, AclError>> {
        filters
            .into_iter()
            .map(|filter| {
                filter.validate()?;
                Ok(self.acls.delete_matching(&filter))
            })
            .collect()
    }

    pub(super) fn alter_scram(
        &mut self,
        changes: Vec<ScramChange>,
    ) -> Vec<Result<(), ScramStateError>> {
        changes
            .into_iter()
            .map(|change| match change {
                ScramChange::Delete { user, mechanism } => self
                    .scram
                    .remove(&(user, mechanism))
                    .map(|_| ())
                    .ok_or(ScramStateError::NotFound),
                ScramChange::Upsert {
                    user,
                    mechanism,
                    credential,
                } => {
                    if user.is_empty() || user.len() > SCRAM_USER_BYTES_MAX {
                        return Err(ScramStateError::BadUser);
                    }
                    let sizes_ok = [
                        &credential.salt,
                        &credential.stored_key,
                        &credential.server_key,
                    ]
                    .iter()
                    .all(|b| !b.is_empty() && b.len() <= SCRAM_BYTES_MAX);
                    if !sizes_ok || !mechanism.accepts_iterations(credential.iterations) {
                        return Err(ScramStateError::Unacceptable);
                    }
                    let key = (user, mechanism);
                    if !self.scram.contains_key(&key) && self.scram.len() >= SCRAM_CREDENTIALS_MAX {
                        return Err(ScramStateError::TooMany);
                    }
                    self.scram.insert(key, credential);
                    Ok(())
                }
            })
            .collect()
    }

    /// Records `agent`'s listeners. Agents the registry no longer holds are forgotten here
    /// too, so the map is bounded by the registry's bound.
    pub(super) fn set_endpoints(
        &mut self,
        agent: i32,
        endpoints: Vec<Endpoint>,
        registered: impl Fn(i32) -> bool,
        limits: &Limits,
    ) -> bool {
        let names_ok = endpoints
            .iter()
            .all(|e| limits.name_allows(&e.listener) && limits.name_allows(&e.host));
        if endpoints.len() > ENDPOINTS_PER_AGENT_MAX || !names_ok || !registered(agent) {
            return false;
        }
        let gone: Vec<i32> = self
            .endpoints
            .keys()
            .copied()
            .filter(|id| !registered(*id))
            .collect();
        for id in gone {
            self.endpoints.remove(&id);
        }
        self.endpoints.insert(agent, endpoints);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credential(iterations: u32) -> ScramCredential {
        ScramCredential::from_password(ScramMechanism::Sha256, b"pw", b"salt", iterations)
    }

    #[test]
    fn scram_changes_are_validated_and_bounded() {
        let mut s = SecurityState::default();
        let upsert = |user: &str, iterations| ScramChange::Upsert {
            user: user.into(),
            mechanism: ScramMechanism::Sha256,
            credential: credential(iterations),
        };
        let results = s.alter_scram(vec![
            upsert("alice", 4096),
            upsert("", 4096),
            upsert("bob", 10),
            ScramChange::Delete {
                user: "carol".into(),
                mechanism: ScramMechanism::Sha512,
            },
        ]);
        assert_eq!(
            results,
            vec![
                Ok(()),
                Err(ScramStateError::BadUser),
                Err(ScramStateError::Unacceptable),
                Err(ScramStateError::NotFound)
            ]
        );
        assert!(
            s.scram_credential("alice", ScramMechanism::Sha256)
                .is_some()
        );
        assert!(
            s.scram_credential("alice", ScramMechanism::Sha512)
                .is_none()
        );
        let deleted = s.alter_scram(vec![ScramChange::Delete {
            user: "alice".into(),
            mechanism: ScramMechanism::Sha256,
        }]);
        assert_eq!(deleted, vec![Ok(())]);
        assert_eq!(s.scram_users().count(), 0);
    }

    #[test]
    fn endpoints_are_kept_only_for_registered_agents() {
        let mut s = SecurityState::default();
        let limits = Limits::default();
        let e = |name: &str| Endpoint {
            listener: name.into(),
            host: "h".into(),
            port: 1,
        };
        assert!(s.set_endpoints(1, vec![e("SSL")], |_| true, &limits));
        assert!(s.set_endpoints(2, vec![e("SSL")], |id| id == 2, &limits));
        assert!(s.endpoints(1).is_empty(), "agent 1 left the registry");
        assert_eq!(s.endpoints(2), &[e("SSL")]);
        assert!(!s.set_endpoints(3, vec![e("SSL")], |id| id == 2, &limits));
        let many = vec![e("X"); ENDPOINTS_PER_AGENT_MAX + 1];
        assert!(!s.set_endpoints(2, many, |_| true, &limits));
    }
}
