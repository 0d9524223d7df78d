//! Hostile and malformed input over a real socket: the bad connection is closed or answered
//! with the right error code, and everyone else keeps being served.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use bytes::{Bytes, BytesMut};
use floe::protocol::frame::{encode_request, split_frame};
use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use floe::protocol::{ApiKey, Message};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::{Floe, temp_dir};

fn connect(floe: &Floe) -> TcpStream {
    let stream = TcpStream::connect(floe.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
}

fn header(api: ApiKey, version: i16) -> RequestHeader {
    RequestHeader {
        request_api_key: api as i16,
        request_api_version: version,
        correlation_id: 99,
        client_id: Some("bad-input-test".into()),
        ..Default::default()
    }
}

/// Sends a request and reads one response frame; returns the body after the header.
fn call(stream: &mut TcpStream, api: ApiKey, version: i16, body: RequestBody) -> Bytes {
    let frame = encode_request(&header(api, version), &body).expect("encode");
    stream.write_all(&frame).expect("write");
    read_response(stream, api, version)
}

fn read_response(stream: &mut TcpStream, api: ApiKey, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    loop {
        if let Some(frame) = split_frame(&mut buf, 1 << 26).expect("frame") {
            let mut frame = frame;
            let header = ResponseHeader::decode(&mut frame, api.response_header_version(version))
                .expect("header");
            assert_eq!(header.correlation_id, 99);
            return frame;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "connection closed before a response");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn assert_closed(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    match stream.read_to_end(&mut rest) {
        Ok(_) => assert!(
            rest.is_empty(),
            "expected no response, got {} bytes",
            rest.len()
        ),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
}

fn still_serving(floe: &Floe) {
    let mut stream = connect(floe);
    let mut body = call(
        &mut stream,
        ApiKey::ApiVersions,
        3,
        RequestBody::ApiVersions(Default::default()),
    );
    let response = ApiVersionsResponse::decode(&mut body, 3).expect("decode");
    assert_eq!(response.error_code, 0);
}

#[test]
fn hostile_frames_close_only_their_connection() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);

    // The MetadataRequest v0 body that aborts kafka-protocol 0.18: an array of 2^31-1 topics.
    let mut frame = BytesMut::new();
    let mut head = BytesMut::new();
    header(ApiKey::Metadata, 0)
        .encode(&mut head, 1)
        .expect("header");
    frame.extend_from_slice(&((head.len() + 4) as i32).to_be_bytes());
    frame.extend_from_slice(&head);
    frame.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff]);
    let mut stream = connect(&floe);
    stream.write_all(&frame).expect("write");
    assert_closed(&mut stream);
    still_serving(&floe);

    // A frame claiming 2 GiB.
    let mut stream = connect(&floe);
    stream
        .write_all(&[0x7f, 0xff, 0xff, 0xff, 0, 0])
        .expect("write");
    assert_closed(&mut stream);
    // A negative size, then an unknown API key.
    let mut stream = connect(&floe);
    stream.write_all(&[0xff, 0xff, 0xff, 0xf0]).expect("write");
    assert_closed(&mut stream);
    let mut stream = connect(&floe);
    stream
        .write_all(&[0, 0, 0, 10, 0x7f, 0x00, 0, 1, 0, 0, 0, 1, 0xff, 0xff])
        .expect("write");
    assert_closed(&mut stream);
    // An unsupported version of a served API.
    let mut stream = connect(&floe);
    let frame = encode_request(
        &header(ApiKey::Produce, 13),
        &RequestBody::Produce(Default::default()),
    )
    .expect("encode");
    stream.write_all(&frame).expect("write");
    assert_closed(&mut stream);

    still_serving(&floe);
    assert!(
        floe.log().contains("closing connection"),
        "each bad connection is logged"
    );
}

