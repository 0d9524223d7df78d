//! DeleteTopics (key 20): by name (v1–5) or by name or id (v6). The topic's objects become
//! garbage for the GC job; nothing in the object store is deleted inline.

use crate::protocol::ErrorCode;
use crate::protocol::messages::DeleteTopicsRequest;
use crate::protocol::messages::DeleteTopicsResponse;
use crate::protocol::messages::delete_topics_response::DeletableTopicResult;
use crate::server::broker::Broker;
use crate::server::error_codes::topic_change;

pub async fn handle(broker: &Broker, request: DeleteTopicsRequest) -> DeleteTopicsResponse {
    let mut targets: Vec<(Option<String>, uuid::Uuid)> = request
        .topic_names
        .iter()
        .map(|n| (Some(n.clone()), uuid::Uuid::nil()))
        .collect();
    targets.extend(request.topics.iter().map(|t| (t.name.clone(), t.topic_id)));
    let mut responses = Vec::new();
    for (name, id) in targets {
        let name = name.or_else(|| {
            broker
                .metadata
                .read(|s| s.topic_by_id(&id).map(|t| t.name.clone()))
        });
        let code = match &name {
            None => ErrorCode::UnknownTopicId,
            Some(name) => topic_change(broker.metadata.delete_topic(name.clone()).await),
        };
        responses.push(DeletableTopicResult {
            name,
            topic_id: id,
            error_code: code.code(),
            ..Default::default()
        });
    }
    DeleteTopicsResponse {
        responses,
        ..Default::default()
    }
}
