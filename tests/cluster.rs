//! A real cluster on loopback: three `floe serve` voters (roles meta,agent) and two stateless
//! agents (role agent, Raft learners), sharing one object store directory.
//!
//! Under idempotent produce load the quorum leader's process is killed with SIGKILL: producers
//! see only retried requests, every acknowledged record is read back exactly once at its
//! offset, service resumes; the killed node restarts on its data directory and catches up
//! (snapshot + log).

mod support;
use rdkafka::producer::Producer;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::kafka::{Seen, consume, produce, producer};
use support::{Floe, free_addr, free_port, http_json, temp_dir};

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

/// Polls `f` until it returns `Some`, failing with `what` after `limit`.
fn wait_for<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
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

#[test]
fn leader_killed_under_load_loses_nothing_and_a_restarted_voter_catches_up() {
    let dir = temp_dir();
    let objects = dir.path().join("objects");
    std::fs::create_dir_all(&objects).unwrap();
    let raft: Vec<u16> = (0..5).map(|_| free_port()).collect();
    let peers = (1..=3)
        .map(|id| format!("{id}=127.0.0.1:{}", raft[id - 1]))
        .collect::<Vec<_>>()
        .join(",");
    let nodes: Vec<Node> = (1..=5u64)
        .map(|id| {
            let mut flags: Vec<String> = [
                "--node-id",
                &id.to_string(),
                "--meta-peers",
                &peers,
                "--object-store",
                &format!("file://{}", objects.display()),
                "--default-partitions",
                &PARTITIONS.to_string(),
                "--snapshot-every",
                "100",
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
                dir: dir.path().join(format!("node-{id}")),
            }
        })
        .collect();
    let mut running: BTreeMap<u64, Floe> = nodes.iter().map(|n| (n.id, n.start())).collect();

    // Every node sees one leader and all five agents.
    let leader = wait_for("a leader", Duration::from_secs(30), || {
        nodes[0].quorum()["leader"].as_u64()
    });
    wait_for("five live agents", Duration::from_secs(30), || {
        let cluster = http_json(nodes[4].admin, "/v1/cluster");
        (cluster["brokers"].as_array().map_or(0, Vec::len) == 5
            && cluster["quorum"]["learners"].as_array().map_or(0, Vec::len) == 2)
            .then_some(())
    });

    let bootstrap = nodes
        .iter()
        .map(|n| n.kafka.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let (p, acks) = producer(&bootstrap, "lz4");
    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut round = 0;
            while !stop.load(Ordering::Relaxed) {
                produce(&p, "failover", PARTITIONS, 480, &format!("r{round}"));
                round += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            p.flush(Duration::from_secs(60))
                .expect("flush after the failover");
        })
    };
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
    load.join().expect("producer thread");
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
