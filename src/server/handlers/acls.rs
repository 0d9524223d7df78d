//! What CreateAcls, DescribeAcls and DeleteAcls share: why a request is refused outright
//! (no authorizer, or no Cluster ALTER / DESCRIBE), and the binding filter a request's fields
//! describe.

use crate::protocol::ErrorCode;
use crate::security::acl::{
    AccessControlEntryFilter, AclBindingFilter, Operation, PatternType, Permission,
    ResourcePatternFilter, ResourceType,
};
use crate::server::broker::Broker;
use crate::server::caller::Client;

/// Why the ACL APIs refuse `client` outright: no authorizer, or no `operation` on the cluster.
pub(super) fn refusal(
    broker: &Broker,
    client: &Client<'_>,
    operation: Operation,
) -> Option<(ErrorCode, &'static str)> {
    if !broker.authorizes() {
        return Some((
            ErrorCode::SecurityDisabled,
            "No Authorizer is configured on the broker",
        ));
    }
    (!broker.allowed_on_cluster(client, operation)).then_some((
        ErrorCode::ClusterAuthorizationFailed,
        "Cluster authorization failed.",
    ))
}

/// The filter a request's fields describe.
pub(super) fn filter(
    resource_type: i8,
    name: Option<String>,
    pattern_type: i8,
    principal: Option<String>,
    host: Option<String>,
    operation: i8,
    permission: i8,
) -> AclBindingFilter {
    AclBindingFilter {
        pattern: ResourcePatternFilter {
            resource_type: ResourceType::from_code(resource_type),
            name,
            pattern_type: PatternType::from_code(pattern_type),
        },
        entry: AccessControlEntryFilter {
            principal,
            host,
            operation: Operation::from_code(operation),
            permission: Permission::from_code(permission),
        },
    }
}
