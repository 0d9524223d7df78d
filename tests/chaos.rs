//! Chaos: three nodes (each a voter and an agent) behind a real haproxy, on a SeaweedFS
//! server, under a rotating schedule of faults — kill -9 and restart, SIGSTOP pauses longer
//! than the agent lease and the election timeout, wall clocks 3 s or 30 s ahead or behind, network
//! partitions (one-way, two-way, and a bridge: two nodes cut from each other while both reach
//! the third), a node cut off from the object store, a voter demoted to a learner and promoted
//! again — with object-store faults (5xx, timeouts, resets, lost PUT responses, short reads)
//! injected all along. An idempotent
//! producer, a consumer group committing offsets and a high-watermark observer record every
//! send, acknowledgement, failure, poll, commit and watermark into one history; after a heal
//! and a full read of the topic, `floe_history::check` judges it: no lost, duplicated or
//! misplaced record, no skipped or repeated poll, no committed offset or high watermark going
//! back.
//!
//! The schedule puts every kind of fault on every node once (about three minutes, as the
//! README test command runs it); `FLOE_CHAOS_SECONDS` keeps it cycling at least that long, and
//! `FLOE_CHAOS_HISTORY=path.json` keeps the whole history as JSON.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use floe::protocol::ErrorCode;
use floe_history::{Event, History};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::haproxy::behind_haproxy_routed;
use support::proxy::Proxy;
use support::temp_dir;
use support::wall_clocks::WallClocks;
use support::workload::{self, Member, Recorder};

const TOPIC: &str = "chaos";
/// behind_haproxy creates topics with 6 partitions.
const PARTITIONS: i32 = 6;

/// Three voters behind haproxy, each advertising the balancer, whose Raft addresses the
/// others reach through a proxy the test can cut (`proxies[id - 1]`), on a shared `file://`
/// store unless `flags` name another.
fn voters_behind_proxies(
    dir: &std::path::Path,
    flags: &[String],
    configure: impl Fn(usize, &mut std::process::Command),
) -> (
    Vec<support::Floe>,
    std::net::SocketAddr,
    support::haproxy::Haproxy,
    Vec<Proxy>,
) {
    let mut proxies = Vec::new();
    let (nodes, balancer, haproxy) = behind_haproxy_routed(
        dir,
        3,
        flags,
        |_, b| vec!["--advertised-addr".into(), b.to_string()],
        |raft| {
            let proxy = Proxy::start(raft);
            let addr = proxy.addr;
            proxies.push(proxy);
            addr
        },
        configure,
    );
    (nodes, balancer, haproxy, proxies)
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// SIGKILL, down for a while, then started again on its data directory.
    Kill,
    /// SIGSTOP past the agent lease (4 s) and the election timeout, then SIGCONT.
    Pause,
    /// The node's wall clock jumps 3 s ahead, 3 s behind, 30 s ahead or 30 s behind (one
    /// each pass, in that order; libfaketime, reading an offset file the test rewrites) for
    /// as long as a pause, then back.
    Skew,
    /// For as long as a pause, the node's Raft traffic (votes, replication, writes and
    /// read-index requests forwarded to the leader) is cut, in one of three shapes that
    /// rotate over passes and nodes: nothing reaches the node while what it sends still
    /// arrives — one-way, the kind that makes a cut-off follower call elections; nothing
    /// reaches it nor leaves it — two-way; or the node and the leader (its neighbour, when it
    /// leads) are cut from each other both ways while both reach the third — a bridge, where a
    /// follower that lost its leader can still win votes. (Group requests an agent forwards
    /// to the coordinator go to the node's own address, not through the proxy.)
    Partition,
    /// Nothing of the node reaches the object store for as long as a pause: its writes and
    /// uncached reads fail, its readiness with them.
    StoreCut,
    /// The node stops voting (the leader makes it a learner: a membership change through
    /// the log) for as long as a pause, then votes again.
    Membership,
}

