//! DescribeConfigs (key 32): a topic's configs (Kafka's, with defaults, sources and
//! synonyms), or a broker's: floe's effective settings under Kafka's names, read-only.

use crate::groups::group_config;
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
    RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC, all_or_refuse, refused_code,
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
    const NEEDS: Needs = Needs::Acls(&[
        Acl::TOPIC_DESCRIBE_CONFIGS,
        Acl::CLUSTER_DESCRIBE_CONFIGS,
        Acl::GROUP_DESCRIBE_CONFIGS,
    ]);

    fn coordinator(_: &DescribeConfigsRequest) -> Option<&str> {
        None
    }

    /// Any resource denied: every resource is answered 29 (a topic) or 31 (the cluster's).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeConfigsRequest,
        version: i16,
    ) -> Authorized<DescribeConfigsResponse> {
        let acls = (
            Acl::TOPIC_DESCRIBE_CONFIGS,
            Acl::CLUSTER_DESCRIBE_CONFIGS,
            Acl::GROUP_DESCRIBE_CONFIGS,
        );
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
                RESOURCE_GROUP => group_entries(broker, &r.resource_name),
                other => Err((
                    ErrorCode::InvalidRequest,
                    Some(format!("Unsupported resource type {other}")),
                )),
            };
            match entries {
                Ok(entries) => result.configs = shown(entries, r, &request),
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
    request: &DescribeConfigsRequest,
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
            synonyms: if request.include_synonyms {
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
            documentation: e.documentation.filter(|_| request.include_documentation),
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

/// A group's configs (Kafka's group configs that floe honours), set or from the broker's
/// settings; a group need not exist (as in Kafka).
fn group_entries(broker: &Broker, group: &str) -> Result<Vec<(Entry, bool)>, DescribeError> {
    /// Kafka's ConfigSource GROUP_CONFIG.
    const SOURCE_GROUP: i8 = 8;
    if group.is_empty() {
        return Err((
            ErrorCode::InvalidRequest,
            Some("Default group resources are not allowed.".into()),
        ));
    }
    let set = broker
        .metadata
        .read(|s| s.group_configs(group).cloned())
        .unwrap_or_default();
    let entries = group_config::NAMES
        .iter()
        .map(|name| {
            let default = group_config::default_of(name, &broker.config.share).unwrap_or_default();
            let (value, source) = match set.get(*name) {
                Some(value) => (value.clone(), SOURCE_GROUP),
                None => (default, describe::SOURCE_STATIC_BROKER),
            };
            let entry = Entry {
                name: name.to_string(),
                value,
                source,
                synonyms: Vec::new(),
                config_type: group_config::config_type(name),
                documentation: None,
            };
            (entry, false)
        })
        .collect();
    Ok(entries)
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
    let settings: Vec<(&str, String, Kind, &str)> = vec![
        ("broker.id", id.to_string(), Kind::Int, "The id clients see for this agent (in Metadata and DescribeCluster)."),
        ("node.id", broker.node_id().to_string(), Kind::Int, "This agent's id in the metadata quorum's registry."),
        ("listeners", format!("PLAINTEXT://{}", config.kafka_addr), Kind::String, "The address the Kafka listener binds (--kafka-addr)."),
        ("advertised.listeners", format!("PLAINTEXT://{host}:{port}"), Kind::String, "The address clients are told to connect to (--advertised-addr, or the bound one)."),
        ("broker.rack", config.zone.clone().unwrap_or_default(), Kind::String, "This agent's zone (--zone): clients in a zone are sent to agents of that zone."),
        ("log.dirs", config.data_dir.display().to_string(), Kind::String, "The data directory (--data-dir): the quorum's log and the read cache; records live in the object store."),
        // Durability comes from the object store, not from broker replicas.
        ("num.partitions", config.default_partitions.to_string(), Kind::Int, "Partitions of a topic created without a count (--default-partitions)."),
        ("default.replication.factor", "1".into(), Kind::Short, "Always 1: durability comes from the object store, not from broker replicas."),
        ("auto.create.topics.enable", config.auto_create_topics.to_string(), Kind::Boolean, "Whether Metadata and Produce create a topic that does not exist (--auto-create-topics)."),
        ("delete.topic.enable", "true".into(), Kind::Boolean, "Topics can always be deleted."),
        ("message.max.bytes", config.batch_bytes_max.to_string(), Kind::Int, "The largest record batch accepted (--batch-bytes-max)."),
        ("socket.request.max.bytes", config.frame_bytes_max.to_string(), Kind::Int, "The largest request frame accepted; a larger one closes the connection."),
        ("fetch.max.bytes", config.fetch_bytes_max.to_string(), Kind::Int, "The most one Fetch answers, whatever the client asks."),
        ("max.connections", config.connections_max.to_string(), Kind::Int, "Connections this agent accepts (--connections-max)."),
        ("max.connections.per.ip", config.connections_per_ip_max.to_string(), Kind::Int, "Connections this agent accepts from one address (--connections-per-ip-max)."),
        ("connections.max.idle.ms", ms(config.connection_idle_timeout), Kind::Long, "A connection idle this long is closed."),
        ("connection.failed.authentication.delay.ms", ms(config.failed_authentication_delay), Kind::Int, "How long a refused login waits for its answer before its connection closes (--failed-authentication-delay)."),
        ("group.initial.rebalance.delay.ms", ms(config.group_initial_rebalance_delay), Kind::Int, "How long a new classic group waits for more members before its first rebalance."),
        ("group.consumer.heartbeat.interval.ms", ms(config.group_consumer_heartbeat_interval), Kind::Int, "The heartbeat interval given to consumer-protocol (KIP-848) members."),
        ("group.consumer.session.timeout.ms", ms(config.group_consumer_session_timeout), Kind::Int, "A consumer-protocol member silent this long leaves its group."),
        ("group.consumer.max.size", config.group_consumer_max_size.to_string(), Kind::Int, "The most members a consumer-protocol group holds."),
        ("producer.id.expiration.ms", PRODUCER_ID_EXPIRATION_MS.to_string(), Kind::Int, "An idempotent producer's state is dropped after this long without a write."),
        ("transaction.max.timeout.ms", config.transaction_max_timeout_ms.to_string(), Kind::Int, "The longest transaction timeout a producer may ask for."),
        ("floe.transaction.version", config.transaction_version.to_string(), Kind::Int, "Kafka's transaction.version floe behaves as (KIP-890)."),
        ("transactional.id.expiration.ms", TRANSACTIONAL_ID_EXPIRATION_MS.to_string(), Kind::Int, "A transactional id unused this long is forgotten."),
        ("floe.flush.interval.ms", ms(config.flush_interval), Kind::Long, "How long produced records wait to be written to the object store in one object (--flush-interval): latency against PUTs."),
        ("floe.object.bytes.max", config.object_bytes_max.to_string(), Kind::Long, "An object is written early when it reaches this size (--object-bytes-max)."),
        ("floe.block.cache.bytes.max", config.read.block_cache_bytes_max.to_string(), Kind::Long, "Memory for blocks of objects read back (--block-cache-bytes-max)."),
        ("floe.read.block.bytes", config.read.block_bytes.to_string(), Kind::Long, "The size of the ranges read from objects and cached."),
        ("floe.hot.tier.bytes.max", config.read.hot_tier_bytes_max.to_string(), Kind::Long, "Local disk for recently written objects, read before the store (--hot-tier-bytes-max)."),
    ];
    let entry = |name: &str, value: String, kind: Kind, source: i8, doc: String| Entry {
        name: name.to_string(),
        documentation: Some(doc),
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
        .map(|(name, value, kind, doc)| {
            let doc = doc.to_string();
            (entry(name, value, kind, SOURCE_STATIC_BROKER, doc), true)
        })
        .collect();
    // The broker configs that give topic configs their defaults.
    for def in TOPIC_CONFIGS {
        let Some(primary) = def.synonyms.first() else {
            continue;
        };
        if entries.iter().any(|(e, _)| e.name == *primary) {
            continue;
        }
        let doc = format!("The default of the topic config {}. {}", def.name, def.doc);
        entries.push((
            entry(
                primary,
                def.default.to_string(),
                def.kind,
                SOURCE_DEFAULT,
                doc,
            ),
            true,
        ));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::handlers::testing::TestNode;

    fn describing(resource_type: i8, name: &str, documentation: bool) -> DescribeConfigsRequest {
        DescribeConfigsRequest {
            resources: vec![DescribeConfigsResource {
                resource_type,
                resource_name: name.into(),
                configuration_keys: None,
                ..Default::default()
            }],
            include_synonyms: true,
            include_documentation: documentation,
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn documents_every_config_when_asked_and_only_then() {
        let node = TestNode::start().await;
        node.create_topic("docs", 1).await;
        let broker_id = node.running.broker.shown_id().to_string();
        for (resource_type, name) in [(RESOURCE_TOPIC, "docs"), (RESOURCE_BROKER, &*broker_id)] {
            let asked = node
                .call::<DescribeConfigs>(&describing(resource_type, name, true), 4)
                .await;
            let configs = &asked.results[0].configs;
            assert!(configs.len() > 20, "{asked:?}");
            for config in configs {
                let doc = config.documentation.as_deref().unwrap_or_default();
                assert!(!doc.is_empty(), "{name}: {} is not documented", config.name);
            }
            let not_asked = node
                .call::<DescribeConfigs>(&describing(resource_type, name, false), 4)
                .await;
            assert!(
                not_asked.results[0]
                    .configs
                    .iter()
                    .all(|c| c.documentation.is_none())
            );
        }
        node.stop().await;
    }
}
