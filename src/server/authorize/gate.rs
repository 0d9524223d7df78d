//! The authorizer as one API sees it: only the ACLs its `NEEDS` declares can be checked.

use super::needs::{Acl, Needs};
use crate::security::acl::{Operation, ResourceType};
use crate::server::authorize::access::CLUSTER;
use crate::server::broker::Broker;
use crate::server::caller::Client;
use uuid::Uuid;

/// Decides, for one request of one API, what its client may do.
pub struct Gate<'a> {
    broker: &'a Broker,
    client: &'a Client<'a>,
    declared: &'static [Acl],
}

impl<'a> Gate<'a> {
    pub fn new(broker: &'a Broker, client: &'a Client<'a>, needs: Needs) -> Self {
        Gate {
            broker,
            client,
            declared: needs.acls(),
        }
    }

    /// Whether ACLs are enforced at all (`--authorizer acl`).
    pub fn enforced(&self) -> bool {
        self.broker.authorizes()
    }

    /// Whether the client may `acl` on the resource `name`; a denial is counted. An ACL the
    /// API did not declare is denied (and is a bug, which tests catch).
    pub fn allowed(&self, acl: Acl, name: &str) -> bool {
        self.declared(acl)
            && self
                .broker
                .allowed(self.client, acl.operation, acl.resource, name)
    }

    /// `allowed` without counting a denial: for listings that hide what may not be seen.
    pub fn allowed_quietly(&self, acl: Acl, name: &str) -> bool {
        self.declared(acl)
            && self
                .broker
                .allowed_quietly(self.client, acl.operation, acl.resource, name)
    }

    /// `allowed` on the cluster.
    pub fn on_cluster(&self, operation: Operation) -> bool {
        self.allowed(Acl::new(ResourceType::Cluster, operation), CLUSTER)
    }

    /// The name of a topic a request names by name or by id ("" for an id nobody knows).
    pub fn topic_name(&self, name: &str, id: &Uuid) -> String {
        if !name.is_empty() || id.is_nil() {
            return name.to_string();
        }
        self.broker
            .metadata
            .read(|s| s.topic_by_id(id).map(|t| t.name.clone()))
            .unwrap_or_default()
    }

    /// Every topic's name.
    pub fn topic_names(&self) -> Vec<String> {
        self.broker
            .metadata
            .read(|s| s.topics().map(|t| t.name.clone()).collect())
    }

    /// Whether the client may write to some topic (InitProducerId without a transactional
    /// id, KIP-679: idempotence needs only a topic it may write).
    pub fn any_topic_writable(&self) -> bool {
        let names: Vec<String> = self
            .broker
            .metadata
            .read(|s| s.topics().map(|t| t.name.clone()).collect());
        names
            .iter()
            .any(|name| self.allowed(Acl::TOPIC_WRITE, name))
    }

    fn declared(&self, acl: Acl) -> bool {
        let declared = self.declared.contains(&acl);
        debug_assert!(declared, "{acl:?} is checked but not declared in NEEDS");
        if !declared {
            tracing::error!(?acl, "an ACL checked but not declared by its API: denied");
        }
        declared
    }
}
