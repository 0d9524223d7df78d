//! DescribeAcls (key 29): the ACL bindings in the replicated state that match a filter,
//! grouped by resource pattern as Kafka groups them. It needs Cluster DESCRIBE; without an
//! authorizer (`--authorizer none`) the answer is SECURITY_DISABLED, as in Kafka.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use crate::protocol::messages::{DescribeAclsRequest, DescribeAclsResponse};
use crate::security::acl::{Operation, ResourcePattern};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;
use crate::server::handlers::acls::{filter, refusal};
use std::collections::BTreeMap;

pub struct DescribeAcls;

impl Api for DescribeAcls {
    type Request = DescribeAclsRequest;
    type Response = DescribeAclsResponse;
    const KEY: ApiKey = ApiKey::DescribeAcls;
    const VERSIONS: (i16, i16) = (1, 3);
    const NEEDS: Needs = Needs::InHandler(&[Acl::CLUSTER_DESCRIBE]);

    fn coordinator(_: &DescribeAclsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut DescribeAclsRequest,
        _: i16,
    ) -> Authorized<DescribeAclsResponse> {
        // The handler checks Cluster DESCRIBE itself: it must also answer SECURITY_DISABLED when no
        // authorizer runs (and then this is not called).
        Authorized::run()
    }

    async fn handle(ctx: Ctx<'_>, request: DescribeAclsRequest) -> Reply<DescribeAclsResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.client, ctx.version))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeAclsRequest,
    client: Client<'_>,
    version: i16,
) -> DescribeAclsResponse {
    let refuse = |code: ErrorCode, message: &str| {
        DescribeAclsRequest::default().error_response_with(version, code, Some(message))
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
