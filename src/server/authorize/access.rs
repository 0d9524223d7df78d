//! Whether a client may do something: the broker's side of the ACL authorizer
//! (`security::acl`). With `--authorizer none` (the default, as Kafka without an
//! `authorizer.class.name`) every client may do everything; with `acl` each operation is
//! decided against the replicated ACLs as Kafka's StandardAuthorizer decides it, and every
//! denial is counted in `floe_authorization_denied_total`.

use crate::security::acl::{self, AuthorizerSettings, Operation, ResourceType};
use crate::security::metrics::SecurityMetrics;
use crate::server::broker::Broker;
use crate::server::caller::Client;

/// The name of the one Cluster resource (Kafka's `kafka-cluster`).
pub const CLUSTER: &str = acl::CLUSTER_NAME;

impl Broker {
    /// Whether ACLs are enforced.
    pub fn authorizes(&self) -> bool {
        self.authorizer.is_some()
    }

    /// Whether `client` may perform `operation` on the resource; a denial is counted.
    pub fn allowed(
        &self,
        client: &Client<'_>,
        operation: Operation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        self.decide(client, operation, resource_type, name, true)
    }

    /// `allowed` without counting a denial: for listings that hide what may not be seen
    /// (Kafka does not log those either).
    pub fn allowed_quietly(
        &self,
        client: &Client<'_>,
        operation: Operation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        self.decide(client, operation, resource_type, name, false)
    }

    pub fn topic_allowed_quietly(&self, client: &Client<'_>, name: &str) -> bool {
        self.allowed_quietly(client, Operation::Describe, ResourceType::Topic, name)
    }

    fn decide(
        &self,
        client: &Client<'_>,
        operation: Operation,
        resource_type: ResourceType,
        name: &str,
        count: bool,
    ) -> bool {
        let Some(settings) = &self.authorizer else {
            return true;
        };
        let ip = client.host.trim_start_matches('/');
        let allowed = self.metadata.read(|state| {
            acl::authorize(
                state.security().acls(),
                settings,
                client.principal,
                ip,
                operation,
                resource_type,
                name,
            )
            .is_allowed()
        });
        if !allowed && count {
            SecurityMetrics::count(&self.metrics.security.authorization_denied);
            tracing::debug!(principal = client.principal, host = client.host, %operation, %resource_type, resource = name, "denied");
        }
        allowed
    }

    /// `allowed` on the cluster.
    pub fn allowed_on_cluster(&self, client: &Client<'_>, operation: Operation) -> bool {
        self.allowed(client, operation, ResourceType::Cluster, CLUSTER)
    }

    /// The operations `client` may perform on a resource, as KIP-430's bit field.
    pub fn authorized_operations(
        &self,
        client: &Client<'_>,
        resource_type: ResourceType,
        name: &str,
    ) -> i32 {
        let Some(settings) = &self.authorizer else {
            return acl::authorized_operations(
                &acl::Acls::default(),
                &everyone(),
                client.principal,
                "",
                resource_type,
                name,
            );
        };
        let ip = client.host.trim_start_matches('/');
        self.metadata.read(|state| {
            acl::authorized_operations(
                state.security().acls(),
                settings,
                client.principal,
                ip,
                resource_type,
                name,
            )
        })
    }
}

/// Settings under which everything is allowed (no authorizer).
fn everyone() -> AuthorizerSettings {
    AuthorizerSettings {
        super_users: Default::default(),
        allow_everyone_if_no_acl_found: true,
    }
}
