//! A real node for the handlers' unit tests: one voter, objects in local files under a
//! temporary directory, its Kafka listener on 127.0.0.1 at a free port. A test sends an API's
//! typed request as a client does (frame, router, registry, authorization, handler, encoding)
//! and reads the typed answer; nothing is mocked.

use crate::client;
use crate::config::Config;
use crate::node::Running;
use crate::protocol::messages::create_topics_request::CreatableTopic;
use crate::protocol::messages::{CreateTopicsRequest, RequestBody, ResponseBody};
use crate::protocol::wire::Message;
use crate::server::api::Api;
use crate::server::handlers::create_topics::CreateTopics;
use bytes::BytesMut;
use std::time::Duration;

pub struct TestNode {
    pub running: Running,
    _dir: tempfile::TempDir,
}

impl TestNode {
    /// Starts a node with `adjust` applied to the embedded default.
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> TestNode {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut config = Config::local(dir.path().to_path_buf());
        config.kafka_addr = "127.0.0.1:0".into();
        config.admin_addr = None;
        config.group_initial_rebalance_delay = Duration::ZERO;
        adjust(&mut config);
        let running = crate::node::start(config).await.expect("the node starts");
        // Registered: an agent coordinates no group before its first renewal.
        let registered = || !running.broker.starting();
        let clock = running.broker.clock.clone();
        clock
            .timeout(Duration::from_secs(30), async {
                while !registered() {
                    clock.sleep(Duration::from_millis(5)).await;
                }
            })
            .await
            .expect("the node registers");
        TestNode { running, _dir: dir }
    }

    pub async fn start() -> TestNode {
        TestNode::start_with(|_| {}).await
    }

    /// Sends `request` as API `A` at `version` on a fresh connection and returns the answer.
    pub async fn call<A: Api>(&self, request: &A::Request, version: i16) -> A::Response {
        let mut bytes = BytesMut::new();
        request
            .encode(&mut bytes, version)
            .expect("the request encodes");
        let body = RequestBody::decode(A::KEY, &mut bytes.freeze(), version).expect("decodes");
        let addr = self.running.local_addr.to_string();
        let (mut sender, mut receiver) = client::connect(&addr).await.expect("connect");
        let answer: ResponseBody = client::call(&mut sender, &mut receiver, version, body)
            .await
            .unwrap_or_else(|e| panic!("{:?} v{version}: {e}", A::KEY));
        let mut bytes = BytesMut::new();
        answer
            .encode(&mut bytes, version)
            .expect("the answer encodes");
        A::Response::decode(&mut bytes.freeze(), version).expect("the answer decodes")
    }

    /// Creates `name` with `partitions` partitions; returns its id.
    pub async fn create_topic(&self, name: &str, partitions: i32) -> uuid::Uuid {
        let request = CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: name.into(),
                num_partitions: partitions,
                replication_factor: -1,
                ..Default::default()
            }],
            ..Default::default()
        };
        let answer = self.call::<CreateTopics>(&request, 7).await;
        assert_eq!(
            answer.topics[0].error_code, 0,
            "creating {name}: {answer:?}"
        );
        answer.topics[0].topic_id
    }

    pub async fn stop(self) {
        self.running.stop().await;
    }
}