#[test]
fn unknown_api_versions_version_gets_the_kip_511_answer() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    // A future client's v9: header v2, body laid out like v4 (the codec cannot encode v9).
    let mut frame = BytesMut::new();
    header(ApiKey::ApiVersions, 9)
        .encode(&mut frame, 2)
        .expect("header");
    ApiVersionsRequest {
        client_software_name: "future-client".into(),
        client_software_version: "9.9".into(),
        ..Default::default()
    }
    .encode(&mut frame, 4)
    .expect("body");
    let mut stream = connect(&floe);
    stream
        .write_all(&(frame.len() as i32).to_be_bytes())
        .expect("write");
    stream.write_all(&frame).expect("write");
    let mut body = read_response(&mut stream, ApiKey::ApiVersions, 9);
    let response = ApiVersionsResponse::decode(&mut body, 0).expect("a v0 body");
    assert_eq!(response.error_code, 35);
    assert_eq!(response.api_keys.len(), 1);
    assert_eq!(response.api_keys[0].api_key, ApiKey::ApiVersions as i16);
}

/// Creates `topic` the way a client's first Metadata request does (auto-creation).
fn auto_create(stream: &mut TcpStream, topic: &str) {
    let metadata = MetadataRequest {
        topics: Some(vec![metadata_request::MetadataRequestTopic {
            name: Some(topic.into()),
            ..Default::default()
        }]),
        ..Default::default()
    };
    call(stream, ApiKey::Metadata, 9, RequestBody::Metadata(metadata));
}

