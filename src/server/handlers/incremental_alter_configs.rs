//! IncrementalAlterConfigs (key 44): sets, deletes, appends to or subtracts from a topic's
//! configs one by one. A broker's settings are floe's command line, so they are refused.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use crate::protocol::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::handlers::configs::{
    RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC, all_or_refuse, apply_group, apply_topic,
    broker_alter_refusal, check_resources, refused_code, split,
};
use crate::topic_config::alter;

pub struct IncrementalAlterConfigs;

impl Api for IncrementalAlterConfigs {
    type Request = IncrementalAlterConfigsRequest;
    type Response = IncrementalAlterConfigsResponse;
    const KEY: ApiKey = ApiKey::IncrementalAlterConfigs;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Acls(&[
        Acl::TOPIC_ALTER_CONFIGS,
        Acl::CLUSTER_ALTER_CONFIGS,
        Acl::GROUP_ALTER_CONFIGS,
    ]);

    fn coordinator(_: &IncrementalAlterConfigsRequest) -> Option<&str> {
        None
    }

    /// Any resource denied: every resource is answered 29 (a topic) or 31 (the cluster's).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut IncrementalAlterConfigsRequest,
        version: i16,
    ) -> Authorized<IncrementalAlterConfigsResponse> {
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

    async fn handle(
        ctx: Ctx<'_>,
        request: IncrementalAlterConfigsRequest,
    ) -> Reply<IncrementalAlterConfigsResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsResponse {
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
                let ops: Vec<(String, i8, Option<String>)> = r
                    .configs
                    .iter()
                    .map(|c| (c.name.clone(), c.config_operation, c.value.clone()))
                    .collect();
                apply_topic(broker, &r.resource_name, request.validate_only, |current| {
                    alter::incremental(current, &ops)
                })
                .await
            }
            (None, RESOURCE_BROKER) => Err(broker_alter_refusal(&r.resource_name)),
            (None, RESOURCE_GROUP) => {
                let ops: Vec<(String, i8, Option<String>)> = r
                    .configs
                    .iter()
                    .map(|c| (c.name.clone(), c.config_operation, c.value.clone()))
                    .collect();
                apply_group(broker, &r.resource_name, &ops, request.validate_only).await
            }
            (None, other) => Err((
                ErrorCode::InvalidRequest,
                format!("Unknown resource type {other}"),
            )),
        };
        let (code, message) = split(result);
        responses.push(AlterConfigsResourceResponse {
            error_code: code.code(),
            error_message: message,
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            ..Default::default()
        });
    }
    IncrementalAlterConfigsResponse {
        responses,
        ..Default::default()
    }
}
