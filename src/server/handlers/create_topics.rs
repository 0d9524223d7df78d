//! CreateTopics (key 19). Replication factor and assignments are accepted and ignored: data
//! durability comes from the object store, not from broker replicas.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ItemErrors;
use crate::protocol::messages::CreateTopicsRequest;
use crate::protocol::messages::CreateTopicsResponse;
use crate::protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::{Broker, validate_topic_name};
use crate::server::handlers::describe_configs::broker_topic_defaults;
use crate::server::mutation_quota::{Mutations, THROTTLED_MESSAGE};
use crate::topic_config::{describe, validate};
use std::collections::BTreeMap;

pub struct CreateTopics;

impl Api for CreateTopics {
    type Request = CreateTopicsRequest;
    type Response = CreateTopicsResponse;
    const KEY: ApiKey = ApiKey::CreateTopics;
    const VERSIONS: (i16, i16) = (2, 7);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_CREATE, Acl::TOPIC_CREATE]);

    fn coordinator(_: &CreateTopicsRequest) -> Option<&str> {
        None
    }

    /// Cluster CREATE allows every topic; without it, a topic the client may not create is
    /// answered with TOPIC_AUTHORIZATION_FAILED.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut CreateTopicsRequest,
        version: i16,
    ) -> Authorized<CreateTopicsResponse> {
        let cluster = gate.on_cluster(Operation::Create);
        let refused = CreateTopicsRequest {
            topics: take_refused(&mut request.topics, |t| {
                cluster || gate.allowed(Acl::TOPIC_CREATE, &t.name)
            }),
            ..Default::default()
        };
        Authorized::restoring(move |_, response: &mut CreateTopicsResponse| {
            let mut answer = refused.item_errors(version, ErrorCode::TopicAuthorizationFailed);
            // Kafka's KafkaApis words its per-topic refusal so.
            for topic in &mut answer.topics {
                topic.error_message = Some("Authorization failed.".into());
            }
            CreateTopicsRequest::append_items(response, answer);
        })
    }

    /// Under a `controller_mutation_rate` quota (strict from v6, as in Kafka).
    async fn handle(ctx: Ctx<'_>, request: CreateTopicsRequest) -> Reply<CreateTopicsResponse> {
        let mut response = handle(ctx.broker, request, &Mutations::of(&ctx, 6)).await;
        response.throttle_time_ms = ctx.throttle.field();
        Reply::Now(response)
    }
}

pub async fn handle(
    broker: &Broker,
    request: CreateTopicsRequest,
    mutations: &Mutations<'_>,
) -> CreateTopicsResponse {
    let mut results = Vec::new();
    for topic in &request.topics {
        // A replica assignment names the partitions (its replicas are not used: data lives
        // in the object store); otherwise the count, or the default.
        let partitions = if !topic.assignments.is_empty() {
            i32::try_from(topic.assignments.len()).unwrap_or(i32::MAX)
        } else if topic.num_partitions == -1 {
            broker.config.default_partitions
        } else {
            topic.num_partitions
        };
        let assignment_error = assignment_error(topic);
        let configs: BTreeMap<String, String> = topic
            .configs
            .iter()
            .filter_map(|c| c.value.clone().map(|v| (c.name.clone(), v)))
            .collect();
        let nulls: Vec<&str> = topic
            .configs
            .iter()
            .filter(|c| c.value.is_none())
            .map(|c| c.name.as_str())
            .collect();
        // Kafka's checks and messages; what is stored is normalised as Kafka shows it.
        let checked = if nulls.is_empty() {
            validate::check_all(&configs)
        } else {
            Err(format!(
                "Null value not supported for topic configs: {}",
                nulls.join(",")
            ))
        };
        let configs = checked.clone().unwrap_or(configs);
        // From v5 a created topic's answer lists its configs as DescribeConfigs shows them
        // (clients such as Kafka's Admin read them, and fail on a null list).
        let described: Vec<CreatableTopicConfigs> =
            describe::topic_entries(&configs, &broker_topic_defaults(broker))
                .into_iter()
                .map(|entry| CreatableTopicConfigs {
                    name: entry.name,
                    value: Some(entry.value),
                    config_source: entry.source,
                    ..Default::default()
                })
                .collect();
        let (exists, limits, cluster_partitions) = broker.metadata.read(|s| {
            (
                s.topic(&topic.name).is_some(),
                s.limits(),
                s.partition_count(),
            )
        });
        let config_entries = configs.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())));
        let result = if let Some(refusal) = assignment_error {
            Err(refusal)
        } else if let Err(code) = validate_topic_name(&topic.name) {
            Err((
                code,
                "topic names are 1-249 characters of [a-zA-Z0-9._-]".to_string(),
            ))
        } else if exists {
            Err((
                ErrorCode::TopicAlreadyExists,
                format!("Topic '{}' already exists.", topic.name),
            ))
        } else if let Err(message) = &checked {
            Err((ErrorCode::InvalidConfig, message.clone()))
        } else if !limits.partitions_per_topic_allow(partitions.into()) {
            Err((
                ErrorCode::InvalidPartitions,
                format!("partitions must be 1..={}", limits.partitions_per_topic_max),
            ))
        } else if !limits.partitions_allow(cluster_partitions, partitions as u64) {
            Err((
                ErrorCode::PolicyViolation,
                format!(
                    "the cluster has {cluster_partitions} partitions and holds at most {}",
                    limits.partitions_max
                ),
            ))
        } else if !limits.configs_allow(configs.len(), config_entries) {
            Err((
                ErrorCode::InvalidConfig,
                format!(
                    "at most {} configs, keys of at most {} bytes, values of at most {}",
                    limits.topic_configs_max,
                    limits.config_key_bytes_max,
                    limits.config_value_bytes_max
                ),
            ))
        } else if request.validate_only {
            Ok(())
        } else if !mutations.admit(partitions.max(0) as u64) {
            Err((
                ErrorCode::ThrottlingQuotaExceeded,
                THROTTLED_MESSAGE.to_string(),
            ))
        } else {
            broker
                .create_topic(&topic.name, partitions, configs)
                .await
                .map_err(|code| (code, format!("cannot create topic '{}'", topic.name)))
        };
        let topic_id = broker
            .metadata
            .read(|s| s.topic(&topic.name).map(|t| t.id))
            .unwrap_or_default();
        let (error_code, error_message) = match result {
            Ok(()) => (ErrorCode::None, None),
            Err((code, message)) => (code, Some(message)),
        };
        results.push(CreatableTopicResult {
            name: topic.name.clone(),
            topic_id: if error_code == ErrorCode::None {
                topic_id
            } else {
                uuid::Uuid::nil()
            },
            error_code: error_code.code(),
            error_message,
            num_partitions: if error_code == ErrorCode::None {
                partitions
            } else {
                -1
            },
            replication_factor: if error_code == ErrorCode::None { 1 } else { -1 },
            configs: Some(if error_code == ErrorCode::None {
                described
            } else {
                Vec::new()
            }),
            ..Default::default()
        });
    }
    CreateTopicsResponse {
        topics: results,
        ..Default::default()
    }
}

