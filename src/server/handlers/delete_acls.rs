//! DeleteAcls (key 31): removes the ACL bindings that match each filter from the replicated
//! state, answering the bindings removed. It needs Cluster ALTER; without an authorizer
//! (`--authorizer none`) every answer is SECURITY_DISABLED, as in Kafka.

use crate::metadata::state;
use crate::protocol::ApiKey;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use crate::protocol::messages::{DeleteAclsRequest, DeleteAclsResponse};
use crate::security::acl::{AclBindingFilter, Operation};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;
use crate::server::error_codes::{self, Role};
use crate::server::handlers::acls::{filter, refusal};

pub struct DeleteAcls;

impl Api for DeleteAcls {
    type Request = DeleteAclsRequest;
    type Response = DeleteAclsResponse;
    const KEY: ApiKey = ApiKey::DeleteAcls;
    const VERSIONS: (i16, i16) = (1, 3);
    const NEEDS: Needs = Needs::InHandler(&[Acl::CLUSTER_ALTER]);

    fn coordinator(_: &DeleteAclsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut DeleteAclsRequest,
        _: i16,
    ) -> Authorized<DeleteAclsResponse> {
        // The handler checks Cluster ALTER itself: it must also answer SECURITY_DISABLED when no
        // authorizer runs (and then this is not called).
        Authorized::run()
    }

    async fn handle(ctx: Ctx<'_>, request: DeleteAclsRequest) -> Reply<DeleteAclsResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.client, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: DeleteAclsRequest,
    client: Client<'_>,
    version: i16,
) -> DeleteAclsResponse {
    if let Some((code, message)) = refusal(broker, &client, Operation::Alter) {
        return request.error_response_with(version, code, Some(message));
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
    match broker.metadata.write(state::DeleteAcls { filters }).await {
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
            request.error_response_with(version, code, Some(&format!("{code:?}")))
        }
    }
}
