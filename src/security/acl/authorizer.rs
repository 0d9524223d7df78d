//! The decision: may `principal`, connected from `host`, perform `operation` on a resource?
//! Kafka's `StandardAuthorizerData.authorize`, rule for rule (see the module doc of `acl` for
//! the order), and the KIP-430 operations field built from it (Kafka's
//! `AuthHelper.authorizedOperations`).

use super::model::{
    AccessControlEntry, Operation, Permission, ResourceType, WILDCARD_HOST, WILDCARD_PRINCIPAL,
};
use super::store::Acls;
use std::collections::BTreeSet;

/// The authorizer's configuration (Kafka's `super.users` and
/// `allow.everyone.if.no.acl.found`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizerSettings {
    /// Principals allowed everything, as `"User:alice"`.
    pub super_users: BTreeSet<String>,
    /// Allow a resource no ACL at all applies to (Kafka's default: false).
    pub allow_everyone_if_no_acl_found: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Denied,
}

impl Decision {
    pub fn is_allowed(self) -> bool {
        self == Decision::Allowed
    }
}

/// Whether `principal` (`"User:alice"`) from `host` (an IP address as text) may perform
/// `operation` on the resource `name` of `resource_type`.
pub fn authorize(
    acls: &Acls,
    settings: &AuthorizerSettings,
    principal: &str,
    host: &str,
    operation: Operation,
    resource_type: ResourceType,
    name: &str,
) -> Decision {
    if settings.super_users.contains(principal) {
        return Decision::Allowed;
    }
    // Any ACL on the resource counts here, whoever and whatever it is for: only a resource
    // nobody wrote an ACL for falls to the default.
    let mut resource_has_acls = false;
    let mut allowed = false;
    for entry in acls.entries_on(resource_type, name) {
        resource_has_acls = true;
        match verdict(entry, principal, host, operation) {
            Some(Decision::Denied) => return Decision::Denied,
            Some(Decision::Allowed) => allowed = true,
            None => {}
        }
    }
    if allowed || (!resource_has_acls && settings.allow_everyone_if_no_acl_found) {
        Decision::Allowed
    } else {
        Decision::Denied
    }
}

/// What `entry` says about the request, or `None` when it does not apply (Kafka's
/// `StandardAuthorizerData.findResult`; the resource already matched).
fn verdict(
    entry: &AccessControlEntry,
    principal: &str,
    host: &str,
    operation: Operation,
) -> Option<Decision> {
    if entry.principal != principal && entry.principal != WILDCARD_PRINCIPAL {
        return None;
    }
    if entry.host != WILDCARD_HOST && entry.host != host {
        return None;
    }
    let allow = entry.permission == Permission::Allow;
    // Implied operations widen ALLOWs only: denying READ does not deny DESCRIBE.
    let covers = entry.operation == Operation::All
        || entry.operation == operation
        || (allow && implies(entry.operation, operation));
    if !covers {
        return None;
    }
    // Kafka: anything but ALLOW denies (only ALLOW and DENY are ever stored).
    Some(if allow {
        Decision::Allowed
    } else {
        Decision::Denied
    })
}

/// Whether allowing `granted` also allows `wanted`: whoever may read, write, delete or alter
/// a resource may see it, and whoever may alter its configs may see them (Kafka's
/// `IMPLIES_DESCRIBE` and `IMPLIES_DESCRIBE_CONFIGS`).
fn implies(granted: Operation, wanted: Operation) -> bool {
    match wanted {
        Operation::Describe => matches!(
            granted,
            Operation::Read | Operation::Write | Operation::Delete | Operation::Alter
        ),
        Operation::DescribeConfigs => granted == Operation::AlterConfigs,
        _ => false,
    }
}

/// The operations a resource type has, which KIP-430's field reports on (Kafka's
/// `AclEntry.supportedOperations`). Groups: Kafka 3.9 added DESCRIBE_CONFIGS and
/// ALTER_CONFIGS with group configs (KAFKA-14510); floe has no group configs, so it does not
/// report them.
pub fn supported_operations(resource_type: ResourceType) -> &'static [Operation] {
    match resource_type {
        ResourceType::Topic => &[
            Operation::Read,
            Operation::Write,
            Operation::Create,
            Operation::Delete,
            Operation::Alter,
            Operation::Describe,
            Operation::DescribeConfigs,
            Operation::AlterConfigs,
        ],
        ResourceType::Group => &[Operation::Read, Operation::Delete, Operation::Describe],
        ResourceType::Cluster => &[
            Operation::Create,
            Operation::Alter,
            Operation::Describe,
            Operation::ClusterAction,
            Operation::DescribeConfigs,
            Operation::AlterConfigs,
            Operation::IdempotentWrite,
        ],
        ResourceType::TransactionalId => &[Operation::Describe, Operation::Write],
        ResourceType::DelegationToken => &[Operation::Describe],
        ResourceType::User => &[Operation::CreateTokens, Operation::DescribeTokens],
        ResourceType::Unknown | ResourceType::Any => &[],
    }
}

/// KIP-430's authorized-operations field: bit `1 << code` for each of the resource type's
/// operations `authorize` allows.
pub fn authorized_operations(
    acls: &Acls,
    settings: &AuthorizerSettings,
    principal: &str,
    host: &str,
    resource_type: ResourceType,
    name: &str,
) -> i32 {
    supported_operations(resource_type)
        .iter()
        .filter(|&&operation| {
            authorize(
                acls,
                settings,
                principal,
                host,
                operation,
                resource_type,
                name,
            )
            .is_allowed()
        })
        .fold(0, |field, operation| {
            field | (1_i32 << i32::from(operation.code()))
        })
}
