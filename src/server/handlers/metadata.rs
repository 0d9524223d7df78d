//! Metadata (key 3): the live agents as brokers, each partition led by one agent of the
//! client's zone (see `placement`); topics created on first use when auto-creation is on and the
//! client allows it. From v10 a topic may be asked for by id (KIP-516); KIP-848 consumers
//! do so to learn the names of the topics in their assignment.

use crate::placement;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::error_response::ItemErrors;
use crate::protocol::messages::MetadataRequest;
use crate::protocol::messages::MetadataResponse;
use crate::protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use crate::security::acl::{Operation, ResourceType};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::operations;
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::server::caller::Client;
use std::collections::BTreeMap;

pub struct Metadata;

impl Api for Metadata {
    type Request = MetadataRequest;
    type Response = MetadataResponse;
    const KEY: ApiKey = ApiKey::Metadata;
    const VERSIONS: (i16, i16) = (0, 12);
    const NEEDS: Needs =
        Needs::Acls(&[Acl::TOPIC_DESCRIBE, Acl::TOPIC_CREATE, Acl::CLUSTER_CREATE]);

    fn coordinator(_: &MetadataRequest) -> Option<&str> {
        None
    }

    /// A topic the client may not describe: 29 when named (under its id when asked by id),
    /// hidden from every listing. Auto-creation needs Cluster or Topic CREATE.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut MetadataRequest,
        version: i16,
    ) -> Authorized<MetadataResponse> {
        by_id_without_names(request);
        let mut refused = Vec::new();
        if let Some(topics) = &mut request.topics {
            refused = take_refused(topics, |t| {
                let name = gate.topic_name(t.name.as_deref().unwrap_or(""), &t.topic_id);
                // An id nobody knows is the handler's to answer (UNKNOWN_TOPIC_ID).
                (t.name.is_none() && name.is_empty()) || gate.allowed(Acl::TOPIC_DESCRIBE, &name)
            });
            if request.allow_auto_topic_creation
                && !gate.on_cluster(Operation::Create)
                && topics
                    .iter()
                    .any(|t| !gate.allowed(Acl::TOPIC_CREATE, t.name.as_deref().unwrap_or("")))
            {
                request.allow_auto_topic_creation = false;
            }
        }
        let refused = MetadataRequest {
            topics: Some(refused),
            ..Default::default()
        };
        Authorized::restoring(move |gate, response: &mut MetadataResponse| {
            // Topics listed because all were asked for: only the describable ones.
            response.topics.retain(|t| {
                t.name
                    .as_deref()
                    .is_none_or(|name| gate.allowed_quietly(Acl::TOPIC_DESCRIBE, name))
            });
            let refused = refused.item_errors(version, ErrorCode::TopicAuthorizationFailed);
            MetadataRequest::append_items(response, refused);
        })
    }

    async fn handle(ctx: Ctx<'_>, mut request: MetadataRequest) -> Reply<MetadataResponse> {
        by_id_without_names(&mut request);
        Reply::Now(handle(ctx.broker, request, ctx.version, ctx.client).await)
    }
}

/// A topic named by a non-zero id is asked for by its id, whatever its name says: Kafka's
/// Java client sends the name "" beside the id, librdkafka sends null.
fn by_id_without_names(request: &mut MetadataRequest) {
    for topic in request.topics.iter_mut().flatten() {
        if !topic.topic_id.is_nil() && topic.name.as_deref() == Some("") {
            topic.name = None;
        }
    }
}

