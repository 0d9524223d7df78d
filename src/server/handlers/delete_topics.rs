//! DeleteTopics (key 20): by name (v1–5) or by name or id (v6). The topic's objects become
//! garbage for the GC job; nothing in the object store is deleted inline.

use crate::metadata::state::DeleteTopic;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::DeleteTopicsRequest;
use crate::protocol::messages::DeleteTopicsResponse;
use crate::protocol::messages::delete_topics_response::DeletableTopicResult;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::Broker;
use crate::server::error_codes::topic_change;
use crate::server::mutation_quota::{Mutations, THROTTLED_MESSAGE};

pub struct DeleteTopics;

impl Api for DeleteTopics {
    type Request = DeleteTopicsRequest;
    type Response = DeleteTopicsResponse;
    const KEY: ApiKey = ApiKey::DeleteTopics;
    const VERSIONS: (i16, i16) = (1, 6);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_DELETE]);

    fn coordinator(_: &DeleteTopicsRequest) -> Option<&str> {
        None
    }

    /// A topic the client may not delete is answered with TOPIC_AUTHORIZATION_FAILED, under
    /// its id when asked for by id (its name is not the client's to learn).
    fn authorize(
        gate: &Gate<'_>,
        request: &mut DeleteTopicsRequest,
        version: i16,
    ) -> Authorized<DeleteTopicsResponse> {
        let mut refused = DeleteTopicsRequest {
            topic_names: take_refused(&mut request.topic_names, |name| {
                gate.allowed(Acl::TOPIC_DELETE, name)
            }),
            ..Default::default()
        };
        refused.topics = take_refused(&mut request.topics, |t| {
            let name = gate.topic_name(t.name.as_deref().unwrap_or(""), &t.topic_id);
            // An id nobody knows is the handler's to answer (UNKNOWN_TOPIC_ID).
            (t.name.is_none() && name.is_empty()) || gate.allowed(Acl::TOPIC_DELETE, &name)
        });
        Authorized::restoring_items(refused, version, ErrorCode::TopicAuthorizationFailed)
    }

    /// Under a `controller_mutation_rate` quota (strict from v5, as in Kafka).
    async fn handle(ctx: Ctx<'_>, request: DeleteTopicsRequest) -> Reply<DeleteTopicsResponse> {
        let mut response = handle(ctx.broker, request, &Mutations::of(&ctx, 5)).await;
        response.throttle_time_ms = ctx.throttle.field();
        Reply::Now(response)
    }
}

pub async fn handle(
    broker: &Broker,
    request: DeleteTopicsRequest,
    mutations: &Mutations<'_>,
) -> DeleteTopicsResponse {
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
        // The partitions a deletion removes count against the quota.
        let partitions = name.as_ref().and_then(|name| {
            broker
                .metadata
                .read(|s| s.topic(name).map(|t| t.partitions.len() as u64))
        });
        let (code, message) = match (&name, partitions) {
            (None, _) => (ErrorCode::UnknownTopicId, None),
            (Some(_), Some(partitions)) if !mutations.admit(partitions) => (
                ErrorCode::ThrottlingQuotaExceeded,
                Some(THROTTLED_MESSAGE.to_string()),
            ),
            (Some(name), _) => (
                topic_change(
                    broker
                        .metadata
                        .write(DeleteTopic { name: name.clone() })
                        .await,
                ),
                None,
            ),
        };
        responses.push(DeletableTopicResult {
            name,
            topic_id: id,
            error_code: code.code(),
            error_message: message,
            ..Default::default()
        });
    }
    DeleteTopicsResponse {
        responses,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::delete_topics_request::DeleteTopicState;
    use crate::server::handlers::testing::TestNode;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deletes_by_name_and_by_id_and_says_which_is_unknown() {
        let node = TestNode::start().await;
        node.create_topic("by-name", 1).await;
        let id = node.create_topic("by-id", 1).await;
        let by_name = DeleteTopicsRequest {
            topic_names: vec!["by-name".into(), "never".into()],
            ..Default::default()
        };
        let answer = node.call::<DeleteTopics>(&by_name, 5).await;
        let codes: Vec<(Option<&str>, i16)> = answer
            .responses
            .iter()
            .map(|r| (r.name.as_deref(), r.error_code))
            .collect();
        let unknown = ErrorCode::UnknownTopicOrPartition.code();
        assert_eq!(codes, [(Some("by-name"), 0), (Some("never"), unknown)]);

        let by_id = DeleteTopicsRequest {
            topics: vec![
                DeleteTopicState {
                    name: None,
                    topic_id: id,
                    ..Default::default()
                },
                DeleteTopicState {
                    name: None,
                    topic_id: uuid::Uuid::from_u128(9),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let answer = node.call::<DeleteTopics>(&by_id, 6).await;
        let codes: Vec<(uuid::Uuid, i16)> = answer
            .responses
            .iter()
            .map(|r| (r.topic_id, r.error_code))
            .collect();
        let unknown_id = ErrorCode::UnknownTopicId.code();
        assert_eq!(codes, [(id, 0), (uuid::Uuid::from_u128(9), unknown_id)]);
        assert_eq!(answer.responses[0].name.as_deref(), Some("by-id"));
        node.stop().await;
    }
}
