//! Load-balancer mode: three agents (one voter, two learners) behind a real haproxy on
//! loopback, all advertising the balancer's address. Clients see one broker; produce, consume
//! consumer groups and transactions work whichever agent each connection lands on.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::haproxy::behind_haproxy;
use support::kafka::{consume, flush, produce, producer};
use support::{Floe, coordinated, kafka_call, metric, temp_dir};

#[test]
fn agents_behind_one_address_serve_as_one_broker() {
    let dir = temp_dir();
    let (mut nodes, balancer, _haproxy) = behind_haproxy(dir.path(), 1, &[], |_, balancer| {
        vec!["--advertised-addr".into(), balancer.to_string()]
    });
    let kafka: Vec<std::net::SocketAddr> = nodes.iter().map(|n| n.addr).collect();

    // Clients see exactly one broker: the balancer.
    let metadata_client: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", balancer.to_string())
        .create()
        .expect("client");
    let metadata = metadata_client
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    let brokers: Vec<(i32, String, i32)> = metadata
        .brokers()
        .iter()
        .map(|b| (b.id(), b.host().to_string(), b.port()))
        .collect();
    assert_eq!(
        brokers,
        vec![(1, "127.0.0.1".to_string(), i32::from(balancer.port()))]
    );

    // Several producers: their connections spread over the agents.
    let mut acked = BTreeMap::new();
    for round in 0..6 {
        let (p, acks) = producer(&balancer.to_string(), "none");
        produce(&p, "behind-lb", 6, 600, &format!("p{round}"));
        flush(&p);
        assert!(acks.errors.lock().expect("errors").is_empty());
        for (partition, records) in acks.by_partition.lock().expect("acks").iter() {
            acked
                .entry(*partition)
                .or_insert_with(Vec::new)
                .extend(records.iter().cloned());
        }
    }
    let high: BTreeMap<i32, usize> = acked
        .iter()
        .map(|(p, v): (&i32, &Vec<support::kafka::Seen>)| (*p, v.len()))
        .collect();
    assert_eq!(high.values().sum::<usize>(), 3_600);
    let got = consume(&balancer.to_string(), "behind-lb", &high);
    for (partition, records) in &acked {
        let read = &got[partition];
        assert_eq!(read.len(), records.len(), "partition {partition}");
        for a in records {
            let r = &read[a.offset as usize];
            assert_eq!((&r.key, &r.value), (&a.key, &a.value));
        }
    }
    // Consumer groups behind the balancer, classic and KIP-848: their members' connections
    // land on different agents, which forward group requests to the one agent that
    // coordinates the group.
    let classic = [
        ("session.timeout.ms", "10000"),
        ("heartbeat.interval.ms", "500"),
    ];
    let kip848 = [("group.protocol", "consumer")];
    let mut coordinator = 0;
    for (group, settings) in [
        ("behind-lb-group", &classic[..]),
        ("behind-lb-848", &kip848[..]),
    ] {
        coordinator = read_as_group(&balancer.to_string(), group, settings, &nodes);
        // Whether the balancer happened to send a member's coordinator connection elsewhere
        // is luck; a heartbeat sent straight to every other agent is not: each forwards it,
        // and the coordinator answers (UNKNOWN_MEMBER_ID for a made-up member, not
        // NOT_COORDINATOR).
        for (i, addr) in kafka.iter().enumerate() {
            if i != coordinator {
                let code = heartbeat_from_nobody(addr, group, settings == kip848);
                assert_eq!(
                    code,
                    floe::protocol::ErrorCode::UnknownMemberId.code(),
                    "agent {i} did not forward {group}"
                );
            }
        }
    }
    let forwarded: f64 = nodes
        .iter()
        .map(|n| metric(n.admin, "floe_forwarded_requests_total").unwrap_or(0.0))
        .sum();
    assert!(forwarded > 0.0, "no group request was forwarded");

    // Every agent took client connections.
    for node in &nodes {
        let accepted = metric(node.admin, "floe_connections_total").unwrap_or(0.0);
        assert!(accepted > 0.0, "an agent served no connection");
    }

    // Transactions behind the balancer: the producer's and the readers' connections land on
    // different agents, and every agent answers transactional requests from the replicated
    // state.
    let out = support::run_client(
        "python3",
        &[
            "tests/clients/txn_confluent.py",
            "basic",
            &balancer.to_string(),
            "txn-behind-lb",
        ],
    );
    let seen: serde_json::Value =
        serde_json::from_str(out.lines().last().expect("JSON")).expect("JSON");
    assert_eq!(
        seen["committed"].as_array().map(Vec::len),
        Some(20),
        "{seen}"
    );
    assert_eq!(
        seen["uncommitted"].as_array().map(Vec::len),
        Some(30),
        "{seen}"
    );

    // The coordinating agent dies. Until its lease lapses the others still see it as the
    // coordinator; a forward to it fails, and the request is answered where it landed (the
    // connection stays open) with NOT_COORDINATOR, so the client looks again.
    nodes[coordinator].kill();
    let other = (coordinator + 1) % kafka.len();
    let code = heartbeat_from_nobody(&kafka[other], "behind-lb-848", true);
    let expected = [
        floe::protocol::ErrorCode::NotCoordinator.code(),
        // The lease lapsed already and this agent coordinates the group now.
        floe::protocol::ErrorCode::UnknownMemberId.code(),
    ];
    assert!(expected.contains(&code), "error {code}");
}

