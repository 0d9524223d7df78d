//! Scale-in and rolling restarts without a client error: agents behind a real haproxy (each in
//! service while its /readyz answers 200), an idempotent producer and a consumer group at
//! load. SIGTERM drains an agent: it leaves the registry, answers what it read, seals what
//! waits and exits; the producer sees no delivery error, nothing is lost or duplicated, and
//! the group goes on at another coordinator without waiting for a lease.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use support::haproxy::behind_haproxy;
use support::kafka::{Acks, assert_read_back, load_until_stopped, producer};
use support::{Floe, coordinated, http_get, http_json, temp_dir, wait_for};

const TOPIC: &str = "drained";
const PARTITIONS: i32 = 6;

/// The drain deadline the agents run with; SIGTERM must end the process well within the
/// test's own limit.
const DRAIN_TIMEOUT: &str = "10s";
const EXIT_LIMIT: Duration = Duration::from_secs(20);

fn flags() -> Vec<String> {
    ["--drain-timeout", DRAIN_TIMEOUT]
        .map(String::from)
        .to_vec()
}

/// A group name that the agent `agent` of agents 1–3 coordinates.
fn group_coordinated_by(agent: i32) -> String {
    let agents: Vec<floe::metadata::state::Agent> = (1..=3)
        .map(|id| floe::metadata::state::Agent {
            id,
            host: String::new(),
            port: 0,
            zone: None,
            internal_addr: None,
            lease_expires_ms: i64::MAX,
        })
        .collect();
    (0..)
        .map(|i| format!("drain-group-{i}"))
        .find(|g| floe::placement::coordinator(&agents, g) == Some(agent))
        .expect("some group")
}

/// One member of a consumer group, reading in a thread until stopped: when it saw each
/// (partition, offset), and how many errors the client reported on the way.
struct GroupReader {
    stop: Arc<AtomicBool>,
    read: Arc<std::sync::Mutex<Vec<(Instant, i32, i64)>>>,
    thread: JoinHandle<usize>,
}

impl GroupReader {
    fn start(bootstrap: &str, group: &str) -> GroupReader {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", group)
            .set("auto.offset.reset", "earliest")
            .set("enable.auto.commit", "true")
            .set("auto.commit.interval.ms", "200")
            .set("session.timeout.ms", "10000")
            .set("heartbeat.interval.ms", "500")
            .create()
            .expect("consumer");
        consumer.subscribe(&[TOPIC]).expect("subscribe");
        let stop = Arc::new(AtomicBool::new(false));
        let read = Arc::new(std::sync::Mutex::new(Vec::new()));
        let thread = std::thread::spawn({
            let (stop, read) = (stop.clone(), read.clone());
            move || {
                let mut errors = 0;
                while !stop.load(Ordering::Relaxed) {
                    match consumer.poll(Duration::from_millis(50)) {
                        Some(Ok(m)) => read.lock().expect("read").push((
                            Instant::now(),
                            m.partition(),
                            m.offset(),
                        )),
                        // Retriable: the client rediscovers the coordinator and rejoins.
                        Some(Err(_)) => errors += 1,
                        None => {}
                    }
                }
                errors
            }
        });
        GroupReader { stop, read, thread }
    }

    fn seen(&self) -> BTreeSet<(i32, i64)> {
        let read = self.read.lock().expect("read");
        read.iter().map(|(_, p, o)| (*p, *o)).collect()
    }

    /// The longest time without a record after `since`.
    fn longest_gap_after(&self, since: Instant) -> Duration {
        let read = self.read.lock().expect("read");
        let mut last = since;
        let mut gap = Duration::ZERO;
        for (at, _, _) in read.iter().filter(|(at, _, _)| *at >= since) {
            gap = gap.max(at.duration_since(last));
            last = *at;
        }
        gap
    }

    fn stop(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("reader")
    }
}

fn acked(acks: &Acks) -> BTreeMap<i32, Vec<support::kafka::Seen>> {
    acks.by_partition.lock().expect("acks").clone()
}

/// The longest time between two acknowledgements after `since`.
fn longest_ack_gap_after(acks: &Acks, since: Instant) -> Duration {
    let times = acks.times.lock().expect("times");
    let mut last = since;
    let mut gap = Duration::ZERO;
    for at in times.iter().filter(|at| **at >= since) {
        gap = gap.max(at.duration_since(last));
        last = *at;
    }
    gap
}

/// SIGTERM to `node`: it exits on its own, successfully and after a complete drain (no
/// connection left, no batch unanswered, its registration given back).
fn drain(node: &mut Floe) -> Duration {
    let (status, took) = node.terminate(EXIT_LIMIT);
    assert!(status.success(), "exit {status}:\n{}", node.log());
    assert!(
        node.log().contains("drained; stopping"),
        "the drain did not complete:\n{}",
        node.log()
    );
    took
}

/// Until the group reader has seen every acknowledged record (redeliveries after a rebalance
/// are allowed: the group reads at least once).
fn wait_until_read(reader: &GroupReader, acked: &BTreeMap<i32, Vec<support::kafka::Seen>>) {
    let expected: BTreeSet<(i32, i64)> = acked
        .iter()
        .flat_map(|(p, records)| records.iter().map(move |r| (*p, r.offset)))
        .collect();
    wait_for(
        "the group to read every record",
        Duration::from_secs(90),
        || {
            let seen = reader.seen();
            expected.is_subset(&seen).then_some(())
        },
    );
}

