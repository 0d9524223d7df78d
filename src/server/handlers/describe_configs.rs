//! DescribeConfigs (key 32): a topic's configs (Kafka's, with defaults, sources and
//! synonyms), or a broker's: floe's effective settings under Kafka's names, read-only.

use crate::metadata::state::PRODUCER_ID_EXPIRATION_MS;
use crate::metadata::state::transactions::TRANSACTIONAL_ID_EXPIRATION_MS;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::messages::describe_configs_request::DescribeConfigsResource;
use crate::protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use crate::protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::handlers::configs::{
    RESOURCE_BROKER, RESOURCE_TOPIC, all_or_refuse, refused_code,
};
use crate::topic_config::catalog::{self, Kind, TOPIC_CONFIGS};
use crate::topic_config::describe::{self, Entry, SOURCE_DEFAULT, SOURCE_STATIC_BROKER};
use std::collections::BTreeMap;

pub struct DescribeConfigs;

impl Api for DescribeConfigs {
    type Request = DescribeConfigsRequest;
    type Response = DescribeConfigsResponse;
    const KEY: ApiKey = ApiKey::DescribeConfigs;
    const VERSIONS: (i16, i16) = (1, 4);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_DESCRIBE_CONFIGS, Acl::CLUSTER_DESCRIBE_CONFIGS]);

    fn coordinator(_: &DescribeConfigsRequest) -> Option<&str> {
        None
    }

    /// Any resource denied: every resource is answered 29 (a topic) or 31 (the cluster's).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeConfigsRequest,
        version: i16,
    ) -> Authorized<DescribeConfigsResponse> {
        let acls = (Acl::TOPIC_DESCRIBE_CONFIGS, Acl::CLUSTER_DESCRIBE_CONFIGS);
        let resources = request
            .resources
            .iter()
            .map(|r| (r.resource_type, r.resource_name.as_str()));
        all_or_refuse(gate, acls, resources, || {
            let mut answer = request.error_response(version, ErrorCode::TopicAuthorizationFailed);
            for resource in &mut answer.results {
                resource.error_code = refused_code(resource.resource_type);
            }
            answer
        })
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeConfigsRequest,
    ) -> Reply<DescribeConfigsResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(broker: &Broker, request: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let results = request
        .resources
        .iter()
        .map(|r| {
            let mut result = DescribeConfigsResult {
                resource_type: r.resource_type,
                resource_name: r.resource_name.clone(),
                ..Default::default()
            };
            let entries = match r.resource_type {
                RESOURCE_TOPIC => topic_entries(broker, &r.resource_name),
                RESOURCE_BROKER => broker_entries(broker, &r.resource_name),
                other => Err((
                    ErrorCode::InvalidRequest,
                    Some(format!("Unsupported resource type {other}")),
                )),
            };
            match entries {
                Ok(entries) => result.configs = shown(entries, r, request.include_synonyms),
                Err((code, message)) => {
                    result.error_code = code.code();
                    result.error_message = message;
                }
            }
            result
        })
        .collect();
    DescribeConfigsResponse {
        results,
        ..Default::default()
    }
}

type DescribeError = (ErrorCode, Option<String>);

/// The entries asked for (all when the key list is null or empty; unknown keys are skipped).
fn shown(
    entries: Vec<(Entry, bool)>,
    resource: &DescribeConfigsResource,
    include_synonyms: bool,
) -> Vec<DescribeConfigsResourceResult> {
    let wanted = |name: &str| match &resource.configuration_keys {
        Some(keys) if !keys.is_empty() => keys.iter().any(|k| k == name),
        _ => true,
    };
    entries
        .into_iter()
        .filter(|(e, _)| wanted(&e.name))
        .map(|(e, read_only)| DescribeConfigsResourceResult {
            value: Some(e.value),
            read_only,
            config_source: e.source,
            is_sensitive: false,
            synonyms: if include_synonyms {
                e.synonyms
                    .into_iter()
                    .map(|s| DescribeConfigsSynonym {
                        name: s.name,
                        value: Some(s.value),
                        source: s.source,
                        ..Default::default()
                    })
                    .collect()
            } else {
                Vec::new()
            },
            config_type: e.config_type,
            name: e.name,
            ..Default::default()
        })
        .collect()
}

/// The topic configs floe's own settings change from Kafka's defaults.
pub(crate) fn broker_topic_defaults(broker: &Broker) -> BTreeMap<&'static str, String> {
    let mut defaults = BTreeMap::new();
    let max = broker.config.batch_bytes_max.to_string();
    if catalog::find(catalog::MAX_MESSAGE_BYTES).is_some_and(|d| d.default != max) {
        defaults.insert(catalog::MAX_MESSAGE_BYTES, max);
    }
    defaults
}

fn topic_entries(broker: &Broker, name: &str) -> Result<Vec<(Entry, bool)>, DescribeError> {
    if name.is_empty() {
        return Err((
            ErrorCode::InvalidTopicException,
            Some("Topic name is invalid: the empty string is not allowed".into()),
        ));
    }
    let configs = broker
        .metadata
        .read(|s| s.topic(name).map(|t| t.configs.clone()))
        .ok_or((ErrorCode::UnknownTopicOrPartition, None))?;
    let entries = describe::topic_entries(&configs, &broker_topic_defaults(broker));
    Ok(entries.into_iter().map(|e| (e, false)).collect())
}