/// A Fetch of partition 0 of `topic` from offset 0, for at least one byte.
fn fetch_from_start(
    topic: &str,
    max_wait_ms: i32,
    max_bytes: i32,
    partition_max_bytes: i32,
) -> FetchRequest {
    FetchRequest {
        max_wait_ms,
        min_bytes: 1,
        max_bytes,
        topics: vec![fetch_request::FetchTopic {
            topic: topic.into(),
            partitions: vec![fetch_request::FetchPartition {
                partition: 0,
                fetch_offset: 0,
                partition_max_bytes,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn produce(stream: &mut TcpStream, topic: &str, records: Bytes) -> i16 {
    let request = ProduceRequest {
        acks: -1,
        timeout_ms: 5000,
        topic_data: vec![produce_request::TopicProduceData {
            name: topic.into(),
            partition_data: vec![produce_request::PartitionProduceData {
                index: 0,
                records: Some(records.into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut body = call(stream, ApiKey::Produce, 9, RequestBody::Produce(request));
    let response = ProduceResponse::decode(&mut body, 9).expect("decode");
    response.responses[0].partition_responses[0].error_code
}

/// `batch` with `bytes` written at `at` and its CRC-32C recomputed.
fn patched(batch: &Bytes, at: usize, bytes: &[u8]) -> Bytes {
    let mut out = batch.to_vec();
    out[at..at + bytes.len()].copy_from_slice(bytes);
    let crc = crc32c::crc32c(&out[21..]);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(out)
}

#[test]
fn bad_batches_get_kafka_error_codes_and_nothing_is_stored() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &["--batch-bytes-max", "4096"]);
    let mut stream = connect(&floe);
    auto_create(&mut stream, "t");

    let good = build_test_batch(-1, -1, -1, 3, 10);
    let mut corrupt = good.to_vec();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0x55;
    assert_eq!(
        produce(&mut stream, "t", Bytes::from(corrupt)),
        2,
        "CORRUPT_MESSAGE"
    );
    let mut old_magic = good.to_vec();
    old_magic[16] = 1;
    assert_eq!(
        produce(&mut stream, "t", Bytes::from(old_magic)),
        43,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    );
    assert_eq!(
        produce(&mut stream, "t", build_test_batch(-1, -1, -1, 1, 5000)),
        10,
        "MESSAGE_TOO_LARGE"
    );
    assert_eq!(
        produce(&mut stream, "t", good.slice(..good.len() - 3)),
        2,
        "truncated batch"
    );
    assert_eq!(
        produce(&mut stream, "missing", good.clone()),
        3,
        "UNKNOWN_TOPIC_OR_PARTITION"
    );
    // Checked as Kafka checks a client's batch; each still has a valid CRC.
    assert_eq!(
        produce(&mut stream, "t", patched(&good, 57, &2i32.to_be_bytes())),
        87,
        "INVALID_RECORD: 2 records counted, 3 offsets spanned"
    );
    assert_eq!(
        produce(&mut stream, "t", patched(&good, 21, &5i16.to_be_bytes())),
        2,
        "CORRUPT_MESSAGE: compression codec 5"
    );
    assert_eq!(
        produce(&mut stream, "t", build_test_batch(7, 0, -1, 3, 10)),
        87,
        "INVALID_RECORD: an idempotent batch without a sequence"
    );
    // The header agrees with itself (4 records, offsets 0..=3) but the batch holds 3.
    let miscounted = patched(
        &patched(&good, 57, &4i32.to_be_bytes()),
        23,
        &3i32.to_be_bytes(),
    );
    assert_eq!(
        produce(&mut stream, "t", miscounted),
        87,
        "INVALID_RECORD: fewer records than counted"
    );
    // None of that was stored: the first good batch gets offset 0.
    assert_eq!(produce(&mut stream, "t", good), 0);
    still_serving(&floe);
}

#[test]
fn record_timestamps_are_bounded_where_the_topic_says_so() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let mut stream = connect(&floe);
    let create = |name: &str, key: &str, value: &str| CreateTopicsRequest {
        topics: vec![create_topics_request::CreatableTopic {
            name: name.into(),
            num_partitions: 1,
            replication_factor: 1,
            configs: vec![create_topics_request::CreatableTopicConfig {
                name: key.into(),
                value: Some(value.into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 5000,
        ..Default::default()
    };
    let created = |stream: &mut TcpStream, request| {
        let mut body = call(
            stream,
            ApiKey::CreateTopics,
            5,
            RequestBody::CreateTopics(request),
        );
        CreateTopicsResponse::decode(&mut body, 5)
            .expect("decode")
            .topics[0]
            .error_code
    };
    assert_eq!(
        created(
            &mut stream,
            create("bad", "message.timestamp.before.max.ms", "-5")
        ),
        40,
        "INVALID_CONFIG"
    );
    assert_eq!(
        created(
            &mut stream,
            create("recent", "message.timestamp.before.max.ms", "3600000")
        ),
        0
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let at = |base_timestamp_ms| {
        floe::protocol::record_batch::build_batch(floe::protocol::record_batch::BatchSpec {
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: 3,
            value_bytes: 10,
            base_timestamp_ms,
        })
    };
    assert_eq!(
        produce(&mut stream, "recent", at(now - 2 * 3_600_000)),
        32,
        "INVALID_TIMESTAMP: two hours old"
    );
    assert_eq!(produce(&mut stream, "recent", at(now - 60_000)), 0);
    // Unbounded topics take any time, as Kafka's defaults do.
    auto_create(&mut stream, "any");
    assert_eq!(produce(&mut stream, "any", at(0)), 0);
    still_serving(&floe);
}

#[test]
fn a_long_poll_fetch_is_answered_when_a_commit_makes_data_visible() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let mut setup = connect(&floe);
    auto_create(&mut setup, "poll");

    // The fetch asks to wait up to 60 s (floe caps waits at 30 s) for one byte. It must come
    // back as soon as the produce below commits, well inside the socket's 20 s read timeout.
    let addr = floe.addr;
    let poller = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let fetch = fetch_from_start("poll", 60_000, 1 << 20, 1 << 20);
        let mut body = call(&mut stream, ApiKey::Fetch, 12, RequestBody::Fetch(fetch));
        FetchResponse::decode(&mut body, 12).expect("decode")
    });
    // Produce only once the fetch is parked in its wait: a produce that landed first would
    // answer the fetch on its first look, and the wake-up would never be tested.
    support::wait_for("the fetch to park", Duration::from_secs(20), || {
        (support::metric(floe.admin, "floe_fetches_waiting") == Some(1.0)).then_some(())
    });
    let wakes_before = wakes(&floe);
    assert_eq!(
        produce(&mut setup, "poll", build_test_batch(-1, -1, -1, 5, 10)),
        0
    );
    let response = poller.join().expect("fetch thread");
    let partition = &response.responses[0].partitions[0];
    assert_eq!(partition.error_code, 0);
    assert_eq!(partition.high_watermark, 5);
    let records = partition.records.as_ref().expect("records").to_bytes();
    let batches: Vec<_> = floe::protocol::record_batch::Batches::new(records).collect();
    assert_eq!(batches.len(), 1);
    // The commit's signal woke it (a fetch that ran out its wait would not count here).
    assert!(
        wakes(&floe) > wakes_before,
        "the fetch answered without a commit waking it"
    );
    // Its wait is over, and counted as over.
    assert_eq!(
        support::metric(floe.admin, "floe_fetches_waiting"),
        Some(0.0)
    );
}

/// Long-polling fetches a commit woke so far (each records how long waking took).
fn wakes(floe: &Floe) -> f64 {
    support::metric(floe.admin, "floe_fetch_wake_latency_seconds_count")
        .expect("floe_fetch_wake_latency_seconds_count")
}

#[test]
fn hostile_admin_requests_get_errors_and_the_log_replays_cleanly() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let mut floe = Floe::start(&data, &[] as &[&str]);
    let out = support::run_client(
        "python3",
        &[
            "tests/clients/kafka_python_hostile_admin.py",
            &floe.bootstrap(),
            "hostile",
        ],
    );
    assert!(out.ends_with("ok\n"), "{out}");
    still_serving(&floe);
    // A restart replays every entry those requests left in the Raft log.
    floe.stop();
    let floe = Floe::start_at(&data, floe.addr, floe.admin, &[] as &[&str]);
    still_serving(&floe);
    let topics = support::http_json(floe.admin, "/v1/topics");
    let hostile = topics["topics"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "hostile"))
        .unwrap_or_else(|| panic!("no topic 'hostile' in {topics}"));
    assert_eq!(
        hostile["partitions"].as_array().map(Vec::len),
        Some(1),
        "{hostile}"
    );
}

/// A field of a process's /proc status, in bytes (VmSize: what reservations cost even before
/// they are used; VmRSS: what is resident).
fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect(field);
    kib * 1024
}

#[test]
fn size_headers_alone_reserve_no_memory_beyond_the_request_budget() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    still_serving(&floe);
    let (virtual_before, resident_before) = (
        status_bytes(floe.pid(), "VmSize:"),
        status_bytes(floe.pid(), "VmRSS:"),
    );
    // Five hundred connections each announce a 100 MiB request and send ten bytes of it.
    let mut hostile: Vec<TcpStream> = (0..500)
        .map(|_| {
            let mut stream = connect(&floe);
            let mut frame = (100i32 << 20).to_be_bytes().to_vec();
            frame.extend_from_slice(&[0u8; 10]);
            stream.write_all(&frame).expect("write");
            stream
        })
        .collect();
    // Measure only once the broker holds all of them open (the start-up probe's and
    // still_serving's connections are closed by then) and has read their size headers: the
    // request budget fills with two 100 MiB frames, the rest wait for their share. Measured
    // any earlier, frames not yet read would pass the bounds without having been tried.
    let two_frames = 2.0 * f64::from((100i32 << 20) + 4);
    support::wait_for("the frames to be read", Duration::from_secs(30), || {
        let open = support::metric(floe.admin, "floe_connections")?;
        let held = support::metric(floe.admin, "floe_request_bytes_in_flight")?;
        (open == 500.0 && held >= two_frames).then_some(())
    });
    assert_eq!(
        support::metric(floe.admin, "floe_connections_closed_bad_input_total"),
        Some(0.0),
        "an announced 100 MiB frame is within the frame limit: no connection is refused"
    );
    let virtual_grown = status_bytes(floe.pid(), "VmSize:").saturating_sub(virtual_before);
    let resident_grown = status_bytes(floe.pid(), "VmRSS:").saturating_sub(resident_before);
    println!("500 announced frames: virtual +{virtual_grown} B, resident +{resident_grown} B");
    // The request budget (256 MiB) admits two such frames; reserving every announced frame
    // would have taken 50 GiB.
    assert!(
        virtual_grown < 1 << 30,
        "virtual memory grew by {virtual_grown} bytes"
    );
    assert!(
        resident_grown < 64 << 20,
        "resident memory grew by {resident_grown} bytes"
    );
    still_serving(&floe);
    hostile.clear();
    // Their connections close and the budget the two admitted frames held is given back.
    support::wait_for("hostile ones to close", Duration::from_secs(30), || {
        let open = support::metric(floe.admin, "floe_connections")?;
        let held = support::metric(floe.admin, "floe_request_bytes_in_flight")?;
        (open == 0.0 && held == 0.0).then_some(())
    });
    still_serving(&floe);
}

/// A connection from `source` (any 127.x address reaches the loopback listener).
fn connect_from(floe: &Floe, source: &str) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("runtime");
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(format!("{source}:0").parse().expect("address"))
            .expect("bind");
        socket.connect(floe.addr).await.expect("connect")
    });
    let stream = stream.into_std().expect("std stream");
    stream.set_nonblocking(false).expect("blocking");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
}

#[test]
fn idle_connections_are_closed_and_one_address_is_limited() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &[
            "--connections-max-idle",
            "1s",
            "--connections-per-ip-max",
            "2",
        ],
    );
    // From an address of their own (the readiness probe came from 127.0.0.1).
    let mut first = connect_from(&floe, "127.0.0.2");
    let mut second = connect_from(&floe, "127.0.0.2");
    let mut third = connect_from(&floe, "127.0.0.2");
    assert_closed(&mut third);
    // Closed for the per-address limit, not for anything else.
    assert_eq!(
        support::metric(floe.admin, "floe_connections_refused_total"),
        Some(1.0)
    );
    for stream in [&mut first, &mut second] {
        let mut body = call(
            stream,
            ApiKey::ApiVersions,
            3,
            RequestBody::ApiVersions(Default::default()),
        );
        assert_eq!(
            ApiVersionsResponse::decode(&mut body, 3)
                .expect("decode")
                .error_code,
            0
        );
    }
    // Silent for longer than the idle timeout: closed, and closed for being idle.
    support::wait_for("both closed as idle", Duration::from_secs(10), || {
        let closed = support::metric(floe.admin, "floe_connections_closed_idle_total")?;
        (closed >= 2.0).then_some(())
    });
    assert_closed(&mut first);
    assert_closed(&mut second);
    still_serving(&floe);
}

#[test]
fn a_fetch_returns_no_more_than_its_max_bytes_and_one_batch() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let mut stream = connect(&floe);
    auto_create(&mut stream, "big");
    // 24 batches of about 900 KB: a partition of 21 MB.
    let batch = build_test_batch(-1, -1, -1, 9, 100_000);
    for i in 0..24 {
        assert_eq!(produce(&mut stream, "big", batch.clone()), 0, "batch {i}");
    }
    let fetch = |max_bytes: i32| {
        let request = fetch_from_start("big", 0, max_bytes, 64 << 20);
        let mut body = call(
            &mut connect(&floe),
            ApiKey::Fetch,
            12,
            RequestBody::Fetch(request),
        );
        let response = FetchResponse::decode(&mut body, 12).expect("decode");
        let partition = &response.responses[0].partitions[0];
        assert_eq!(partition.error_code, 0);
        partition.records.clone().expect("records").len()
    };
    let got = fetch(1 << 20);
    assert!(
        got > 0 && got <= (1 << 20) + batch.len(),
        "{got} bytes for max_bytes 1 MiB"
    );
    // The first batch always comes, whatever the budget (Kafka's rule).
    assert_eq!(fetch(10), batch.len());
    assert_eq!(fetch(0), batch.len(), "max_bytes 0: still the first batch");
}

/// Bodies no client sends, tried on every API: field values at the extremes wherever the
/// API's fields fall.
fn hostile_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let mib = 1usize << 20;
    let mut compact_string = Vec::new();
    // A compact (flexible-version) length of 1 MiB + 1, then the 1 MiB.
    let mut n = (mib + 1) as u64;
    while n >= 0x80 {
        compact_string.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    compact_string.push(n as u8);
    compact_string.extend(std::iter::repeat_n(b'a', mib));
    let mut classic_string = i16::MAX.to_be_bytes().to_vec();
    classic_string.extend(std::iter::repeat_n(b'a', i16::MAX as usize));
    classic_string.extend(i32::MAX.to_be_bytes());
    vec![
        ("an empty body", Vec::new()),
        ("negative sizes and -1 counts", vec![0xff; 1024]),
        ("i32::MAX counts", [0x7f, 0xff, 0xff, 0xff].repeat(256)),
        (
            "u32::MAX compact counts",
            [0xff, 0xff, 0xff, 0xff, 0x0f].repeat(200),
        ),
        ("zero counts and empty names", vec![0; 1024]),
        ("a 1 MiB string", compact_string),
        ("a 32 KiB string, then i32::MAX", classic_string),
    ]
}

#[test]
fn every_api_survives_hostile_bodies_and_the_log_replays_cleanly() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let mut floe = Floe::start(&data, support::NO_FLAGS);
    for range in floe::server::handlers::supported() {
        for version in [range.min, range.max] {
            for (what, body) in hostile_bodies() {
                let mut head = BytesMut::new();
                header(range.api_key, version)
                    .encode(&mut head, range.api_key.request_header_version(version))
                    .expect("header");
                let mut frame = ((head.len() + body.len()) as i32).to_be_bytes().to_vec();
                frame.extend_from_slice(&head);
                frame.extend_from_slice(&body);
                let mut stream = connect(&floe);
                let api = range.api_key;
                stream
                    .write_all(&frame)
                    .unwrap_or_else(|e| panic!("{api:?} v{version}, {what}: {e}"));
                // Answered with an error, closed, or (a request that decoded and waits, say
                // a long poll) pending: any of them, as long as the broker lives on.
                stream
                    .set_read_timeout(Some(Duration::from_millis(300)))
                    .expect("timeout");
                let _ = stream.read(&mut [0u8; 64]);
            }
        }
        still_serving(&floe);
    }
    assert!(
        floe.log().contains("closing connection"),
        "refusals are logged"
    );
    // Whatever those requests wrote to the Raft log replays.
    floe.stop();
    let floe = Floe::start_at(&data, floe.addr, floe.admin, support::NO_FLAGS);
    still_serving(&floe);
}

#[test]
fn group_requests_beyond_the_coordinators_bounds_get_kafka_errors() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let mut stream = connect(&floe);
    let join = |group_id: String, metadata: usize| JoinGroupRequest {
        group_id,
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 10_000,
        protocol_type: "consumer".into(),
        protocols: vec![join_group_request::JoinGroupRequestProtocol {
            name: "range".into(),
            metadata: Bytes::from(vec![0; metadata]),
            ..Default::default()
        }],
        ..Default::default()
    };
    let code = |stream: &mut TcpStream, request| {
        let mut body = call(
            stream,
            ApiKey::JoinGroup,
            5,
            RequestBody::JoinGroup(request),
        );
        JoinGroupResponse::decode(&mut body, 5)
            .expect("decode")
            .error_code
    };
    assert_eq!(
        code(&mut stream, join("g".repeat(2000), 10)),
        24,
        "INVALID_GROUP_ID"
    );
    assert_eq!(
        code(&mut stream, join("g".into(), 2 << 20)),
        42,
        "INVALID_REQUEST: 2 MiB of metadata"
    );
    still_serving(&floe);
}