/// Two members of `group` read all 3,600 records through the balancer; returns the index of
/// the one agent that coordinates the group.
fn read_as_group(bootstrap: &str, group: &str, settings: &[(&str, &str)], nodes: &[Floe]) -> usize {
    let members: Vec<BaseConsumer> = (0..2)
        .map(|_| {
            let mut config = ClientConfig::new();
            config
                .set("bootstrap.servers", bootstrap)
                .set("group.id", group)
                .set("auto.offset.reset", "earliest");
            for (key, value) in settings {
                config.set(*key, *value);
            }
            let c: BaseConsumer = config.create().expect("consumer");
            c.subscribe(&["behind-lb"]).expect("subscribe");
            c
        })
        .collect();
    let mut read = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    while read.len() < 3_600 {
        for c in &members {
            if let Some(m) = c.poll(Duration::from_millis(20)) {
                let m = m.expect("group consume");
                read.insert((
                    rdkafka::message::Message::partition(&m),
                    rdkafka::message::Message::offset(&m),
                ));
            }
        }
        assert!(
            Instant::now() < deadline,
            "{group} read {} of 3600",
            read.len()
        );
    }
    let coordinating: Vec<usize> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| coordinated(n.admin, group).is_some())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(coordinating.len(), 1, "one agent coordinates {group}");
    coordinating[0]
}

/// The error code of a heartbeat (classic, or KIP-848 when `kip848`) from a member the group
/// does not know, sent straight to the agent at `addr`.
fn heartbeat_from_nobody(addr: &std::net::SocketAddr, group: &str, kip848: bool) -> i16 {
    use floe::protocol::messages::{
        ConsumerGroupHeartbeatRequest, HeartbeatRequest, RequestBody, ResponseBody,
    };
    let (version, request) = if kip848 {
        let request = ConsumerGroupHeartbeatRequest {
            group_id: group.into(),
            member_id: "nobody".into(),
            member_epoch: 5,
            rebalance_timeout_ms: -1,
            ..Default::default()
        };
        (1, RequestBody::ConsumerGroupHeartbeat(request))
    } else {
        let request = HeartbeatRequest {
            group_id: group.into(),
            generation_id: 1,
            member_id: "nobody".into(),
            ..Default::default()
        };
        (4, RequestBody::Heartbeat(request))
    };
    match kafka_call(&addr.to_string(), version, request) {
        ResponseBody::Heartbeat(r) => r.error_code,
        ResponseBody::ConsumerGroupHeartbeat(r) => r.error_code,
        other => panic!("not a heartbeat answer: {other:?}"),
    }
}

/// One run of the security client script (`tests/clients/security_client.py`).
fn security_client(settings: serde_json::Value) -> serde_json::Value {
    let out = support::run_client(
        "python3",
        &["tests/clients/security_client.py", &settings.to_string()],
    );
    serde_json::from_str(out.lines().last().expect("a JSON line")).expect("JSON")
}