/// This agent's settings under Kafka's broker config names, for `name` = this broker's id;
/// the empty name (cluster-wide dynamic defaults) has none.
fn broker_entries(broker: &Broker, name: &str) -> Result<Vec<(Entry, bool)>, DescribeError> {
    let id = broker.shown_id();
    if name.is_empty() {
        return Ok(Vec::new());
    }
    match name.parse::<i32>() {
        Err(_) => {
            return Err((
                ErrorCode::InvalidRequest,
                Some(format!("Broker id must be an integer, but it is: {name}")),
            ));
        }
        // A lane's id names its agent (see `placement`).
        Ok(asked) if ![id, broker.node_id()].contains(&broker.agent_and_lane(asked).0) => {
            return Err((
                ErrorCode::InvalidRequest,
                Some(format!(
                    "Unexpected broker id, expected {id} or empty string, but received {name}"
                )),
            ));
        }
        Ok(_) => {}
    }
    let config = &broker.config;
    let (host, port) = broker.advertised();
    let ms = |d: std::time::Duration| d.as_millis().to_string();
    // One line per setting: floe's value under Kafka's name.
    #[rustfmt::skip]
    let settings: Vec<(&str, String, Kind)> = vec![
        ("broker.id", id.to_string(), Kind::Int),
        ("node.id", broker.node_id().to_string(), Kind::Int),
        ("listeners", format!("PLAINTEXT://{}", config.kafka_addr), Kind::String),
        ("advertised.listeners", format!("PLAINTEXT://{host}:{port}"), Kind::String),
        ("broker.rack", config.zone.clone().unwrap_or_default(), Kind::String),
        ("log.dirs", config.data_dir.display().to_string(), Kind::String),
        ("num.partitions", config.default_partitions.to_string(), Kind::Int),
        // Durability comes from the object store, not from broker replicas.
        ("default.replication.factor", "1".into(), Kind::Short),
        ("auto.create.topics.enable", config.auto_create_topics.to_string(), Kind::Boolean),
        ("delete.topic.enable", "true".into(), Kind::Boolean),
        ("message.max.bytes", config.batch_bytes_max.to_string(), Kind::Int),
        ("socket.request.max.bytes", config.frame_bytes_max.to_string(), Kind::Int),
        ("fetch.max.bytes", config.fetch_bytes_max.to_string(), Kind::Int),
        ("max.connections", config.connections_max.to_string(), Kind::Int),
        ("max.connections.per.ip", config.connections_per_ip_max.to_string(), Kind::Int),
        ("connections.max.idle.ms", ms(config.connection_idle_timeout), Kind::Long),
        ("group.initial.rebalance.delay.ms", ms(config.group_initial_rebalance_delay), Kind::Int),
        ("group.consumer.heartbeat.interval.ms", ms(config.group_consumer_heartbeat_interval), Kind::Int),
        ("group.consumer.session.timeout.ms", ms(config.group_consumer_session_timeout), Kind::Int),
        ("group.consumer.max.size", config.group_consumer_max_size.to_string(), Kind::Int),
        ("producer.id.expiration.ms", PRODUCER_ID_EXPIRATION_MS.to_string(), Kind::Int),
        ("transaction.max.timeout.ms", config.transaction_max_timeout_ms.to_string(), Kind::Int),
        ("floe.transaction.version", config.transaction_version.to_string(), Kind::Int),
        ("transactional.id.expiration.ms", TRANSACTIONAL_ID_EXPIRATION_MS.to_string(), Kind::Int),
        ("floe.flush.interval.ms", ms(config.flush_interval), Kind::Long),
        ("floe.object.bytes.max", config.object_bytes_max.to_string(), Kind::Long),
        ("floe.block.cache.bytes.max", config.read.block_cache_bytes_max.to_string(), Kind::Long),
        ("floe.read.block.bytes", config.read.block_bytes.to_string(), Kind::Long),
        ("floe.hot.tier.bytes.max", config.read.hot_tier_bytes_max.to_string(), Kind::Long),
    ];
    let entry = |name: &str, value: String, kind: Kind, source: i8| Entry {
        name: name.to_string(),
        synonyms: vec![describe::Synonym {
            name: name.to_string(),
            value: value.clone(),
            source,
        }],
        value,
        source,
        config_type: kind.id(),
    };
    let mut entries: Vec<(Entry, bool)> = settings
        .into_iter()
        .map(|(name, value, kind)| (entry(name, value, kind, SOURCE_STATIC_BROKER), true))
        .collect();
    // The broker configs that give topic configs their defaults.
    for def in TOPIC_CONFIGS {
        let Some(primary) = def.synonyms.first() else {
            continue;
        };
        if entries.iter().any(|(e, _)| e.name == *primary) {
            continue;
        }
        entries.push((
            entry(primary, def.default.to_string(), def.kind, SOURCE_DEFAULT),
            true,
        ));
    }
    Ok(entries)
}