/// The quorum's leader as the first node that answers /v1/quorum knows it.
fn current_leader(nodes: &[support::Floe]) -> Option<u64> {
    nodes.iter().find_map(|n| {
        let (status, body) = support::http_get(n.admin, "/v1/quorum");
        let view: serde_json::Value = serde_json::from_str(&body).ok()?;
        (status == 200).then(|| view["leader"].as_u64()).flatten()
    })
}

/// The index in `nodes` of the leader, as the node named leader confirms about itself:
/// waits through elections and stale views.
fn confirmed_leader(nodes: &[support::Floe]) -> usize {
    support::wait_for("a leader", Duration::from_secs(30), || {
        let leader = current_leader(nodes)?;
        let node = nodes.get(usize::try_from(leader).ok()?.checked_sub(1)?)?;
        let (status, body) = support::http_get(node.admin, "/v1/quorum");
        let view: serde_json::Value = serde_json::from_str(&body).ok()?;
        (status == 200 && view["leader"].as_u64() == Some(leader)).then(|| leader as usize - 1)
    })
}

/// Asks the quorum's leader (found through any node's /v1/quorum) to make `voters` the
/// voters, trying again through elections and a leader that just stepped down.
fn change_voters(nodes: &[support::Floe], voters: &[u64]) {
    let body = serde_json::json!({ "voters": voters }).to_string();
    support::wait_for("the voters to change", Duration::from_secs(30), || {
        let leader = current_leader(nodes)?;
        let (status, _) = support::http_request(
            nodes[leader as usize - 1].admin,
            "PUT",
            "/v1/quorum/voters",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        (status == 200).then_some(())
    });
}

/// The longest time without an acknowledgement in each window `[from, to)` (milliseconds
/// since the start), by window.
fn longest_ack_gaps(history: &History, windows: &[(String, i64, i64)]) -> Vec<(String, i64)> {
    let acks: Vec<i64> = history
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Ack { at_ms, .. } => Some(*at_ms),
            _ => None,
        })
        .collect();
    windows
        .iter()
        .map(|(name, from, to)| {
            let mut last = *from;
            let mut gap = 0;
            for &at in acks.iter().filter(|&&at| at >= *from && at < *to) {
                gap = gap.max(at - last);
                last = at;
            }
            (name.clone(), gap.max(to - last))
        })
        .collect()
}

