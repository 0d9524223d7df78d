//! CreateAcls (key 30): adds ACL bindings to the replicated state. It needs Cluster ALTER;
//! without an authorizer (`--authorizer none`) every answer is SECURITY_DISABLED, as in Kafka.

use crate::metadata::state;
use crate::protocol::ApiKey;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::messages::create_acls_response::AclCreationResult;
use crate::protocol::messages::{CreateAclsRequest, CreateAclsResponse};
use crate::security::acl::{
    AccessControlEntry, AclBinding, Operation, PatternType, Permission, ResourcePattern,
    ResourceType,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;
use crate::server::error_codes::{self, Role};
use crate::server::handlers::acls::refusal;

pub struct CreateAcls;

impl Api for CreateAcls {
    type Request = CreateAclsRequest;
    type Response = CreateAclsResponse;
    const KEY: ApiKey = ApiKey::CreateAcls;
    const VERSIONS: (i16, i16) = (1, 3);
    const NEEDS: Needs = Needs::InHandler(&[Acl::CLUSTER_ALTER]);

    fn coordinator(_: &CreateAclsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut CreateAclsRequest,
        _: i16,
    ) -> Authorized<CreateAclsResponse> {
        // The handler checks Cluster ALTER itself: it must also answer SECURITY_DISABLED when no
        // authorizer runs (and then this is not called).
        Authorized::run()
    }

    async fn handle(ctx: Ctx<'_>, request: CreateAclsRequest) -> Reply<CreateAclsResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.client, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: CreateAclsRequest,
    client: Client<'_>,
    version: i16,
) -> CreateAclsResponse {
    if let Some((code, message)) = refusal(broker, &client, Operation::Alter) {
        return request.error_response_with(version, code, Some(message));
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
    match broker.metadata.write(state::CreateAcls { bindings }).await {
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
            request.error_response_with(version, code, Some(&format!("{code:?}")))
        }
    }
}