/// Kafka's checks of a replica assignment: not together with a count or replication factor,
/// and naming partitions 0..n once each.
fn assignment_error(
    topic: &crate::protocol::messages::create_topics_request::CreatableTopic,
) -> Option<(ErrorCode, String)> {
    if topic.assignments.is_empty() {
        return None;
    }
    if topic.num_partitions != -1 || topic.replication_factor != -1 {
        return Some((
            ErrorCode::InvalidRequest,
            "Both numPartitions or replicationFactor and replicasAssignments were set. Both \
             cannot be used at the same time."
                .to_string(),
        ));
    }
    let mut indexes: Vec<i32> = topic
        .assignments
        .iter()
        .map(|a| a.partition_index)
        .collect();
    indexes.sort_unstable();
    let consecutive = indexes.iter().enumerate().all(|(i, &p)| p == i as i32);
    let replicas = topic.assignments.iter().all(|a| !a.broker_ids.is_empty());
    (!consecutive || !replicas).then(|| {
        (
            ErrorCode::InvalidReplicaAssignment,
            "Partitions should be a consecutive 0-based integer sequence, each with at least \
             one replica"
                .to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
    use crate::server::handlers::testing::TestNode;

    fn creating(name: &str, partitions: i32, validate_only: bool) -> CreateTopicsRequest {
        CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: name.into(),
                num_partitions: partitions,
                replication_factor: -1,
                configs: vec![CreatableTopicConfig {
                    name: "retention.ms".into(),
                    value: Some("60000".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            validate_only,
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn creates_once_and_answers_with_the_topics_configs() {
        let node = TestNode::start().await;
        for version in 5..=CreateTopics::VERSIONS.1 {
            let name = format!("t-v{version}");
            // Validating creates nothing, and answers as creating would.
            let checked = node
                .call::<CreateTopics>(&creating(&name, -1, true), version)
                .await;
            let created = node
                .call::<CreateTopics>(&creating(&name, -1, false), version)
                .await;
            let again = node
                .call::<CreateTopics>(&creating(&name, 3, false), version)
                .await;
            for answer in [&checked, &created] {
                let topic = &answer.topics[0];
                assert_eq!(topic.error_code, 0, "v{version}: {topic:?}");
                assert_eq!((topic.num_partitions, topic.replication_factor), (1, 1));
                // Every config, as DescribeConfigs shows it: the one set from the topic.
                let configs = topic.configs.as_ref().expect("configs, never null");
                let retention = configs.iter().find(|c| c.name == "retention.ms");
                let retention = retention.expect("retention.ms listed");
                assert_eq!(retention.value.as_deref(), Some("60000"));
                assert_eq!(retention.config_source, describe::SOURCE_TOPIC);
                assert!(configs.iter().any(|c| c.name == "cleanup.policy"));
            }
            if version >= 7 {
                assert!(!created.topics[0].topic_id.is_nil());
            }
            let refused = &again.topics[0];
            assert_eq!(
                refused.error_code,
                ErrorCode::TopicAlreadyExists.code(),
                "v{version}: {refused:?}"
            );
            assert_eq!(refused.configs.as_deref(), Some(&[][..]));
            assert_eq!(
                (refused.num_partitions, refused.replication_factor),
                (-1, -1)
            );
        }
        node.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn refuses_kafkas_invalid_names_and_configs() {
        let node = TestNode::start().await;
        let mut bad_config = creating("fine", 1, false);
        bad_config.topics[0].configs[0].value = Some("soon".into());
        let answer = node.call::<CreateTopics>(&bad_config, 7).await;
        assert_eq!(answer.topics[0].error_code, ErrorCode::InvalidConfig.code());
        let answer = node
            .call::<CreateTopics>(&creating("no/slash", 1, false), 7)
            .await;
        assert_eq!(
            answer.topics[0].error_code,
            ErrorCode::InvalidTopicException.code()
        );
        let answer = node
            .call::<CreateTopics>(&creating("zero", 0, false), 7)
            .await;
        assert_eq!(
            answer.topics[0].error_code,
            ErrorCode::InvalidPartitions.code()
        );
        node.stop().await;
    }
}