pub async fn handle(
    broker: &Broker,
    request: MetadataRequest,
    version: i16,
    client: Client<'_>,
) -> MetadataResponse {
    let shown = broker.shown_brokers();
    let zone = placement::client_zone(client.id);
    // Version 0 has no null: an empty list there means every topic.
    let all_topics = match &request.topics {
        Some(topics) => version == 0 && topics.is_empty(),
        None => true,
    };
    let requested: Option<Vec<String>> = (!all_topics).then(|| {
        let topics = request.topics.iter().flatten();
        topics.filter_map(|t| t.name.clone()).collect()
    });
    let by_id: Vec<uuid::Uuid> = match &request.topics {
        Some(topics) if !all_topics => topics
            .iter()
            .filter(|t| t.name.is_none() && !t.topic_id.is_nil())
            .map(|t| t.topic_id)
            .collect(),
        _ => Vec::new(),
    };
    // Below v4 the field is not on the wire and decodes as true; the authorizer may clear it
    // (no CREATE), which must hold at every version.
    let auto_create = broker.config.auto_create_topics && request.allow_auto_topic_creation;
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
                topic_authorized_operations: operations::if_asked(
                    request.include_topic_authorized_operations,
                    operations::TOPIC,
                ),
                partitions: (0..topic.partitions.len() as i32)
                    .map(|index| {
                        let leader = broker.partition_leader(&shown, zone, &topic.id, index);
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
        let by_id = by_id.iter().map(|id| match state.topic_by_id(id) {
            Some(topic) => describe(&topic.name),
            None => MetadataResponseTopic {
                name: None,
                topic_id: *id,
                error_code: ErrorCode::UnknownTopicId.code(),
                ..Default::default()
            },
        });
        match &requested {
            Some(names) => names.iter().map(|n| describe(n)).chain(by_id).collect(),
            None => state
                .topics()
                .map(|t| describe(&t.name))
                .collect::<Vec<_>>(),
        }
    });
    // KIP-430: what this principal may do, once the state is no longer being read.
    let mut topics = topics;
    if request.include_topic_authorized_operations && broker.authorizes() {
        for topic in &mut topics {
            if let Some(name) = &topic.name {
                topic.topic_authorized_operations =
                    broker.authorized_operations(&client, ResourceType::Topic, name);
            }
        }
    }
    let cluster_operations = if broker.authorizes() {
        broker.authorized_operations(
            &client,
            ResourceType::Cluster,
            crate::server::authorize::access::CLUSTER,
        )
    } else {
        operations::CLUSTER
    };
    MetadataResponse {
        brokers: broker
            .on_listener(broker.with_lanes(shown.clone()), client.listener)
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
        cluster_authorized_operations: operations::if_asked(
            request.include_cluster_authorized_operations,
            cluster_operations,
        ),
        topics,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::metadata_request::MetadataRequestTopic;
    use crate::server::handlers::testing::TestNode;

    fn asking(topics: Vec<MetadataRequestTopic>) -> MetadataRequest {
        MetadataRequest {
            topics: Some(topics),
            allow_auto_topic_creation: false,
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_a_topic_by_name_and_by_id_whatever_name_comes_with_the_id() {
        let node = TestNode::start().await;
        let id = node.create_topic("orders", 3).await;
        let by_name = MetadataRequestTopic {
            name: Some("orders".into()),
            ..Default::default()
        };
        let answer = node.call::<Metadata>(&asking(vec![by_name]), 9).await;
        let topic = &answer.topics[0];
        assert_eq!(topic.error_code, 0, "{topic:?}");
        assert_eq!(topic.partitions.len(), 3);
        // By id: librdkafka sends a null name, Kafka's Java client "".
        for name in [None, Some(String::new())] {
            let by_id = MetadataRequestTopic {
                topic_id: id,
                name: name.clone(),
                ..Default::default()
            };
            for version in 12..=Metadata::VERSIONS.1 {
                let answer = node
                    .call::<Metadata>(&asking(vec![by_id.clone()]), version)
                    .await;
                let topic = &answer.topics[0];
                assert_eq!(topic.error_code, 0, "v{version} name {name:?}: {topic:?}");
                assert_eq!(topic.name.as_deref(), Some("orders"));
                assert_eq!(topic.topic_id, id);
                assert_eq!(topic.partitions.len(), 3);
            }
        }
        node.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unknown_topic_is_not_created_when_the_client_says_not_to() {
        let node = TestNode::start().await;
        let unknown = MetadataRequestTopic {
            name: Some("nowhere".into()),
            ..Default::default()
        };
        let answer = node.call::<Metadata>(&asking(vec![unknown]), 12).await;
        assert_eq!(
            answer.topics[0].error_code,
            ErrorCode::UnknownTopicOrPartition.code()
        );
        let unknown_id = MetadataRequestTopic {
            topic_id: uuid::Uuid::from_u128(7),
            ..Default::default()
        };
        let answer = node.call::<Metadata>(&asking(vec![unknown_id]), 12).await;
        assert_eq!(
            answer.topics[0].error_code,
            ErrorCode::UnknownTopicId.code()
        );
        node.stop().await;
    }
}
