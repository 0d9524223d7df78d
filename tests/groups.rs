//! Consumer groups with librdkafka's `subscribe()`, over the classic protocol and over KIP-848
//! (`group.protocol=consumer`): three consumers share twelve partitions and read 100k records
//! exactly once; a consumer leaves and the rest take over without losing a record; eager and
//! cooperative-sticky assignors (classic), uniform and range (KIP-848); a static member rejoins
//! without a rebalance.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use floe::protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use floe::protocol::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use floe::protocol::messages::{
    OffsetCommitRequest, OffsetDeleteRequest, RequestBody, ResponseBody,
};
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::Message;
use rdkafka::types::RDKafkaErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use support::kafka::{flush, produce, producer};
use support::{Floe, coordinated, http_json, kafka_call, metric, temp_dir};

const PARTITIONS: i32 = 12;

fn start() -> (tempfile::TempDir, Floe) {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &[
            "--default-partitions",
            &PARTITIONS.to_string(),
            "--group-initial-rebalance-delay",
            "1s",
            "--group-consumer-heartbeat-interval",
            "500ms",
        ],
    );
    (dir, floe)
}

/// How a consumer takes part in its group.
#[derive(Debug, Clone, Copy)]
enum Protocol {
    /// JoinGroup/SyncGroup with this client-side assignor.
    Classic(&'static str),
    /// KIP-848 with this server-side assignor.
    Consumer(&'static str),
}

fn consumer(
    bootstrap: &str,
    group: &str,
    protocol: Protocol,
    instance: Option<&str>,
) -> BaseConsumer {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false");
    match protocol {
        Protocol::Classic(strategy) => config
            .set("partition.assignment.strategy", strategy)
            .set("session.timeout.ms", "10000")
            .set("heartbeat.interval.ms", "500"),
        Protocol::Consumer(assignor) => config
            .set("group.protocol", "consumer")
            .set("group.remote.assignor", assignor),
    };
    if let Some(id) = instance {
        config.set("group.instance.id", id);
    }
    let c: BaseConsumer = config.create().expect("consumer");
    c.subscribe(&["grouped"]).expect("subscribe");
    c
}

fn assigned(c: &BaseConsumer) -> usize {
    c.assignment().map(|a| a.count()).unwrap_or(0)
}

/// Polls every consumer until each holds a share and together they hold all partitions.
fn wait_balanced(consumers: &[&BaseConsumer], seen: &mut Vec<(usize, i32, i64, Vec<u8>)>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        poll_round(consumers, seen);
        let counts: Vec<usize> = consumers.iter().map(|c| assigned(c)).collect();
        if counts.iter().all(|&n| n > 0) && counts.iter().sum::<usize>() == PARTITIONS as usize {
            return;
        }
        assert!(Instant::now() < deadline, "never balanced: {counts:?}");
    }
}

/// One poll of each consumer; records land in `seen` as (consumer, partition, offset, key).
fn poll_round(consumers: &[&BaseConsumer], seen: &mut Vec<(usize, i32, i64, Vec<u8>)>) {
    for (i, c) in consumers.iter().enumerate() {
        let mut polled = false;
        while let Some(m) = c.poll(Duration::from_millis(if polled { 0 } else { 20 })) {
            let m = m.expect("consume");
            seen.push((
                i,
                m.partition(),
                m.offset(),
                m.key().unwrap_or_default().to_vec(),
            ));
            polled = true;
        }
        if polled {
            // A KIP-848 member's commit can race an epoch change it has not heard of yet
            // (STALE_MEMBER_EPOCH); the next round commits the same positions again.
            if let Err(e) = c.commit_consumer_state(CommitMode::Sync) {
                let stale = e.rdkafka_error_code() == Some(RDKafkaErrorCode::StaleMemberEpoch);
                assert!(stale, "commit: {e}");
            }
        }
    }
}

fn produce_all(bootstrap: &str, count: usize, tag: &str) {
    let (p, acks) = producer(bootstrap, "lz4");
    produce(&p, "grouped", PARTITIONS, count, tag);
    flush(&p);
    assert!(acks.errors.lock().expect("errors").is_empty());
}

fn share_and_survive_a_leave(protocol: Protocol) {
    let (_dir, floe) = start();
    let bootstrap = floe.bootstrap();
    produce_all(&bootstrap, 1, "warmup");
    let group = "shared";
    let a = consumer(&bootstrap, group, protocol, None);
    let b = consumer(&bootstrap, group, protocol, None);
    let c = consumer(&bootstrap, group, protocol, None);
    let mut seen = Vec::new();
    wait_balanced(&[&a, &b, &c], &mut seen);
    if let Protocol::Consumer(assignor) = protocol {
        // The group really is a KIP-848 group, assigned on the server by the chosen assignor.
        let g = coordinated(floe.admin, group).expect("the group is live");
        assert_eq!(
            (g["type"].as_str(), g["assignor"].as_str()),
            (Some("consumer"), Some(assignor))
        );
        assert_eq!(g["members"].as_array().map(Vec::len), Some(3));
    }
    let members = metric(
        floe.admin,
        &format!(
            "floe_coordinated_group_members{{type=\"{}\",state=\"Stable\"}}",
            match protocol {
                Protocol::Classic(_) => "classic",
                Protocol::Consumer(_) => "consumer",
            }
        ),
    );
    assert_eq!(members, Some(3.0));

    // 100k records, each read exactly once, by the consumer that owns its partition.
    produce_all(&bootstrap, 100_000, "main");
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < 100_001 {
        poll_round(&[&a, &b, &c], &mut seen);
        assert!(Instant::now() < deadline, "read {} of 100001", seen.len());
    }
    let positions: BTreeSet<(i32, i64)> = seen.iter().map(|(_, p, o, _)| (*p, *o)).collect();
    assert_eq!(positions.len(), seen.len(), "a record was read twice");
    assert_eq!(seen.len(), 100_001);
    // Once the group is balanced each partition has one owner. The warmup record may have
    // been read while the group was still settling (by a member that held its partition
    // before the last assignment), so only the records produced after balance count here.
    let owners: BTreeMap<i32, BTreeSet<usize>> = seen
        .iter()
        .filter(|(_, _, _, key)| key.starts_with(b"key-main-"))
        .fold(BTreeMap::new(), |mut m, (c, p, _, _)| {
            m.entry(*p).or_insert_with(BTreeSet::new).insert(*c);
            m
        });
    assert!(
        owners.values().all(|o| o.len() == 1),
        "partitions shared: {owners:?}"
    );

    // The group's lag in /metrics agrees with /v1/groups.
    let lag = metric(floe.admin, "floe_group_lag_records{group=\"shared\"}");
    let groups = http_json(floe.admin, "/v1/groups");
    let total_lag = groups["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["group"] == group))
        .and_then(|g| g["total_lag"].as_f64());
    assert_eq!(lag, total_lag);

    // One consumer leaves; the others take its partitions from the committed offsets.
    drop(c);
    produce_all(&bootstrap, 6_000, "after-leave");
    let mut after = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        poll_round(&[&a, &b], &mut after);
        let keys: BTreeSet<&Vec<u8>> = after
            .iter()
            .map(|(_, _, _, k)| k)
            .filter(|k| k.starts_with(b"key-after-leave-"))
            .collect();
        if keys.len() == 6_000 && assigned(&a) + assigned(&b) == PARTITIONS as usize {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after the leave: {} of 6000 records",
            keys.len()
        );
    }
}

#[test]
fn eager_consumers_share_partitions_exactly_once_and_survive_a_leave() {
    share_and_survive_a_leave(Protocol::Classic("range"));
}

#[test]
fn cooperative_sticky_consumers_share_partitions_exactly_once_and_survive_a_leave() {
    share_and_survive_a_leave(Protocol::Classic("cooperative-sticky"));
}

#[test]
fn kip848_uniform_consumers_share_partitions_exactly_once_and_survive_a_leave() {
    share_and_survive_a_leave(Protocol::Consumer("uniform"));
}

#[test]
fn kip848_range_consumers_share_partitions_exactly_once_and_survive_a_leave() {
    share_and_survive_a_leave(Protocol::Consumer("range"));
}

/// The group as its coordinator reports it: (generation, state, instance id → member id).
type LiveGroup = (i64, String, BTreeMap<String, String>);

fn live_group(floe: &Floe, group: &str) -> Option<LiveGroup> {
    let g = coordinated(floe.admin, group)?;
    let members = g["members"]
        .as_array()?
        .iter()
        .filter_map(|m| {
            Some((
                m["instance_id"].as_str()?.to_string(),
                m["member_id"].as_str()?.to_string(),
            ))
        })
        .collect();
    Some((
        g["generation"].as_i64()?,
        g["state"].as_str()?.to_string(),
        members,
    ))
}

/// kcat as a static group member: a separate process that can crash (SIGKILL) and restart.
fn kcat_member(bootstrap: &str, instance: &str) -> std::process::Child {
    std::process::Command::new("kcat")
        .args(["-b", bootstrap, "-G", "static", "-q", "-o", "beginning"])
        .args(["-X", &format!("group.instance.id={instance}")])
        .args([
            "-X",
            "session.timeout.ms=10000",
            "-X",
            "partition.assignment.strategy=range",
        ])
        .arg("grouped")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kcat (the README test command installs it)")
}

#[test]
fn a_static_member_rejoins_without_a_rebalance() {
    let (_dir, floe) = start();
    let bootstrap = floe.bootstrap();
    produce_all(&bootstrap, 1, "warmup");
    let a = consumer(
        &bootstrap,
        "static",
        Protocol::Classic("range"),
        Some("host-a"),
    );
    let mut b = kcat_member(&bootstrap, "host-b");
    let mut seen = Vec::new();
    let wait = |seen: &mut Vec<_>, what: &str, f: &dyn Fn(&LiveGroup) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            poll_round(&[&a], seen);
            if let Some(g) = live_group(&floe, "static").filter(|g| f(g)) {
                return g;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {:?}",
                live_group(&floe, "static")
            );
        }
    };
    let (generation, _, members) = wait(&mut seen, "two stable members", &|g| {
        g.1 == "Stable" && g.2.len() == 2 && assigned(&a) > 0
    });
    let old_b = members["host-b"].clone();

    // b crashes and restarts within its session timeout: it takes its slot back by
    // instance id, and the group keeps its generation (no rebalance).
    let _ = b.kill();
    let _ = b.wait();
    let mut b = kcat_member(&bootstrap, "host-b");
    let (after, state, members) = wait(&mut seen, "b back", &|g| {
        g.2.get("host-b").is_some_and(|id| *id != old_b)
    });
    assert_eq!(
        (after, state.as_str()),
        (generation, "Stable"),
        "the group rebalanced"
    );
    assert_eq!(members.len(), 2);
    let _ = b.kill();
    let _ = b.wait();
}