#[test]
fn no_anomaly_under_kills_pauses_and_object_store_faults() {
    let seconds: u64 = std::env::var("FLOE_CHAOS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let dir = temp_dir();
    // One S3 server; each node reaches it through a proxy of its own, which the schedule
    // cuts. behind_haproxy creates topics with 6 partitions (PARTITIONS).
    let store = support::s3::S3Server::seaweedfs(&dir.path().join("seaweedfs"));
    let store_addr: SocketAddr = store
        .endpoint
        .trim_start_matches("http://")
        .parse()
        .expect("store address");
    let store_proxies: Vec<Proxy> = (0..3).map(|_| Proxy::start(store_addr)).collect();
    let mut flags = support::s3::S3Server::floe_flags_without_endpoint("chaos");
    flags.extend(["--object-store-faults".into(), "rate=0.02".into()]);
    // Each node's wall clock is libfaketime's, shifted by what the schedule says.
    let clocks = WallClocks::new(dir.path(), 3);
    // The voters reach one another through proxies the schedule cuts.
    let (mut nodes, balancer, _haproxy, proxies) =
        voters_behind_proxies(dir.path(), &flags, |id, command| {
            clocks.configure(id, command);
            command.env(
                "AWS_ENDPOINT_URL",
                format!("http://{}", store_proxies[id - 1].addr),
            );
        });
    let bootstrap = balancer.to_string();
    let recorder = Recorder::new(TOPIC, PARTITIONS);
    let stop = Arc::new(AtomicBool::new(false));
    let producing = workload::produce_until(recorder.clone(), &bootstrap, stop.clone());
    let member = Member {
        consumer: 1,
        group: "chaos-group".into(),
        reset: "earliest",
        commit_every: 100,
    };
    let consuming = workload::consume_until(recorder.clone(), &bootstrap, member, stop.clone());
    let watching = workload::watch_watermarks(recorder.clone(), &bootstrap, stop.clone());

    // Faults rotate over kinds and nodes, each followed by a quiet period: every kind on
    // every node once, then on in the same order until the schedule's time is up.
    let schedule_end = Instant::now() + Duration::from_secs(seconds);
    let mut windows = Vec::new();
    std::thread::sleep(Duration::from_secs(3));
    let kinds = [
        Fault::Kill,
        Fault::Pause,
        Fault::Skew,
        Fault::Partition,
        Fault::StoreCut,
        Fault::Membership,
    ];
    let every_pair = kinds.len() * nodes.len();
    for (round, fault) in kinds.iter().cycle().enumerate() {
        if round >= every_pair && Instant::now() >= schedule_end {
            break;
        }
        // Each pass over the kinds moves every kind one node on: the first three passes
        // meet every (kind, node) pair.
        let pass = round / kinds.len();
        let node = (round + pass) % nodes.len();
        let from = recorder.now_ms();
        let mut name = format!("{fault:?}");
        match fault {
            Fault::Kill => {
                nodes[node].kill();
                std::thread::sleep(Duration::from_secs(3));
                nodes[node].restart();
            }
            Fault::Pause => {
                nodes[node].pause();
                std::thread::sleep(Duration::from_secs(6));
                nodes[node].resume();
            }
            Fault::Skew => {
                let skew = ["+3", "-3", "+30", "-30"][pass % 4];
                clocks.set(node + 1, skew);
                std::thread::sleep(Duration::from_secs(6));
                clocks.set(node + 1, "+0");
            }
            Fault::Partition => {
                let pids: Vec<u32> = nodes.iter().map(support::Floe::pid).collect();
                let refused_before: Vec<u64> = proxies.iter().map(Proxy::refusals).collect();
                // The proxies that must refuse connections if the partition took effect.
                let mut must_refuse = Vec::new();
                // Partitions are one node in three kinds: the shape moves on by one every
                // three passes, so each shape meets each node.
                let shape = match (pass + pass / 3) % 3 {
                    0 => {
                        proxies[node].cut();
                        "one-way"
                    }
                    1 => {
                        proxies[node].cut();
                        for (other, proxy) in proxies.iter().enumerate() {
                            if other != node {
                                proxy.refuse_from(&[pids[node]]);
                                // Its heartbeats if it leads, its votes if not.
                                must_refuse.push(other);
                            }
                        }
                        "two-way"
                    }
                    _ => {
                        let leader = confirmed_leader(&nodes);
                        let peer = if leader != node {
                            leader
                        } else {
                            (node + 1) % nodes.len()
                        };
                        proxies[node].refuse_from(&[pids[peer]]);
                        proxies[peer].refuse_from(&[pids[node]]);
                        // The leader's heartbeats to the follower.
                        must_refuse.push(if leader == node { peer } else { node });
                        "bridge"
                    }
                };
                std::thread::sleep(Duration::from_secs(6));
                proxies.iter().for_each(Proxy::heal);
                // Raft's heartbeats and votes open connections all the time: a partition by
                // process that refused none did not happen.
                let refused = |i: &usize| proxies[*i].refusals() - refused_before[*i];
                assert!(
                    must_refuse.is_empty() || must_refuse.iter().map(refused).sum::<u64>() > 0,
                    "the {shape} partition of node {} refused no connection",
                    node + 1
                );
                name = format!("{fault:?} ({shape})");
            }
            Fault::StoreCut => {
                store_proxies[node].cut();
                std::thread::sleep(Duration::from_secs(6));
                store_proxies[node].heal();
            }
            Fault::Membership => {
                let others: Vec<u64> = (1..=3).filter(|&id| id != node as u64 + 1).collect();
                change_voters(&nodes, &others);
                std::thread::sleep(Duration::from_secs(6));
                change_voters(&nodes, &[1, 2, 3]);
            }
        }
        std::thread::sleep(Duration::from_secs(4));
        windows.push((format!("{name} node {}", node + 1), from, recorder.now_ms()));
    }

    // Heal (every fault healed itself) and drain: the producer flushes, the group reads on a
    // little, then one reader reads the whole topic.
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    producing.join().expect("producer");
    let consumer_errors = consuming.join().expect("consumer");
    watching.join().expect("watermarks");
    workload::read_everything(&recorder, &bootstrap, 2);

    let history = recorder.history();
    let report = workload::judge(&history);
    eprintln!("errors the group member's client reported (retried): {consumer_errors}");
    for (window, gap) in longest_ack_gaps(&history, &windows) {
        eprintln!("{window}: longest gap between acknowledgements {gap} ms");
    }
    workload::assert_clean(&report);
}

/// The error a Fetch at `offset` of partition 0 of `topic` gets from the agent at `addr`.
fn fetch_error_at(addr: SocketAddr, topic: &str, offset: i64) -> i16 {
    use floe::protocol::messages::{FetchRequest, RequestBody, ResponseBody, fetch_request};
    let request = FetchRequest {
        max_wait_ms: 100,
        min_bytes: 1,
        max_bytes: 1 << 20,
        topics: vec![fetch_request::FetchTopic {
            topic: topic.into(),
            partitions: vec![fetch_request::FetchPartition {
                partition: 0,
                fetch_offset: offset,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    match support::kafka_call(&addr.to_string(), 12, RequestBody::Fetch(request)) {
        ResponseBody::Fetch(response) => response.responses[0].partitions[0].error_code,
        other => panic!("not a fetch response: {other:?}"),
    }
}

/// The latest offset of partition 0 of `topic` by ListOffsets at the agent at `addr`: the
/// offset, or the error code.
fn latest_offset_at(addr: SocketAddr, topic: &str) -> Result<i64, i16> {
    use floe::protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use floe::protocol::messages::{ListOffsetsRequest, RequestBody, ResponseBody};
    let request = ListOffsetsRequest {
        replica_id: -1,
        topics: vec![ListOffsetsTopic {
            name: topic.into(),
            partitions: vec![ListOffsetsPartition {
                partition_index: 0,
                timestamp: -1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    match support::kafka_call(&addr.to_string(), 7, RequestBody::ListOffsets(request)) {
        ResponseBody::ListOffsets(response) => {
            let answer = &response.topics[0].partitions[0];
            match answer.error_code {
                0 => Ok(answer.offset),
                code => Err(code),
            }
        }
        other => panic!("not a list offsets response: {other:?}"),
    }
}

/// Where the only leader epoch of partition 0 of `topic` ends, by OffsetForLeaderEpoch at the
/// agent at `addr`: the end offset, or the error code.
fn epoch_end_at(addr: SocketAddr, topic: &str) -> Result<i64, i16> {
    use floe::protocol::messages::offset_for_leader_epoch_request::{
        OffsetForLeaderPartition, OffsetForLeaderTopic,
    };
    use floe::protocol::messages::{OffsetForLeaderEpochRequest, RequestBody, ResponseBody};
    let request = OffsetForLeaderEpochRequest {
        replica_id: -1,
        topics: vec![OffsetForLeaderTopic {
            topic: topic.into(),
            partitions: vec![OffsetForLeaderPartition {
                partition: 0,
                current_leader_epoch: 0,
                leader_epoch: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    match support::kafka_call(
        &addr.to_string(),
        4,
        RequestBody::OffsetForLeaderEpoch(request),
    ) {
        ResponseBody::OffsetForLeaderEpoch(response) => {
            let answer = &response.topics[0].partitions[0];
            match answer.error_code {
                0 => Ok(answer.end_offset),
                code => Err(code),
            }
        }
        other => panic!("not an OffsetForLeaderEpoch response: {other:?}"),
    }
}

/// A voter cut off from the quorum's traffic keeps an old copy of the state. A consumer that
/// reaches it (a load balancer moved it) with an offset the quorum has committed must not be
/// told OFFSET_OUT_OF_RANGE — its client would reset to earliest or latest — nor a high
/// watermark below it by ListOffsets or OffsetForLeaderEpoch (librdkafka would call the log
/// truncated and seek back), but OFFSET_NOT_AVAILABLE, which clients retry; once healed, the
/// same offset reads, the answers are the quorum's, and only an offset beyond the quorum's
/// log is out of range.
#[test]
fn a_lagging_agent_never_answers_from_its_stale_copy() {
    let offset_out_of_range = ErrorCode::OffsetOutOfRange.code();
    let offset_not_available = ErrorCode::OffsetNotAvailable.code();
    let dir = temp_dir();
    let (nodes, _balancer, _haproxy, proxies) = voters_behind_proxies(dir.path(), &[], |_, _| {});
    let topic = "lagging";
    // Straight to the leader (not through the balancer, whose connections may land on the
    // node this test cuts off): `count` records in one batch; the last offset they took.
    let produce_to_partition_0 = |leader_addr: SocketAddr, count: i32| {
        use floe::protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
        use floe::protocol::messages::{ProduceRequest, RequestBody, ResponseBody};
        let request = ProduceRequest {
            acks: -1,
            timeout_ms: 10_000,
            topic_data: vec![TopicProduceData {
                name: topic.into(),
                partition_data: vec![PartitionProduceData {
                    index: 0,
                    records: Some(
                        floe::protocol::record_batch::build_test_batch(-1, -1, -1, count, 16)
                            .into(),
                    ),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        match support::kafka_call(&leader_addr.to_string(), 9, RequestBody::Produce(request)) {
            ResponseBody::Produce(response) => {
                let answer = &response.responses[0].partition_responses[0];
                assert_eq!(answer.error_code, 0, "produce: {answer:?}");
                answer.base_offset + i64::from(count) - 1
            }
            other => panic!("not a produce response: {other:?}"),
        }
    };
    let leader = support::http_json(nodes[0].admin, "/v1/quorum")["leader"]
        .as_u64()
        .expect("a leader") as usize;
    let leader_addr = nodes[leader - 1].addr;
    // Created on first use, as a client's Metadata request creates it.
    {
        use floe::protocol::messages::metadata_request::MetadataRequestTopic;
        use floe::protocol::messages::{MetadataRequest, RequestBody};
        let request = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                name: Some(topic.into()),
                ..Default::default()
            }]),
            allow_auto_topic_creation: true,
            ..Default::default()
        };
        support::kafka_call(&leader_addr.to_string(), 9, RequestBody::Metadata(request));
    }
    produce_to_partition_0(leader_addr, 50);
    // Cut off a follower: nothing from the leader reaches it.
    let lagging = (1..=3).find(|&id| id != leader).expect("a follower");
    proxies[lagging - 1].cut();
    let last = produce_to_partition_0(leader_addr, 50);
    let lagging_addr = nodes[lagging - 1].addr;
    assert_eq!(
        fetch_error_at(lagging_addr, topic, last),
        offset_not_available,
        "a committed offset beyond a lagging copy"
    );
    assert_eq!(
        latest_offset_at(lagging_addr, topic),
        Err(offset_not_available),
        "the latest offset by a lagging copy"
    );
    assert_eq!(
        epoch_end_at(lagging_addr, topic),
        Err(offset_not_available),
        "the epoch's end by a lagging copy"
    );
    proxies[lagging - 1].heal();
    support::wait_for("the follower to catch up", Duration::from_secs(30), || {
        (fetch_error_at(lagging_addr, topic, last) == 0).then_some(())
    });
    assert_eq!(latest_offset_at(lagging_addr, topic), Ok(last + 1));
    assert_eq!(epoch_end_at(lagging_addr, topic), Ok(last + 1));
    assert_eq!(
        fetch_error_at(lagging_addr, topic, last + 1_000),
        offset_out_of_range,
        "beyond the quorum's log"
    );
}
