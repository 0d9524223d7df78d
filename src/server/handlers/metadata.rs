//! Metadata (key 3): the live agents as brokers, each partition led by one agent of the
//! client's zone (see `routing`); topics created on first use when auto-creation is on and the
//! client allows it.

use crate::protocol::ErrorCode;
use crate::protocol::messages::MetadataRequest;
use crate::protocol::messages::MetadataResponse;
use crate::protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::server::routing;
use std::collections::BTreeMap;

pub async fn handle(
    broker: &Broker,
    request: MetadataRequest,
    version: i16,
    client_id: Option<&str>,
) -> MetadataResponse {
    let shown = broker.shown_brokers();
    let zone = routing::client_zone(client_id);
    // Version 0 has no null: an empty list there means every topic.
    let requested: Option<Vec<String>> = match &request.topics {
        Some(topics) if !(version == 0 && topics.is_empty()) => {
            Some(topics.iter().filter_map(|t| t.name.clone()).collect())
        }
        _ => None,
    };
    let auto_create =
        broker.config.auto_create_topics && (version < 4 || request.allow_auto_topic_creation);
    let mut create_errors = BTreeMap::new();
    if let Some(names) = &requested {
        for name in names {
            let exists = broker.metadata.read(|s| s.topic(name).is_some());
            if !exists
                && auto_create
                && let Err(code) = broker
                    .create_topic(name, broker.config.default_partitions, BTreeMap::new())
                    .await
                && code != ErrorCode::TopicAlreadyExists
            {
                create_errors.insert(name.clone(), code);
            }
        }
    }
    let topics = broker.metadata.read(|state| {
        let describe = |name: &str| match state.topic(name) {
            Some(topic) => MetadataResponseTopic {
                name: Some(topic.name.clone()),
                topic_id: topic.id,
                partitions: (0..topic.partitions.len() as i32)
                    .map(|index| {
                        let leader = routing::leader(&shown, zone, &topic.id, index)
                            .unwrap_or(broker.node_id());
                        MetadataResponsePartition {
                            partition_index: index,
                            leader_id: leader,
                            leader_epoch: LEADER_EPOCH,
                            replica_nodes: vec![leader],
                            isr_nodes: vec![leader],
                            ..Default::default()
                        }
                    })
                    .collect(),
                ..Default::default()
            },
            None => MetadataResponseTopic {
                name: Some(name.to_string()),
                error_code: create_errors
                    .get(name)
                    .copied()
                    .unwrap_or(ErrorCode::UnknownTopicOrPartition)
                    .code(),
                ..Default::default()
            },
        };
        match &requested {
            Some(names) => names.iter().map(|n| describe(n)).collect::<Vec<_>>(),
            None => state.topics().map(|t| describe(&t.name)).collect(),
        }
    });
    MetadataResponse {
        brokers: shown
            .iter()
            .map(|s| MetadataResponseBroker {
                node_id: s.id,
                host: s.host.clone(),
                port: s.port,
                rack: s.zone.clone(),
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(broker.cluster_id()),
        controller_id: broker.shown_id_in(&shown),
        topics,
        ..Default::default()
    }
}
