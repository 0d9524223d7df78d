//! Bounded request memory must not deadlock: one connection pipelining more request bytes
//! than the whole broker's request budget still gets every answer, in order.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

use bytes::BytesMut;
use floe::config::Config;
use floe::protocol::frame::{encode_request, split_frame};
use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use floe::protocol::{ApiKey, Message};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_beyond_the_request_budget_are_all_answered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = Config::local(dir.path().to_path_buf());
    config.kafka_addr = "127.0.0.1:0".into();
    config.admin_addr = None;
    config.frame_bytes_max = 64 * 1024;
    config.batch_bytes_max = 40 * 1024;
    config.request_bytes_in_flight_max = 96 * 1024;
    let running = floe::node::start(config).await.expect("start");
    let mut stream = tokio::net::TcpStream::connect(running.local_addr)
        .await
        .expect("connect");

    let create = RequestBody::CreateTopics(CreateTopicsRequest {
        topics: vec![create_topics_request::CreatableTopic {
            name: "bp".into(),
            num_partitions: 1,
            replication_factor: 1,
            ..Default::default()
        }],
        ..Default::default()
    });
    let header = |api: ApiKey, version: i16, correlation_id: i32| RequestHeader {
        request_api_key: api as i16,
        request_api_version: version,
        correlation_id,
        client_id: Some("bp".into()),
        ..Default::default()
    };
    stream
        .write_all(&encode_request(&header(ApiKey::CreateTopics, 7, 0), &create).expect("encode"))
        .await
        .expect("write");

    // Ten produce requests of ~36 KiB each: 360 KiB against a 96 KiB budget, all at once.
    let mut all = Vec::new();
    for i in 0..10 {
        let produce = RequestBody::Produce(ProduceRequest {
            acks: -1,
            timeout_ms: 10_000,
            topic_data: vec![produce_request::TopicProduceData {
                name: "bp".into(),
                partition_data: vec![produce_request::PartitionProduceData {
                    index: 0,
                    records: Some(build_test_batch(-1, -1, -1, 36, 1000).into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
        all.extend_from_slice(
            &encode_request(&header(ApiKey::Produce, 9, i + 1), &produce).expect("encode"),
        );
    }
    stream.write_all(&all).await.expect("write");

    let mut buf = BytesMut::new();
    let mut answered = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while answered.len() < 11 {
        if let Some(mut frame) = split_frame(&mut buf, 1 << 20).expect("frame") {
            let version = if answered.is_empty() { 7 } else { 9 };
            let api = if answered.is_empty() {
                ApiKey::CreateTopics
            } else {
                ApiKey::Produce
            };
            let header = ResponseHeader::decode(&mut frame, api.response_header_version(version))
                .expect("header");
            if api == ApiKey::Produce {
                let response = ProduceResponse::decode(&mut frame, 9).expect("body");
                assert_eq!(response.responses[0].partition_responses[0].error_code, 0);
            }
            answered.push(header.correlation_id);
            continue;
        }
        let read = tokio::time::timeout_at(deadline, stream.read_buf(&mut buf))
            .await
            .expect("every request is answered (no deadlock on the request budget)")
            .expect("read");
        assert!(
            read > 0,
            "connection closed after {} answers",
            answered.len()
        );
    }
    assert_eq!(
        answered,
        (0..11).collect::<Vec<_>>(),
        "answers in request order"
    );
}
