//! Zone-aware routing with real clients: one voter in zone a and one agent in zone b.
//! A client naming its zone in client.id is given leaders of that zone only; a consumer
//! naming its rack (client.rack, KIP-392) is sent to its zone's agent for every read.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::kafka::{Seen, flush, produce, producer};
use support::{Floe, free_addr, free_port, http_json, metric, temp_dir};

fn fetch_bytes(node: &Floe) -> f64 {
    metric(node.admin, "floe_fetch_bytes_total").unwrap_or(0.0)
}

#[test]
fn clients_are_routed_to_their_zone() {
    let dir = temp_dir();
    let objects = dir.path().join("objects");
    std::fs::create_dir_all(&objects).expect("objects dir");
    let raft = [free_port(), free_port()];
    let peers = format!("1=127.0.0.1:{}", raft[0]);
    let common = |id: u64, zone: &str| {
        vec![
            "--node-id".to_string(),
            id.to_string(),
            "--meta-peers".into(),
            peers.clone(),
            "--zone".into(),
            zone.into(),
            "--object-store".into(),
            format!("file://{}", objects.display()),
            "--default-partitions".into(),
            "8".into(),
        ]
    };
    let a = Floe::start(&dir.path().join("a"), &common(1, "a"));
    let mut agent_flags = common(2, "b");
    agent_flags.extend([
        "--roles".into(),
        "agent".into(),
        "--raft-addr".into(),
        format!("127.0.0.1:{}", raft[1]),
    ]);
    let b = Floe::start_at(
        &dir.path().join("b"),
        free_addr(),
        free_addr(),
        &agent_flags,
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_json(a.admin, "/v1/cluster")["brokers"]
        .as_array()
        .map_or(0, Vec::len)
        < 2
    {
        assert!(Instant::now() < deadline, "agents did not register");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Records spread over both agents (no zone hint: leaders over every agent).
    let (p, acks) = producer(&a.bootstrap(), "none");
    produce(&p, "zoned", 8, 800, "z");
    flush(&p);
    assert!(acks.errors.lock().expect("errors").is_empty());

    // A zone hint in client.id: every partition led by the zone's agent.
    for (zone, id) in [("a", 1), ("b", 2)] {
        let client: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", a.bootstrap())
            .set("client.id", format!("app,floe_az={zone}"))
            .create()
            .expect("client");
        let metadata = client
            .fetch_metadata(Some("zoned"), Duration::from_secs(10))
            .expect("metadata");
        let leaders: Vec<i32> = metadata.topics()[0]
            .partitions()
            .iter()
            .map(|p| p.leader())
            .collect();
        assert_eq!(leaders, vec![id; 8], "zone {zone}");
    }

    // A rack-aware consumer in zone b reads everything, all of it from zone b's agent.
    let before = fetch_bytes(&a);
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", a.bootstrap())
        .set("group.id", "zoned-reader")
        .set("client.rack", "b")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut assignment = rdkafka::TopicPartitionList::new();
    for partition in 0..8 {
        assignment
            .add_partition_offset("zoned", partition, rdkafka::Offset::Beginning)
            .expect("assign");
    }
    consumer.assign(&assignment).expect("assign");
    let mut got: BTreeMap<i32, Vec<Seen>> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while got.values().map(Vec::len).sum::<usize>() < 800 {
        assert!(Instant::now() < deadline, "read only {got:?}");
        if let Some(m) = consumer.poll(Duration::from_millis(200)) {
            let m = m.expect("consume");
            got.entry(rdkafka::message::Message::partition(&m))
                .or_default()
                .push(Seen {
                    offset: rdkafka::message::Message::offset(&m),
                    key: Vec::new(),
                    value: Vec::new(),
                    timestamp: None,
                    headers: Vec::new(),
                });
        }
    }
    assert_eq!(got.values().map(Vec::len).sum::<usize>(), 800);
    assert_eq!(
        fetch_bytes(&a),
        before,
        "zone a's agent served zone b's reads"
    );
    assert!(fetch_bytes(&b) > 0.0);
}
