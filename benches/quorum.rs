//! Metadata commit latency through the Raft quorum on loopback: one voter, and three voters
//! in this process talking HTTP over 127.0.0.1, each with its own fsync'd log in a temp dir.
//! Prints p50/p99/max of sequential commits (leader and forwarded through a follower) and the
//! commit rate with 32 writers in flight.
//!
//! Run: `cargo bench --bench quorum`

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

use floe::clock::Clock;
use floe::ids::NodeId;
use floe::metadata::quorum::{Quorum, QuorumConfig};
use floe::metadata::state::{Agent, AgentHeartbeat, Command};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SEQUENTIAL: usize = 2_000;
const CONCURRENT_WRITERS: usize = 32;
const CONCURRENT_PER_WRITER: usize = 200;

fn heartbeat(n: usize) -> Command {
    AgentHeartbeat {
        agent: Agent {
            id: (n % 8) as i32,
            host: "127.0.0.1".into(),
            port: 9092,
            zone: None,
            internal_addr: None,
            lease_expires_ms: n as i64,
        },
    }
    .into()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

async fn wait_for_leader(nodes: &[Arc<Quorum>]) -> usize {
    loop {
        if let Some(i) = nodes.iter().position(|n| n.is_leader()) {
            return i;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn sequential(label: &str, node: &Quorum) {
    let mut histogram = Histogram::<u64>::new(3).expect("histogram");
    for n in 0..SEQUENTIAL {
        let started = Instant::now();
        node.write(vec![heartbeat(n)]).await.expect("write");
        histogram
            .record(started.elapsed().as_micros() as u64)
            .expect("record");
    }
    println!(
        "{label:<44} p50 {:>6} µs   p99 {:>6} µs   max {:>6} µs   ({SEQUENTIAL} sequential commits)",
        histogram.value_at_quantile(0.5),
        histogram.value_at_quantile(0.99),
        histogram.max()
    );
}

async fn concurrent(label: &str, node: Arc<Quorum>) {
    let started = Instant::now();
    let writers: Vec<_> = (0..CONCURRENT_WRITERS)
        .map(|w| {
            let node = node.clone();
            tokio::spawn(async move {
                for n in 0..CONCURRENT_PER_WRITER {
                    node.write(vec![heartbeat(w * CONCURRENT_PER_WRITER + n)])
                        .await
                        .expect("write");
                }
            })
        })
        .collect();
    for w in writers {
        w.await.expect("writer");
    }
    let total = CONCURRENT_WRITERS * CONCURRENT_PER_WRITER;
    println!(
        "{label:<44} {:>8.0} commits/s   ({total} commits, {CONCURRENT_WRITERS} writers)",
        total as f64 / started.elapsed().as_secs_f64()
    );
}

fn main() {
    // `cargo test --benches` runs this with no arguments other than --bench; keep that quick.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");

        let single = Arc::new(
            Quorum::start(
                &dir.path().join("single"),
                QuorumConfig::single(NodeId(1)),
                Clock::system(),
            )
            .await
            .expect("single voter"),
        );
        wait_for_leader(std::slice::from_ref(&single)).await;
        sequential("1 voter", &single).await;
        concurrent("1 voter", single.clone()).await;
        single.shutdown().await;

        let voters: BTreeMap<NodeId, String> = (1..=3)
            .map(|id| (NodeId(id), format!("127.0.0.1:{}", free_port())))
            .collect();
        let mut nodes = Vec::new();
        let mut listeners = Vec::new();
        for id in 1..=3u64 {
            let config = QuorumConfig {
                voters: voters.clone(),
                ..QuorumConfig::single(NodeId(id))
            };
            let node = Quorum::start(
                &dir.path().join(format!("node-{id}")),
                config,
                Clock::system(),
            )
            .await
            .expect("voter");
            listeners.push(node.listen_alone().await.expect("listens"));
            nodes.push(Arc::new(node));
        }
        let leader = wait_for_leader(&nodes).await;
        let follower = (leader + 1) % nodes.len();
        sequential("3 voters, written on the leader", &nodes[leader]).await;
        sequential("3 voters, forwarded by a follower", &nodes[follower]).await;
        concurrent("3 voters, on the leader", nodes[leader].clone()).await;
        for node in &nodes {
            node.shutdown().await;
        }
        listeners.into_iter().flatten().for_each(|l| l.abort());
    });
}