/// Three agents behind haproxy (nodes 1 to `voters` vote) at load: an idempotent producer,
/// and a member of `group` reading.
struct AtLoad {
    nodes: Vec<Floe>,
    bootstrap: String,
    _haproxy: support::haproxy::Haproxy,
    acks: Acks,
    stop: Arc<AtomicBool>,
    load: JoinHandle<rdkafka::error::KafkaResult<()>>,
    reader: GroupReader,
}

impl AtLoad {
    fn start(dir: &std::path::Path, voters: usize, group: &str) -> AtLoad {
        let (nodes, balancer, haproxy) = behind_haproxy(dir, voters, &flags(), |_, b| {
            vec!["--advertised-addr".into(), b.to_string()]
        });
        let bootstrap = balancer.to_string();
        let (p, acks) = producer(&bootstrap, "none");
        let stop = Arc::new(AtomicBool::new(false));
        let load = load_until_stopped(
            p,
            TOPIC,
            PARTITIONS,
            20,
            stop.clone(),
            Duration::from_secs(60),
        );
        let reader = GroupReader::start(&bootstrap, group);
        AtLoad {
            nodes,
            bootstrap,
            _haproxy: haproxy,
            acks,
            stop,
            load,
            reader,
        }
    }

    /// Until the group has read `more` records beyond what it has read so far.
    fn read_on(&self, more: usize) {
        let before = self.reader.seen().len();
        wait_for("the group to read on", Duration::from_secs(60), || {
            (self.reader.seen().len() >= before + more).then_some(())
        });
    }

    /// Stops the load and checks what the clients saw: no delivery error, every acknowledged
    /// record read by the group, and the topic holding exactly those, once each, in order.
    /// Reports the longest gaps between acknowledgements and between records read since
    /// `since`.
    fn finish(self, since: Instant) {
        self.stop.store(true, Ordering::Relaxed);
        self.load.join().expect("load").expect("flush");
        let errors = self.acks.errors.lock().expect("errors").clone();
        assert!(errors.is_empty(), "delivery errors: {errors:?}");
        let acked = acked(&self.acks);
        wait_until_read(&self.reader, &acked);
        eprintln!(
            "longest gap between acknowledgements {:?}, between records read by the group {:?}",
            longest_ack_gap_after(&self.acks, since),
            self.reader.longest_gap_after(since),
        );
        let consumer_errors = self.reader.stop();
        eprintln!("errors the group member's client reported (retried): {consumer_errors}");
        assert_read_back(&self.bootstrap, TOPIC, &acked);
    }
}

#[test]
fn sigterm_drains_an_agent_without_a_client_error() {
    let dir = temp_dir();
    // Agent 3 coordinates the group (node 1 is the quorum's only voter and stays).
    let group = group_coordinated_by(3);
    let mut cluster = AtLoad::start(dir.path(), 1, &group);
    wait_for(
        "the group to read at agent 3",
        Duration::from_secs(60),
        || {
            (cluster.reader.seen().len() > 500
                && coordinated(cluster.nodes[2].admin, &group).is_some())
            .then_some(())
        },
    );

    let drained_at = Instant::now();
    let took = drain(&mut cluster.nodes[2]);
    // The group goes on at another agent.
    let moved = wait_for("a new coordinator", Duration::from_secs(30), || {
        (0..2).find(|&i| coordinated(cluster.nodes[i].admin, &group).is_some())
    });
    cluster.read_on(500);
    std::thread::sleep(Duration::from_secs(1));
    eprintln!(
        "agent 3 drained and exited in {took:?}; the group moved to agent {}",
        moved + 1
    );
    cluster.finish(drained_at);
}

#[test]
fn post_v1_drain_drains_and_exits_like_sigterm() {
    let dir = temp_dir();
    let mut floe = Floe::start(&dir.path().join("node"), &flags());
    // A plain POST, which any web page can make a browser send, is refused.
    let (status, _) = support::http_request(floe.admin, "POST", "/v1/drain", &[], b"");
    assert_eq!(status, 415);
    support::wait_until_ready(floe.admin);
    let (status, body) = support::http_request(
        floe.admin,
        "POST",
        "/v1/drain",
        &[("content-type", "application/json")],
        b"{}",
    );
    assert_eq!(status, 202, "{body}");
    let exit = floe.wait_exit(EXIT_LIMIT);
    assert!(exit.success(), "exit {exit}:\n{}", floe.log());
    assert!(floe.log().contains("drained; stopping"), "{}", floe.log());
}

#[test]
fn a_rolling_restart_of_a_three_voter_cluster_loses_nothing() {
    let dir = temp_dir();
    let mut cluster = AtLoad::start(dir.path(), 3, &group_coordinated_by(2));
    cluster.read_on(500);

    let restarted_at = Instant::now();
    // The leader first.
    let leader = http_json(cluster.nodes[0].admin, "/v1/quorum")["leader"]
        .as_u64()
        .expect("a leader") as usize;
    let mut order: Vec<usize> = (0..cluster.nodes.len()).collect();
    order.sort_by_key(|&i| i + 1 != leader);
    for i in order {
        let node = &mut cluster.nodes[i];
        let id = i + 1;
        let took = drain(node);
        eprintln!("node {id} drained and exited in {took:?}");
        node.restart();
        // Back in service: ready for the balancer, and a member of a quorum with a leader.
        wait_for("the node to be ready", Duration::from_secs(30), || {
            let quorum = http_json(node.admin, "/v1/quorum");
            (http_get(node.admin, "/readyz").0 == 200 && quorum["leader"].is_u64()).then_some(())
        });
        cluster.read_on(200);
    }
    cluster.finish(restarted_at);
}