fn partitions_of(c: &BaseConsumer) -> BTreeSet<i32> {
    c.assignment()
        .map(|a| a.elements().iter().map(|e| e.partition()).collect())
        .unwrap_or_default()
}

#[test]
fn a_kip848_static_member_comes_back_to_its_partitions_without_a_rebalance() {
    let (_dir, floe) = start();
    let bootstrap = floe.bootstrap();
    produce_all(&bootstrap, 1, "warmup");
    let protocol = Protocol::Consumer("uniform");
    let a = consumer(&bootstrap, "static848", protocol, Some("host-a"));
    let b = consumer(&bootstrap, "static848", protocol, Some("host-b"));
    let mut seen = Vec::new();
    wait_balanced(&[&a, &b], &mut seen);
    let stable =
        |floe: &Floe| coordinated(floe.admin, "static848").filter(|g| g["state"] == "Stable");
    let deadline = Instant::now() + Duration::from_secs(30);
    let before = loop {
        poll_round(&[&a, &b], &mut seen);
        if let Some(g) = stable(&floe) {
            break g;
        }
        assert!(
            Instant::now() < deadline,
            "never stable: {:?}",
            coordinated(floe.admin, "static848")
        );
    };
    let (a_partitions, b_partitions) = (partitions_of(&a), partitions_of(&b));

    // b closes: a static member leaves with epoch -2 and keeps its partitions for a while.
    drop(b);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !coordinated(floe.admin, "static848").is_some_and(|g| {
        g["members"]
            .as_array()
            .is_some_and(|ms| ms.iter().any(|m| m["member_epoch"] == -2))
    }) {
        poll_round(&[&a], &mut seen);
        assert!(
            Instant::now() < deadline,
            "b never left: {:?}",
            coordinated(floe.admin, "static848")
        );
    }
    // A new process with b's instance id gets b's partitions back; the group epoch stays.
    let b = consumer(&bootstrap, "static848", protocol, Some("host-b"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while partitions_of(&b).is_empty() {
        poll_round(&[&a, &b], &mut seen);
        assert!(Instant::now() < deadline, "b never came back");
    }
    assert_eq!(partitions_of(&b), b_partitions);
    assert_eq!(partitions_of(&a), a_partitions);
    let after = coordinated(floe.admin, "static848").expect("live");
    assert_eq!(
        after["epoch"], before["epoch"],
        "the group rebalanced: {after}"
    );
}

#[test]
fn a_kip848_regex_subscription_picks_up_new_topics() {
    let (_dir, floe) = start();
    let bootstrap = floe.bootstrap();
    let (p, acks) = producer(&bootstrap, "none");
    produce(&p, "rx-one", PARTITIONS, 120, "one");
    produce(&p, "other", PARTITIONS, 50, "other");
    flush(&p);
    // An offset of a topic the group will not subscribe to, committed while it is empty.
    let committed = kafka_call(
        &bootstrap,
        8,
        RequestBody::OffsetCommit(OffsetCommitRequest {
            group_id: "regex848".into(),
            generation_id_or_member_epoch: -1,
            topics: vec![OffsetCommitRequestTopic {
                name: "other".into(),
                partitions: vec![OffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 3,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }),
    );
    let ResponseBody::OffsetCommit(committed) = committed else {
        panic!("not an OffsetCommit answer: {committed:?}")
    };
    assert_eq!(committed.topics[0].partitions[0].error_code, 0);
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "regex848")
        .set("group.protocol", "consumer")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer");
    c.subscribe(&["^rx-.*"]).expect("subscribe");
    let mut keys = BTreeSet::new();
    let mut topics = BTreeSet::new();
    let mut read = |until: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while keys.len() < until {
            if let Some(m) = c.poll(Duration::from_millis(50)) {
                let m = m.expect("consume");
                topics.insert(m.topic().to_string());
                keys.insert(m.key().unwrap_or_default().to_vec());
            }
            assert!(Instant::now() < deadline, "read {} of {until}", keys.len());
        }
    };
    read(120);
    // A topic created later that matches joins the subscription (the group epoch moves).
    produce(&p, "rx-two", PARTITIONS, 80, "two");
    flush(&p);
    read(200);
    assert!(acks.errors.lock().expect("errors").is_empty());
    assert_eq!(keys.len(), 200);
    assert_eq!(
        topics,
        BTreeSet::from(["rx-one".to_string(), "rx-two".to_string()])
    );

    // With the member still in the group, OffsetDelete removes the offsets of a topic it does
    // not subscribe to and keeps those of one it does (Kafka's rule).
    c.commit_consumer_state(CommitMode::Sync).expect("commit");
    let topic = |name: &str| OffsetDeleteRequestTopic {
        name: name.into(),
        partitions: vec![OffsetDeleteRequestPartition { partition_index: 0 }],
    };
    let deleted = kafka_call(
        &bootstrap,
        0,
        RequestBody::OffsetDelete(OffsetDeleteRequest {
            group_id: "regex848".into(),
            topics: vec![topic("other"), topic("rx-one")],
        }),
    );
    let ResponseBody::OffsetDelete(deleted) = deleted else {
        panic!("not an OffsetDelete answer: {deleted:?}")
    };
    let codes: Vec<(String, i16)> = deleted
        .topics
        .iter()
        .map(|t| (t.name.clone(), t.partitions[0].error_code))
        .collect();
    let subscribed = floe::protocol::ErrorCode::GroupSubscribedToTopic.code();
    assert_eq!(
        codes,
        vec![("other".to_string(), 0), ("rx-one".to_string(), subscribed)]
    );
    let groups = http_json(floe.admin, "/v1/groups");
    let offsets: BTreeSet<String> = groups["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["group"] == "regex848"))
        .and_then(|g| g["offsets"].as_array())
        .map(|o| {
            o.iter()
                .filter_map(|o| o["topic"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        offsets,
        BTreeSet::from(["rx-one".to_string(), "rx-two".to_string()])
    );
}

#[test]
fn groups_are_deleted_only_once_empty() {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let (_dir, floe) = start();
    let bootstrap = floe.bootstrap();
    produce_all(&bootstrap, 24, "del");
    let a = consumer(&bootstrap, "del", Protocol::Classic("range"), None);
    let mut seen = Vec::new();
    wait_balanced(&[&a], &mut seen);
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < 24 {
        poll_round(&[&a], &mut seen);
        assert!(Instant::now() < deadline, "read {} of 24", seen.len());
    }
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin client");
    let delete = || {
        futures::executor::block_on(admin.delete_groups(&["del"], &AdminOptions::new()))
            .expect("DeleteGroups")
            .remove(0)
    };
    assert_eq!(
        delete(),
        Err(("del".to_string(), RDKafkaErrorCode::NonEmptyGroup))
    );
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(30);
    while live_group(&floe, "del").is_some_and(|g| !g.2.is_empty() || g.1 != "Empty") {
        assert!(Instant::now() < deadline, "the member never left");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(delete(), Ok("del".to_string()));
    let groups = http_json(floe.admin, "/v1/groups");
    assert!(
        groups["groups"]
            .as_array()
            .is_some_and(|g| g.iter().all(|g| g["group"] != "del")),
        "offsets remain: {groups}"
    );
    assert_eq!(
        delete(),
        Err(("del".to_string(), RDKafkaErrorCode::GroupIdNotFound))
    );
}
