//! Metadata (key 3): this agent as the one broker and leader of every partition; topics
//! created on first use when auto-creation is on and the client allows it.

use crate::protocol::ErrorCode;
use crate::protocol::messages::MetadataRequest;
use crate::protocol::messages::MetadataResponse;
use crate::protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use crate::server::broker::{Broker, LEADER_EPOCH};
use std::collections::BTreeMap;

pub async fn handle(broker: &Broker, request: MetadataRequest, version: i16) -> MetadataResponse {
    let (host, port) = broker.advertised();
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
                    .map(|index| MetadataResponsePartition {
                        partition_index: index,
                        leader_id: broker.node_id(),
                        leader_epoch: LEADER_EPOCH,
                        replica_nodes: vec![broker.node_id()],
                        isr_nodes: vec![broker.node_id()],
                        ..Default::default()
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
        brokers: vec![MetadataResponseBroker {
            node_id: broker.node_id(),
            host,
            port,
            rack: None,
            ..Default::default()
        }],
        cluster_id: Some(broker.cluster_id.clone()),
        controller_id: broker.node_id(),
        topics,
        ..Default::default()
    }
}
