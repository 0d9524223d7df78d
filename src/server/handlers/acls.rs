//! CreateAcls (key 30), DescribeAcls (29), DeleteAcls (31): the ACL bindings in the
//! replicated state. Changing them needs Cluster ALTER, reading them Cluster DESCRIBE; without
//! an authorizer (`--authorizer none`) every answer is SECURITY_DISABLED, as in Kafka.

use crate::protocol::ErrorCode;
use crate::protocol::messages::create_acls_response::AclCreationResult;
use crate::protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use crate::protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use crate::protocol::messages::{
    CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse,
};
use crate::security::acl::{
    AccessControlEntry, AccessControlEntryFilter, AclBinding, AclBindingFilter, Operation,
    PatternType, Permission, ResourcePattern, ResourcePatternFilter, ResourceType,
};
use crate::server::broker::Broker;
use crate::server::error_codes::{self, Role};
use crate::server::handlers::Client;
use std::collections::BTreeMap;

/// Why the ACL APIs refuse `client` outright: no authorizer, or no `operation` on the cluster.
fn refusal(
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

fn filter(
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

pub async fn create(
    broker: &Broker,
    request: CreateAclsRequest,
    client: Client<'_>,
) -> CreateAclsResponse {
    let all = |code: ErrorCode, message: &str| CreateAclsResponse {
        results: request
            .creations
            .iter()
            .map(|_| AclCreationResult {
                error_code: code.code(),
                error_message: Some(message.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    if let Some((code, message)) = refusal(broker, &client, Operation::Alter) {
        return all(code, message);
    }
    let bindings: Vec<AclBinding> = request
        .creations
        .iter()
        .map(|c| AclBinding {
            pattern: ResourcePattern {
                resource_type: ResourceType::from_code(c.resource_type),
                name: c.resource_name.clone(),
                pattern_type: PatternType::from_code(c.resource_pattern_type),
            },
            entry: AccessControlEntry {
                principal: c.principal.clone(),
                host: c.host.clone(),
                operation: Operation::from_code(c.operation),
                permission: Permission::from_code(c.permission_type),
            },
        })
        .collect();
    match broker.metadata.create_acls(bindings).await {
        Ok(results) => CreateAclsResponse {
            results: results
                .into_iter()
                .map(|r| match r {
                    Ok(()) => AclCreationResult::default(),
                    Err(e) => AclCreationResult {
                        error_code: e.error_code().code(),
                        error_message: Some(e.to_string()),
                        ..Default::default()
                    },
                })
                .collect(),
            ..Default::default()
        },
        Err(e) => {
            let code = error_codes::failed_write(&e, Role::Controller);
            all(code, &format!("{code:?}"))
        }
    }
}

pub fn describe(
    broker: &Broker,
    request: DescribeAclsRequest,
    client: Client<'_>,
) -> DescribeAclsResponse {
    let refuse = |code: ErrorCode, message: &str| DescribeAclsResponse {
        error_code: code.code(),
        error_message: Some(message.to_string()),
        ..Default::default()
    };
    if let Some((code, message)) = refusal(broker, &client, Operation::Describe) {
        return refuse(code, message);
    }
    let filter = filter(
        request.resource_type_filter,
        request.resource_name_filter,
        request.pattern_type_filter,
        request.principal_filter,
        request.host_filter,
        request.operation,
        request.permission_type,
    );
    if let Err(e) = filter.validate() {
        return refuse(e.error_code(), &e.to_string());
    }
    let found = broker
        .metadata
        .read(|s| s.security().acls().describe(&filter));
    // One resource entry per pattern, its entries under it (Kafka's grouping).
    let mut resources: BTreeMap<ResourcePattern, Vec<AclDescription>> = BTreeMap::new();
    for binding in found {
        resources
            .entry(binding.pattern)
            .or_default()
            .push(AclDescription {
                principal: binding.entry.principal,
                host: binding.entry.host,
                operation: binding.entry.operation.code(),
                permission_type: binding.entry.permission.code(),
                ..Default::default()
            });
    }
    DescribeAclsResponse {
        resources: resources
            .into_iter()
            .map(|(pattern, acls)| DescribeAclsResource {
                resource_type: pattern.resource_type.code(),
                resource_name: pattern.name,
                pattern_type: pattern.pattern_type.code(),
                acls,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub async fn delete(
    broker: &Broker,
    request: DeleteAclsRequest,
    client: Client<'_>,
) -> DeleteAclsResponse {
    let all = |code: ErrorCode, message: &str| DeleteAclsResponse {
        filter_results: request
            .filters
            .iter()
            .map(|_| DeleteAclsFilterResult {
                error_code: code.code(),
                error_message: Some(message.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    if let Some((code, message)) = refusal(broker, &client, Operation::Alter) {
        return all(code, message);
    }
    let filters: Vec<AclBindingFilter> = request
        .filters
        .iter()
        .map(|f| {
            filter(
                f.resource_type_filter,
                f.resource_name_filter.clone(),
                f.pattern_type_filter,
                f.principal_filter.clone(),
                f.host_filter.clone(),
                f.operation,
                f.permission_type,
            )
        })
        .collect();
    match broker.metadata.delete_acls(filters).await {
        Ok(results) => DeleteAclsResponse {
            filter_results: results
                .into_iter()
                .map(|r| match r {
                    Ok(removed) => DeleteAclsFilterResult {
                        matching_acls: removed
                            .into_iter()
                            .map(|b| DeleteAclsMatchingAcl {
                                resource_type: b.pattern.resource_type.code(),
                                resource_name: b.pattern.name,
                                pattern_type: b.pattern.pattern_type.code(),
                                principal: b.entry.principal,
                                host: b.entry.host,
                                operation: b.entry.operation.code(),
                                permission_type: b.entry.permission.code(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    },
                    Err(e) => DeleteAclsFilterResult {
                        error_code: e.error_code().code(),
                        error_message: Some(e.to_string()),
                        ..Default::default()
                    },
                })
                .collect(),
            ..Default::default()
        },
        Err(e) => {
            let code = error_codes::failed_write(&e, Role::Controller);
            all(code, &format!("{code:?}"))
        }
    }
}
