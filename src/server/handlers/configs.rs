//! DescribeConfigs (key 32) and IncrementalAlterConfigs (key 44) for topic configs.
//! Configs are stored in metadata; their enforcement (retention, compaction) comes later.

use crate::produce::timestamps;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult,
};
use crate::protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use crate::protocol::messages::{
    DescribeConfigsRequest, DescribeConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};
use crate::server::broker::Broker;
use crate::server::error_codes::topic_change;

const RESOURCE_TOPIC: i8 = 2;
/// Config source: DYNAMIC_TOPIC_CONFIG.
const SOURCE_TOPIC: i8 = 1;

pub fn describe(broker: &Broker, request: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let results = broker.metadata.read(|state| {
        request
            .resources
            .iter()
            .map(|r| {
                let mut result = DescribeConfigsResult {
                    resource_type: r.resource_type,
                    resource_name: r.resource_name.clone(),
                    ..Default::default()
                };
                if r.resource_type != RESOURCE_TOPIC {
                    result.error_code = ErrorCode::InvalidRequest.code();
                    result.error_message = Some("only topic configs are described".into());
                    return result;
                }
                match state.topic(&r.resource_name) {
                    None => result.error_code = ErrorCode::UnknownTopicOrPartition.code(),
                    Some(topic) => {
                        result.configs = topic
                            .configs
                            .iter()
                            .filter(|(k, _)| {
                                r.configuration_keys
                                    .as_ref()
                                    .is_none_or(|keys| keys.contains(k))
                            })
                            .map(|(k, v)| DescribeConfigsResourceResult {
                                name: k.clone(),
                                value: Some(v.clone()),
                                config_source: SOURCE_TOPIC,
                                ..Default::default()
                            })
                            .collect()
                    }
                }
                result
            })
            .collect()
    });
    DescribeConfigsResponse {
        results,
        ..Default::default()
    }
}

pub async fn incremental_alter(
    broker: &Broker,
    request: IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsResponse {
    let mut responses = Vec::new();
    for r in &request.resources {
        let mut out = AlterConfigsResourceResponse {
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            ..Default::default()
        };
        // Operations: 0 SET, 1 DELETE; APPEND and SUBTRACT apply to list configs only.
        let changes: Result<Vec<(String, Option<String>)>, String> = r
            .configs
            .iter()
            .map(|c| match c.config_operation {
                0 => match timestamps::config_error(&c.name, c.value.as_deref()) {
                    Some(message) => Err(message),
                    None => Ok((c.name.clone(), c.value.clone())),
                },
                1 => Ok((c.name.clone(), None)),
                op => Err(format!(
                    "config operation {op} is not supported for {}",
                    c.name
                )),
            })
            .collect();
        let code = match (r.resource_type, changes) {
            (RESOURCE_TOPIC, Ok(changes)) if request.validate_only => {
                let _ = changes;
                ErrorCode::None
            }
            (RESOURCE_TOPIC, Ok(changes)) => topic_change(
                broker
                    .metadata
                    .alter_topic_configs(r.resource_name.clone(), changes)
                    .await,
            ),
            (RESOURCE_TOPIC, Err(message)) => {
                out.error_message = Some(message);
                ErrorCode::InvalidConfig
            }
            _ => {
                out.error_message = Some("only topic configs can be altered".into());
                ErrorCode::InvalidRequest
            }
        };
        out.error_code = code.code();
        responses.push(out);
    }
    IncrementalAlterConfigsResponse {
        responses,
        ..Default::default()
    }
}
