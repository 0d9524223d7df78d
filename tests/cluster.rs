//! A real cluster on loopback: three `floe serve` voters (roles meta,agent) and two stateless
//! agents (role agent, Raft learners), sharing one object store directory.
//!
//! Under idempotent produce load the quorum leader's process is killed with SIGKILL: producers
//! see only retried requests, every acknowledged record is read back exactly once at its
//! offset, service resumes; the killed node restarts on its data directory and catches up
//! (snapshot + log).

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::producer::Producer;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::kafka::{Seen, consume, load_until_stopped, produce, producer};
use support::{Floe, coordinated, free_addr, free_port, http_json, temp_dir, wait_for};

const PARTITIONS: i32 = 24;

struct Node {
    id: u64,
    kafka: SocketAddr,
    admin: SocketAddr,
    flags: Vec<String>,
    dir: std::path::PathBuf,
}

impl Node {
    fn start(&self) -> Floe {
        Floe::start_at(&self.dir, self.kafka, self.admin, &self.flags)
    }

    fn quorum(&self) -> Value {
        http_json(self.admin, "/v1/quorum")
    }
}

fn acked_count(acks: &support::kafka::Acks) -> usize {
    acks.by_partition
        .lock()
        .expect("acks")
        .values()
        .map(Vec::len)
        .sum()
}

