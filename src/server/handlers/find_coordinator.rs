//! FindCoordinator (key 10): the agent chosen for each group or transactional id by rendezvous
//! hashing over the live agents (`placement::coordinator`); every agent gives the same answer.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::FindCoordinatorRequest;
use crate::protocol::messages::FindCoordinatorResponse;
use crate::protocol::messages::find_coordinator_response::Coordinator;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::Broker;
use crate::server::caller::Client;

pub struct FindCoordinator;

impl Api for FindCoordinator {
    type Request = FindCoordinatorRequest;
    type Response = FindCoordinatorResponse;
    const KEY: ApiKey = ApiKey::FindCoordinator;
    const VERSIONS: (i16, i16) = (0, 4);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DESCRIBE, Acl::TXN_DESCRIBE]);

    fn coordinator(_: &FindCoordinatorRequest) -> Option<&str> {
        None
    }

    /// When the client may not describe one of the keys (a group, or a transactional id for
    /// key type 1), the whole request is refused: on every key when it batches them
    /// (`coordinator_keys`), and at the top.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut FindCoordinatorRequest,
        version: i16,
    ) -> Authorized<FindCoordinatorResponse> {
        let keys: Vec<&str> = if request.coordinator_keys.is_empty() {
            vec![request.key.as_str()]
        } else {
            request
                .coordinator_keys
                .iter()
                .map(String::as_str)
                .collect()
        };
        let (acl, error) = if request.key_type == 1 {
            (
                Acl::TXN_DESCRIBE,
                ErrorCode::TransactionalIdAuthorizationFailed,
            )
        } else {
            (Acl::GROUP_DESCRIBE, ErrorCode::GroupAuthorizationFailed)
        };
        all_or_refuse(gate, acl, keys.into_iter(), request, version, error)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: FindCoordinatorRequest,
    ) -> Reply<FindCoordinatorResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version, ctx.client))
    }
}

pub fn handle(
    broker: &Broker,
    request: FindCoordinatorRequest,
    version: i16,
    client: Client<'_>,
) -> FindCoordinatorResponse {
    // Groups (key type 0) and transactions (1) are placed alike. A transaction's state is in
    // the quorum, so any agent could coordinate it; the placement spreads the work.
    let error = if matches!(request.key_type, 0 | 1) {
        ErrorCode::None
    } else {
        ErrorCode::InvalidRequest
    };
    // v0–v3 name one group in `key`; v4 batches them in `coordinator_keys`.
    let keys: Vec<String> = if version >= 4 {
        request.coordinator_keys.clone()
    } else {
        vec![request.key.clone()]
    };
    let coordinators: Vec<Coordinator> = keys
        .iter()
        .map(|key| {
            let at = broker.coordinator_of(key);
            // A group placed on this agent before its first registration: the others do not
            // count it yet, and it coordinates nothing until they do (`Broker::coordinates`).
            // Kafka's answer while a coordinator is not ready; clients ask again.
            let error = if error == ErrorCode::None
                && request.key_type == 0
                && broker.starting()
                && broker.coordinator_agent(key).id == broker.node_id()
            {
                ErrorCode::CoordinatorNotAvailable
            } else {
                error
            };
            if error != ErrorCode::None {
                // Kafka names no node with an error (`Node.noNode()`).
                return Coordinator {
                    key: key.clone(),
                    node_id: -1,
                    host: String::new(),
                    port: -1,
                    error_code: error.code(),
                    ..Default::default()
                };
            }
            let at = broker
                .on_listener(vec![at.clone()], client.listener)
                .pop()
                .unwrap_or(at);
            Coordinator {
                key: key.clone(),
                node_id: at.id,
                host: at.host,
                port: at.port,
                error_code: error.code(),
                ..Default::default()
            }
        })
        .collect();
    if version >= 4 {
        // v4 carries only the batched form: its top-level fields must stay at their defaults.
        return FindCoordinatorResponse {
            coordinators,
            ..Default::default()
        };
    }
    let first = coordinators.first().cloned().unwrap_or_default();
    FindCoordinatorResponse {
        error_code: first.error_code,
        node_id: first.node_id,
        host: first.host,
        port: first.port,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::handlers::testing::TestNode;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn names_this_agent_for_each_key_in_the_shape_of_each_version() {
        let node = TestNode::start().await;
        let port = i32::from(node.running.local_addr.port());
        let one = FindCoordinatorRequest {
            key: "g".into(),
            ..Default::default()
        };
        for version in 0..=3 {
            let answer = node.call::<FindCoordinator>(&one, version).await;
            assert_eq!((answer.error_code, answer.port), (0, port), "v{version}");
        }
        let batched = FindCoordinatorRequest {
            coordinator_keys: vec!["g1".into(), "g2".into()],
            ..Default::default()
        };
        for version in 4..=FindCoordinator::VERSIONS.1 {
            let answer = node.call::<FindCoordinator>(&batched, version).await;
            let keys: Vec<(&str, i16, i32)> = answer
                .coordinators
                .iter()
                .map(|c| (c.key.as_str(), c.error_code, c.port))
                .collect();
            assert_eq!(keys, [("g1", 0, port), ("g2", 0, port)], "v{version}");
        }
        node.stop().await;
    }

    /// An agent before its first registration: the others do not count it yet, so it
    /// coordinates nothing (a group joined then would be let go at that registration), and
    /// says so; once registered it coordinates.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_starting_agent_coordinates_no_group_and_says_so() {
        use crate::protocol::messages::ConsumerGroupHeartbeatRequest;
        use crate::server::handlers::consumer_group_heartbeat::ConsumerGroupHeartbeat;
        use std::sync::atomic::Ordering;
        // A long lease: no renewal between the steps below.
        let node =
            TestNode::start_with(|config| config.agent_lease = std::time::Duration::from_secs(600))
                .await;
        node.create_topic("events", 1).await;
        let renewed = &node.running.broker.renewal_sent_ms;
        let registered_at = renewed.swap(i64::MIN, Ordering::Relaxed);
        let find = FindCoordinatorRequest {
            key: "g".into(),
            ..Default::default()
        };
        let answer = node.call::<FindCoordinator>(&find, 3).await;
        assert_eq!(
            (answer.error_code, answer.node_id, answer.port),
            (ErrorCode::CoordinatorNotAvailable.code(), -1, -1)
        );
        let join = ConsumerGroupHeartbeatRequest {
            group_id: "g".into(),
            member_id: "m1".into(),
            member_epoch: 0,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["events".into()]),
            topic_partitions: Some(Vec::new()),
            ..Default::default()
        };
        let refused = node.call::<ConsumerGroupHeartbeat>(&join, 0).await;
        assert_eq!(refused.error_code, ErrorCode::NotCoordinator.code());
        // Transactions are not held by the agent: any agent may coordinate them at once.
        let transaction = FindCoordinatorRequest {
            key: "t".into(),
            key_type: 1,
            ..Default::default()
        };
        let answer = node.call::<FindCoordinator>(&transaction, 3).await;
        assert_eq!(answer.error_code, 0);

        renewed.store(registered_at, Ordering::Relaxed);
        let answer = node.call::<FindCoordinator>(&find, 3).await;
        assert_eq!(answer.error_code, 0);
        let joined = node.call::<ConsumerGroupHeartbeat>(&join, 0).await;
        assert_eq!(joined.error_code, 0, "{joined:?}");
        node.stop().await;
    }
}