#[test]
fn a_forwarded_group_request_is_authorized_as_its_client() {
    let dir = temp_dir();
    let users = dir.path().join("plain.users");
    std::fs::write(&users, "admin:admin-secret\nalice:alice-secret\n").expect("users");
    // Forwarded requests carry the client's principal: ACLs need signed cluster traffic.
    let secret = dir.path().join("cluster.secret");
    std::fs::write(&secret, "the load-balanced cluster's secret").expect("secret");
    let extra: Vec<String> = [
        "--cluster-secret-file",
        &secret.display().to_string(),
        "--sasl-plain-users-file",
        &users.display().to_string(),
        "--authorizer",
        "acl",
        "--super-users",
        "User:admin",
        "--group-initial-rebalance-delay",
        "0s",
    ]
    .map(String::from)
    .to_vec();
    let (nodes, balancer, _haproxy) = behind_haproxy(dir.path(), 1, &extra, |kafka, balancer| {
        vec![
            "--listeners".into(),
            format!("SASL_PLAINTEXT://{kafka}"),
            "--advertised-listeners".into(),
            format!("SASL_PLAINTEXT://{balancer}"),
        ]
    });
    let login = |user: &str, more: serde_json::Value| {
        let mut v = serde_json::json!({
            "client": "confluent", "bootstrap": balancer.to_string(),
            "protocol": "SASL_PLAINTEXT", "mechanism": "PLAIN", "user": user,
            "password": format!("{user}-secret"), "records": 5,
        });
        for (k, x) in more.as_object().expect("object") {
            v[k] = x.clone();
        }
        v
    };
    let acl = |resource: &str, name: &str, operation: &str| {
        serde_json::json!({"resource": resource, "name": name, "pattern": "PREFIXED",
            "principal": "User:alice", "operation": operation, "permission": "ALLOW"})
    };
    let set_up = security_client(login(
        "admin",
        serde_json::json!({"action": "admin", "topic": "-", "create_topics": ["lb-orders"],
            "acls": [acl("TOPIC", "lb-", "READ"), acl("GROUP", "alice-", "READ")]}),
    ));
    assert_eq!(set_up["ok"], true, "{set_up}");
    let wrote = security_client(login(
        "admin",
        serde_json::json!({"action": "produce", "topic": "lb-orders"}),
    ));
    assert_eq!(wrote["ok"], true, "{wrote}");

    // Alice's groups, until some of their requests reached an agent that forwarded them to
    // the group's coordinator: every one is served as alice (an agent's own identity, or an
    // anonymous one, would be refused).
    let forwarded = || -> f64 {
        nodes
            .iter()
            .filter_map(|n| metric(n.admin, "floe_forwarded_requests_total"))
            .sum()
    };
    let mut groups = 0;
    while groups < 3 || (forwarded() == 0.0 && groups < 12) {
        let group = format!("alice-{groups}");
        let read = security_client(login(
            "alice",
            serde_json::json!({"action": "consume", "topic": "lb-orders", "group": group}),
        ));
        assert_eq!(read["ok"], true, "{group}: {read}");
        groups += 1;
    }
    assert!(
        forwarded() > 0.0,
        "no group request was forwarded in {groups} groups"
    );
    // A group alice may not read is refused, wherever its coordinator is.
    let refused = security_client(login(
        "alice",
        serde_json::json!({"action": "consume", "topic": "lb-orders", "group": "eve-group"}),
    ));
    assert_eq!(refused["error"], "GROUP_AUTHORIZATION_FAILED", "{refused}");
}

/// Kafka's Java client, idempotent with five requests in flight, keeps its records in order and
/// writes each once while an agent it may be connected to through the balancer dies: its
/// retries land on the other agents, whose replicated producer state knows its sequences.
#[test]
fn java_idempotent_producer_keeps_order_while_an_agent_dies() {
    let dir = temp_dir();
    // Three voters: whichever agent holds the producer's connection may die.
    let (mut nodes, balancer, _haproxy) = behind_haproxy(dir.path(), 3, &[], |_, balancer| {
        vec!["--advertised-addr".into(), balancer.to_string()]
    });
    let mut java = std::process::Command::new("scripts/java_client.sh")
        .args([
            "run",
            "ordered",
            &balancer.to_string(),
            "ordered-behind-lb",
            "40000",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the Java client (the README test command installs it)");
    // Mid-stream (the producer paces itself over about eight seconds), the agent its records
    // reach dies.
    let produced = |node: &Floe| metric(node.admin, "floe_produce_records_total").unwrap_or(0.0);
    let busy = support::wait_for("the producer's records", Duration::from_secs(60), || {
        nodes.iter().position(|n| produced(n) > 1_000.0)
    });
    nodes[busy].kill();
    let deadline = Instant::now() + Duration::from_secs(300);
    while java.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "the Java producer did not finish"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = java.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("PASS read back"), "{stdout}");
    let survivors: f64 = (0..nodes.len())
        .filter(|&i| i != busy)
        .map(|i| produced(&nodes[i]))
        .sum();
    assert!(
        survivors > 0.0,
        "no record reached another agent after the kill"
    );
}