/// Three voters (ids 1–3) and two agents (4, 5) sharing one object store directory.
fn five_nodes(dir: &std::path::Path, partitions: i32) -> Vec<Node> {
    let objects = dir.join("objects");
    std::fs::create_dir_all(&objects).expect("objects dir");
    // Every internal request of this cluster is signed with its secret.
    let secret = dir.join("cluster.secret");
    std::fs::write(&secret, "this cluster's shared secret\n").expect("secret");
    let raft: Vec<u16> = (0..5).map(|_| free_port()).collect();
    let peers = (1..=3)
        .map(|id| format!("{id}=127.0.0.1:{}", raft[id - 1]))
        .collect::<Vec<_>>()
        .join(",");
    (1..=5u64)
        .map(|id| {
            let mut flags: Vec<String> = [
                "--node-id",
                &id.to_string(),
                "--meta-peers",
                &peers,
                "--object-store",
                &format!("file://{}", objects.display()),
                "--default-partitions",
                &partitions.to_string(),
                "--snapshot-every",
                "100",
                "--group-consumer-heartbeat-interval",
                "1s",
                "--cluster-secret-file",
                &secret.display().to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if id > 3 {
                flags.extend(
                    [
                        "--roles",
                        "agent",
                        "--raft-addr",
                        &format!("127.0.0.1:{}", raft[id as usize - 1]),
                    ]
                    .map(String::from),
                );
            }
            Node {
                id,
                kafka: free_addr(),
                admin: free_addr(),
                flags,
                dir: dir.join(format!("node-{id}")),
            }
        })
        .collect()
}

/// Starts the nodes and waits until one leader and all five agents are visible.
/// Every node's Kafka address, as a client's bootstrap list.
fn bootstrap(nodes: &[Node]) -> String {
    nodes
        .iter()
        .map(|n| n.kafka.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn start_cluster(nodes: &[Node]) -> (BTreeMap<u64, Floe>, u64) {
    let running: BTreeMap<u64, Floe> = nodes.iter().map(|n| (n.id, n.start())).collect();
    let leader = wait_for("a leader", Duration::from_secs(30), || {
        nodes[0].quorum()["leader"].as_u64()
    });
    wait_for("five live agents", Duration::from_secs(30), || {
        let cluster = http_json(nodes[4].admin, "/v1/cluster");
        (cluster["brokers"].as_array().map_or(0, Vec::len) == 5
            && cluster["quorum"]["learners"].as_array().map_or(0, Vec::len) == 2)
            .then_some(())
    });
    (running, leader)
}

#[test]
fn leader_killed_under_load_loses_nothing_and_a_restarted_voter_catches_up() {
    let dir = temp_dir();
    let nodes = five_nodes(dir.path(), PARTITIONS);
    let (mut running, leader) = start_cluster(&nodes);

    let bootstrap = bootstrap(&nodes);
    let (p, acks) = producer(&bootstrap, "lz4");
    let stop = Arc::new(AtomicBool::new(false));
    let load = load_until_stopped(
        p,
        "failover",
        PARTITIONS,
        480,
        stop.clone(),
        Duration::from_secs(60),
    );
    wait_for("acks before the kill", Duration::from_secs(60), || {
        (acked_count(&acks) >= 5_000).then_some(())
    });

    // Kill the quorum leader's process.
    let killed_at = Instant::now();
    running.get_mut(&leader).unwrap().kill();
    let survivor = nodes.iter().find(|n| n.id != leader && n.id <= 3).unwrap();
    let new_leader = wait_for("a new leader", Duration::from_secs(30), || {
        survivor.quorum()["leader"]
            .as_u64()
            .filter(|&l| l != leader)
    });
    let election = killed_at.elapsed();
    let before_kill = acked_count(&acks);
    wait_for("acks after the kill", Duration::from_secs(90), || {
        (acked_count(&acks) >= before_kill + 5_000).then_some(())
    });
    stop.store(true, Ordering::Relaxed);
    load.join()
        .expect("producer thread")
        .expect("flush after the failover");
    let errors = acks.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "deliveries failed: {errors:?}");

    // The longest pause between acknowledgements around the kill.
    let times = acks.times.lock().unwrap().clone();
    let gap = times
        .windows(2)
        .filter(|w| w[1] >= killed_at)
        .map(|w| w[1].duration_since(w[0]))
        .max()
        .unwrap_or_default();
    println!(
        "failover: leader {leader} killed; node {new_leader} elected after {election:?}; \
         longest pause between produce acknowledgements {gap:?}"
    );

    // Every acknowledged record is there once, at its offset, read through a stateless agent.
    let acked: BTreeMap<i32, Vec<Seen>> = acks.by_partition.lock().unwrap().clone();
    let high: BTreeMap<i32, usize> = acked
        .iter()
        .map(|(p, v)| {
            (
                *p,
                v.iter().map(|r| r.offset).max().unwrap_or(-1) as usize + 1,
            )
        })
        .collect();
    let got = consume(&nodes[3].kafka.to_string(), "failover", &high);
    for (partition, records) in &acked {
        let read = &got[partition];
        let offsets: Vec<i64> = read.iter().map(|r| r.offset).collect();
        assert!(
            offsets.windows(2).all(|w| w[1] == w[0] + 1),
            "partition {partition}: offsets not contiguous"
        );
        let keys: BTreeSet<&Vec<u8>> = read.iter().map(|r| &r.key).collect();
        assert_eq!(
            keys.len(),
            read.len(),
            "partition {partition}: a record twice"
        );
        for a in records {
            let r = &read[a.offset as usize];
            assert_eq!(
                (r.offset, &r.key, &r.value),
                (a.offset, &a.key, &a.value),
                "partition {partition}"
            );
        }
    }

    // The killed voter restarts on its data directory and catches up.
    let node = nodes.iter().find(|n| n.id == leader).unwrap();
    running.insert(leader, node.start());
    let target = survivor.quorum()["last_applied_index"].as_u64().unwrap();
    let caught_up = wait_for(
        "the restarted voter to catch up",
        Duration::from_secs(60),
        || {
            let q = node.quorum();
            (q["last_applied_index"].as_u64() >= Some(target)).then_some(q)
        },
    );
    assert_eq!(caught_up["voters"].as_array().map(Vec::len), Some(3));
    let topics = |n: &Node| -> Vec<Value> {
        http_json(n.admin, "/v1/topics")["topics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let failover_topic = |n: &Node| {
        topics(n)
            .into_iter()
            .find(|t| t["name"] == "failover")
            .map(|t| t["partitions"].clone())
    };
    let restarted = failover_topic(node).expect("the restarted voter knows the topic");
    assert_eq!(
        restarted.as_array().map(Vec::len),
        Some(PARTITIONS as usize)
    );
    assert_eq!(Some(restarted), failover_topic(survivor));
}

/// A leader that stops without closing its connections (SIGSTOP: a stalled process or
/// machine) must not hold the writes forwarded to it: the followers elect another leader and
/// the write goes there. The leader stays stopped until the write is answered, and a write
/// that waited for it would have failed after the write timeout (10 s).
#[test]
fn a_write_forwarded_to_a_stalled_leader_goes_to_the_next_one() {
    use floe::protocol::messages::{
        CreateTopicsRequest, RequestBody, ResponseBody, create_topics_request::CreatableTopic,
    };
    let dir = temp_dir();
    let nodes = five_nodes(dir.path(), 2);
    let (running, leader) = start_cluster(&nodes);
    let follower = nodes
        .iter()
        .find(|n| n.id <= 3 && n.id != leader)
        .expect("a follower");
    running[&leader].pause();
    let create = RequestBody::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: "after-the-stall".into(),
            num_partitions: 1,
            replication_factor: -1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    });
    let answer = support::kafka_call(&follower.kafka.to_string(), 7, create);
    running[&leader].resume();
    let ResponseBody::CreateTopics(response) = answer else {
        panic!("not a CreateTopics response: {answer:?}");
    };
    assert_eq!(
        response.topics[0].error_code, 0,
        "created while the leader was stopped: {response:?}"
    );
}

/// An agent stalled for longer than its lease (paused) is counted out by the others, who
/// coordinate its groups meanwhile: when it resumes it answers NOT_COORDINATOR until it has
/// renewed its registration, and then no longer knows the members it had. (Kept, a stale
/// member that is not told to rejoin holds up the group's next rebalance until its session
/// runs out.)
#[test]
fn an_agent_stalled_longer_than_its_lease_forgets_its_groups() {
    use floe::protocol::ErrorCode;
    use floe::protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use floe::protocol::messages::{
        HeartbeatRequest, JoinGroupRequest, RequestBody, ResponseBody, SyncGroupRequest,
    };
    let dir = temp_dir();
    let nodes = five_nodes(dir.path(), 2);
    let (running, _) = start_cluster(&nodes);
    // Agent 4 is no voter: the quorum and its clock go on while it is stopped.
    let agent = &nodes[3];
    let addr = agent.kafka.to_string();
    // Its own copy lists every agent, so it names the coordinators the others name.
    wait_for(
        "agent 4 to see five agents",
        Duration::from_secs(30),
        || {
            let cluster = http_json(agent.admin, "/v1/cluster");
            (cluster["brokers"].as_array().map_or(0, Vec::len) == 5).then_some(())
        },
    );
    let join = |group: &str, member_id: &str| {
        let request = RequestBody::JoinGroup(JoinGroupRequest {
            group_id: group.into(),
            // Longer than the stall: the member is not expired meanwhile.
            session_timeout_ms: 60_000,
            rebalance_timeout_ms: 60_000,
            member_id: member_id.into(),
            protocol_type: "consumer".into(),
            protocols: vec![JoinGroupRequestProtocol {
                name: "range".into(),
                metadata: bytes::Bytes::from_static(b"m"),
                ..Default::default()
            }],
            ..Default::default()
        });
        match support::kafka_call(&addr, 5, request) {
            ResponseBody::JoinGroup(r) => r,
            other => panic!("not a JoinGroup response: {other:?}"),
        }
    };
    // A group agent 4 coordinates: it hands out a member id instead of NOT_COORDINATOR.
    let (group, first) = (0..200)
        .map(|i| format!("stalled-{i}"))
        .find_map(|group| {
            let first = join(&group, "");
            (first.error_code == ErrorCode::MemberIdRequired.code()).then_some((group, first))
        })
        .expect("a group agent 4 coordinates");
    let joined = join(&group, &first.member_id);
    assert_eq!(joined.error_code, 0, "{joined:?}");
    let member = joined.member_id.clone();
    let synced = support::kafka_call(
        &addr,
        3,
        RequestBody::SyncGroup(SyncGroupRequest {
            group_id: group.clone(),
            generation_id: joined.generation_id,
            member_id: member.clone(),
            ..Default::default()
        }),
    );
    assert!(
        matches!(synced, ResponseBody::SyncGroup(ref r) if r.error_code == 0),
        "{synced:?}"
    );
    let heartbeat = || {
        let request = RequestBody::Heartbeat(HeartbeatRequest {
            group_id: group.clone(),
            generation_id: joined.generation_id,
            member_id: member.clone(),
            ..Default::default()
        });
        match support::kafka_call(&addr, 3, request) {
            ResponseBody::Heartbeat(r) => r.error_code,
            other => panic!("not a Heartbeat response: {other:?}"),
        }
    };
    assert_eq!(heartbeat(), 0);

    // Longer than the agent lease (4 s).
    running[&agent.id].pause();
    std::thread::sleep(Duration::from_secs(7));
    running[&agent.id].resume();
    let answer = wait_for("agent 4 to renew", Duration::from_secs(30), || {
        let code = heartbeat();
        (code != ErrorCode::NotCoordinator.code()).then_some(code)
    });
    assert_eq!(
        answer,
        ErrorCode::UnknownMemberId.code(),
        "the member from before the stall"
    );
}

#[test]
fn a_departed_agent_leaves_the_quorum_and_rejoins_when_it_starts_again() {
    let dir = temp_dir();
    let mut nodes = five_nodes(dir.path(), 2);
    for node in &mut nodes {
        node.flags
            .extend(["--remove-departed-agents-after", "2s"].map(String::from));
    }
    let (mut running, _) = start_cluster(&nodes);
    let learners = |nodes: &[Node]| -> Vec<u64> {
        let view = nodes[0].quorum();
        let list = view["learners"].as_array().cloned().unwrap_or_default();
        list.iter().filter_map(|v| v.as_u64()).collect()
    };
    assert_eq!(learners(&nodes), vec![4, 5]);

    // Agent 5 goes away: once its registration has lapsed for 2 s, the leader drops it.
    running.get_mut(&5).expect("running").kill();
    running.remove(&5);
    wait_for(
        "agent 5 removed from the quorum",
        Duration::from_secs(30),
        || (learners(&nodes) == vec![4]).then_some(()),
    );

    // It starts again (from nothing, as agents do): it joins and catches up.
    running.insert(5, nodes[4].start());
    wait_for(
        "agent 5 back in the quorum",
        Duration::from_secs(30),
        || (learners(&nodes) == vec![4, 5]).then_some(()),
    );
    let (p, acks) = producer(&nodes[0].kafka.to_string(), "none");
    produce(&p, "after-rejoin", 2, 100, "r");
    p.flush(Duration::from_secs(30)).expect("flush");
    assert!(acks.errors.lock().expect("errors").is_empty());
    wait_for(
        "agent 5 to see the new topic",
        Duration::from_secs(30),
        || {
            let topics = http_json(nodes[4].admin, "/v1/topics");
            topics["topics"]
                .as_array()?
                .iter()
                .any(|t| t["name"] == "after-rejoin")
                .then_some(())
        },
    );
}

/// DescribeQuorum asked of a learner agent is forwarded to the leader, the one node that knows
/// how far each voter and learner has replicated (Kafka's brokers forward it to the active
/// controller).
#[test]
fn describe_quorum_from_an_agent_is_the_leaders_view() {
    use floe::protocol::messages::describe_quorum_request::{PartitionData, TopicData};
    use floe::protocol::messages::{DescribeQuorumRequest, RequestBody, ResponseBody};
    let dir = temp_dir();
    let nodes = five_nodes(dir.path(), 1);
    let (_running, leader) = start_cluster(&nodes);
    let request = RequestBody::DescribeQuorum(DescribeQuorumRequest {
        topics: vec![TopicData {
            topic_name: "__cluster_metadata".into(),
            partitions: vec![PartitionData::default()],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ids = |replicas: &[floe::protocol::messages::describe_quorum_response::ReplicaState]| {
        let mut ids: Vec<i32> = replicas.iter().map(|r| r.replica_id).collect();
        ids.sort();
        ids
    };
    // Every member has replicated some of the log once the cluster is up; until the leader
    // has heard from each, its offset reads -1 (unknown).
    let partition = wait_for("every member's progress", Duration::from_secs(30), || {
        let ResponseBody::DescribeQuorum(answer) =
            support::kafka_call(&nodes[4].kafka.to_string(), 2, request.clone())
        else {
            panic!("not a DescribeQuorum answer");
        };
        let partition = answer.topics[0].partitions[0].clone();
        let replicas = partition.current_voters.iter().chain(&partition.observers);
        replicas
            .clone()
            .all(|r| r.log_end_offset > 0)
            .then_some(partition)
    });
    assert_eq!(partition.error_code, 0);
    assert_eq!(i64::from(partition.leader_id), leader as i64);
    assert_eq!(ids(&partition.current_voters), [1, 2, 3]);
    assert_eq!(ids(&partition.observers), [4, 5]);
    assert!(partition.high_watermark > 0);
}

/// The running node that coordinates `group`, with the group as its /v1/groups shows it.
fn coordinating(
    nodes: &[Node],
    running: &BTreeMap<u64, Floe>,
    group: &str,
) -> Option<(u64, Value)> {
    nodes
        .iter()
        .filter(|n| running.contains_key(&n.id))
        .find_map(|n| Some((n.id, coordinated(n.admin, group)?)))
}

/// The node that coordinates `group`.
fn coordinator_of(nodes: &[Node], running: &BTreeMap<u64, Floe>, group: &str) -> Option<u64> {
    coordinating(nodes, running, group).map(|(id, _)| id)
}

/// Members of `group` at the agent that coordinates it now (0 if none does).
fn members_at_new_coordinator(nodes: &[Node], running: &BTreeMap<u64, Floe>, group: &str) -> usize {
    coordinating(nodes, running, group)
        .and_then(|(_, g)| g["members"].as_array().map(Vec::len))
        .unwrap_or(0)
}

#[test]
fn a_group_survives_the_death_of_its_coordinating_agent() {
    group_survives_its_coordinator(
        "survivor",
        &[
            ("session.timeout.ms", "10000"),
            ("heartbeat.interval.ms", "500"),
        ],
    );
}

#[test]
fn a_kip848_group_survives_the_death_of_its_coordinating_agent() {
    group_survives_its_coordinator("survivor848", &[("group.protocol", "consumer")]);
}

/// Two consumers of `group` (configured with `settings`) read 12,000 records while the agent
/// coordinating the group is killed; every record is read and the commits survive.
fn group_survives_its_coordinator(group: &str, settings: &[(&str, &str)]) {
    use rdkafka::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
    use rdkafka::message::Message;

    let dir = temp_dir();
    let nodes = five_nodes(dir.path(), 12);
    let (mut running, _) = start_cluster(&nodes);
    let bootstrap = bootstrap(&nodes);
    let (p, acks) = producer(&bootstrap, "none");
    produce(&p, "grouped", 12, 12_000, "g");
    p.flush(Duration::from_secs(60)).expect("flush");
    assert!(acks.errors.lock().expect("errors").is_empty());

    let consumers: Vec<BaseConsumer> = (0..2)
        .map(|_| {
            let mut config = ClientConfig::new();
            config
                .set("bootstrap.servers", &bootstrap)
                .set("group.id", group)
                .set("auto.offset.reset", "earliest")
                .set("enable.auto.commit", "false");
            for (key, value) in settings {
                config.set(*key, *value);
            }
            let c: BaseConsumer = config.create().expect("consumer");
            c.subscribe(&["grouped"]).expect("subscribe");
            c
        })
        .collect();
    let mut read: BTreeSet<(i32, i64)> = BTreeSet::new();
    let poll = |read: &mut BTreeSet<(i32, i64)>| {
        for c in &consumers {
            let mut any = false;
            while let Some(m) = c.poll(Duration::from_millis(if any { 0 } else { 20 })) {
                // Errors while the coordinator moves are reported and retried by the client.
                if let Ok(m) = m {
                    read.insert((m.partition(), m.offset()));
                    any = true;
                }
            }
            if any {
                // A commit racing the coordinator's death may fail; the next one lands.
                let _ = c.commit_consumer_state(CommitMode::Sync);
            }
        }
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while read.len() < 4_000 {
        poll(&mut read);
        assert!(Instant::now() < deadline, "read only {}", read.len());
    }

    // Kill the agent that coordinates the group, mid-consumption.
    let coordinator = coordinator_of(&nodes, &running, group).expect("a coordinator");
    running.get_mut(&coordinator).expect("running").kill();
    running.remove(&coordinator);
    let killed = Instant::now();
    let mut regrouped: Option<Duration> = None;
    let mut last_check = killed;
    let deadline = killed + Duration::from_secs(120);
    while read.len() < 12_000 || regrouped.is_none() {
        poll(&mut read);
        if regrouped.is_none() && last_check.elapsed() > Duration::from_millis(100) {
            last_check = Instant::now();
            if members_at_new_coordinator(&nodes, &running, group) == 2 {
                regrouped = Some(killed.elapsed());
            }
        }
        assert!(
            Instant::now() < deadline,
            "after killing coordinator {coordinator}: read {} of 12000",
            read.len()
        );
    }
    eprintln!(
        "{group}: both members back in the group {:?} after its coordinator was killed",
        regrouped.unwrap_or_default()
    );
    // Another agent coordinates the group now, and the committed offsets survived.
    let moved = wait_for("a new coordinator", Duration::from_secs(30), || {
        poll(&mut read);
        coordinator_of(&nodes, &running, group)
    });
    assert_ne!(moved, coordinator);
    let committed: i64 = wait_for("committed offsets", Duration::from_secs(30), || {
        poll(&mut read);
        let node = nodes.iter().find(|n| n.id == moved).expect("node");
        let groups = http_json(node.admin, "/v1/groups");
        let total: i64 = groups["groups"]
            .as_array()?
            .iter()
            .find(|g| g["group"] == group)?["offsets"]
            .as_array()?
            .iter()
            .filter_map(|o| o["committed_offset"].as_i64())
            .sum();
        (total == 12_000).then_some(total)
    });
    assert_eq!(committed, 12_000);
}

/// The agent a FindCoordinator for the transactional id names, asked of `at`.
fn transaction_coordinator(at: &SocketAddr, transactional_id: &str) -> i32 {
    use floe::protocol::messages::{FindCoordinatorRequest, RequestBody, ResponseBody};
    let request = FindCoordinatorRequest {
        key: transactional_id.to_string(),
        key_type: 1,
        ..Default::default()
    };
    match support::kafka_call(&at.to_string(), 3, RequestBody::FindCoordinator(request)) {
        ResponseBody::FindCoordinator(r) if r.error_code == 0 => r.node_id,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn transactions_survive_the_death_of_their_coordinating_agent() {
    let dir = temp_dir();
    let nodes = five_nodes(dir.path(), 4);
    let (mut running, _) = start_cluster(&nodes);
    let bootstrap = bootstrap(&nodes);
    let mut client = std::process::Command::new("python3")
        .args([
            "tests/clients/txn_confluent.py",
            "loop",
            &bootstrap,
            "txn-survivor",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let stdout = client.stdout.take().expect("stdout");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    for line in lines.by_ref() {
        if line.expect("line") == "committed 5" {
            break;
        }
    }
    // Kill the agent that coordinates the transactional id, between transactions or inside
    // one: the client finds the coordinator again and goes on.
    let coordinator = transaction_coordinator(&nodes[0].kafka, "loop-txn-survivor");
    let id = u64::try_from(coordinator).expect("node id");
    running.get_mut(&id).expect("running").kill();
    running.remove(&id);
    let rest: Vec<String> = lines.map(|l| l.expect("line")).collect();
    assert!(client.wait().expect("client").success(), "{rest:?}");
    let seen: Value = serde_json::from_str(rest.last().expect("JSON")).expect("JSON");
    let mut expected: Vec<String> = (0..40)
        .flat_map(|t| (0..10).map(move |i| format!("t{t}-{i}")))
        .collect();
    expected.sort();
    let committed: Vec<String> = seen["committed"]
        .as_array()
        .expect("array")
        .iter()
        .map(|v| v.as_str().expect("string").to_string())
        .collect();
    assert_eq!(
        committed, expected,
        "every committed record once, after killing {coordinator}"
    );
}
