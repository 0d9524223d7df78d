//! AlterConfigs (key 33), the legacy one: the request's configs replace all of a topic's
//! configs. A broker's settings are floe's command line, so they are refused.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::messages::alter_configs_response::AlterConfigsResourceResponse as LegacyResponse;
use crate::protocol::messages::{AlterConfigsRequest, AlterConfigsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::handlers::configs::{
    RESOURCE_BROKER, RESOURCE_TOPIC, all_or_refuse, apply_topic, broker_alter_refusal,
    check_resources, refused_code, split,
};
use crate::topic_config::alter;

pub struct AlterConfigs;

impl Api for AlterConfigs {
    type Request = AlterConfigsRequest;
    type Response = AlterConfigsResponse;
    const KEY: ApiKey = ApiKey::AlterConfigs;
    const VERSIONS: (i16, i16) = (0, 2);
    const NEEDS: Needs = Needs::Acls(&[
        Acl::TOPIC_ALTER_CONFIGS,
        Acl::CLUSTER_ALTER_CONFIGS,
        Acl::GROUP_ALTER_CONFIGS,
    ]);

    fn coordinator(_: &AlterConfigsRequest) -> Option<&str> {
        None
    }

    /// Any resource denied: every resource is answered 29 (a topic) or 31 (the cluster's).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut AlterConfigsRequest,
        version: i16,
    ) -> Authorized<AlterConfigsResponse> {
        let acls = (
            Acl::TOPIC_ALTER_CONFIGS,
            Acl::CLUSTER_ALTER_CONFIGS,
            Acl::GROUP_ALTER_CONFIGS,
        );
        let resources = request
            .resources
            .iter()
            .map(|r| (r.resource_type, r.resource_name.as_str()));
        all_or_refuse(gate, acls, resources, || {
            let mut answer = request.error_response(version, ErrorCode::TopicAuthorizationFailed);
            for resource in &mut answer.responses {
                resource.error_code = refused_code(resource.resource_type);
            }
            answer
        })
    }

    async fn handle(ctx: Ctx<'_>, request: AlterConfigsRequest) -> Reply<AlterConfigsResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

/// The legacy AlterConfigs: the request's configs replace all of a topic's configs.
pub async fn handle(broker: &Broker, request: AlterConfigsRequest) -> AlterConfigsResponse {
    let duplicate = check_resources(
        request
            .resources
            .iter()
            .map(|r| (r.resource_type, r.resource_name.as_str())),
    );
    let mut responses = Vec::new();
    for r in &request.resources {
        let result = match (&duplicate, r.resource_type) {
            (Some(refusal), _) => Err(refusal.clone()),
            (None, RESOURCE_TOPIC) => {
                let entries: Vec<(String, Option<String>)> = r
                    .configs
                    .iter()
                    .map(|c| (c.name.clone(), c.value.clone()))
                    .collect();
                apply_topic(broker, &r.resource_name, request.validate_only, |_| {
                    alter::replace(&entries)
                })
                .await
            }
            (None, RESOURCE_BROKER) => Err(broker_alter_refusal(&r.resource_name)),
            (None, other) => Err((
                ErrorCode::InvalidRequest,
                format!("Unknown resource type {other}"),
            )),
        };
        let (code, message) = split(result);
        responses.push(LegacyResponse {
            error_code: code.code(),
            error_message: message,
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            ..Default::default()
        });
    }
    AlterConfigsResponse {
        responses,
        ..Default::default()
    }
}
