//! Three voters in one process over loopback HTTP, each with its own fsync'd log: writes
//! through any member, leader loss, and a lagging member brought back by a snapshot.

use super::node::{Quorum, QuorumConfig};
use crate::metadata::Command;
use crate::metadata::state::Agent;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn heartbeat(id: i32, n: i64) -> Command {
    Command::AgentHeartbeat {
        agent: Agent {
            id,
            host: "127.0.0.1".into(),
            port: 9092,
            zone: None,
            internal_addr: None,
            lease_expires_ms: n,
        },
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

async fn start(dir: &Path, id: u64, voters: &BTreeMap<u64, String>) -> Quorum {
    let config = QuorumConfig {
        voters: voters.clone(),
        snapshot_every: 50,
        ..QuorumConfig::single(id)
    };
    Quorum::start(&dir.join(format!("node-{id}")), config)
        .await
        .expect("voter starts")
}

async fn leader_of(nodes: &BTreeMap<u64, Quorum>) -> u64 {
    for _ in 0..400 {
        if let Some((id, _)) = nodes.iter().find(|(_, n)| n.is_leader()) {
            return *id;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no leader elected");
}

/// Each member's copy of the state, once all have applied up to `index`.
async fn states(nodes: &BTreeMap<u64, Quorum>, index: u64) -> Vec<Vec<u8>> {
    let mut copies = Vec::new();
    for node in nodes.values() {
        node.wait_applied(index).await.expect("applied");
        copies.push(
            node.shared()
                .read(|m| postcard::to_stdvec(&m.state).expect("encode")),
        );
    }
    copies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_survive_leader_loss_and_a_restarted_member_catches_up_by_snapshot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let voters: BTreeMap<u64, String> = (1..=3)
        .map(|id| (id, format!("127.0.0.1:{}", free_port())))
        .collect();
    let mut nodes = BTreeMap::new();
    for id in 1..=3 {
        nodes.insert(id, start(dir.path(), id, &voters).await);
    }
    let leader = leader_of(&nodes).await;

    // Writes through every member (followers forward to the leader) apply everywhere alike.
    let mut last = 0;
    for (n, node) in nodes.values().enumerate() {
        for i in 0..10 {
            last = node
                .write(vec![heartbeat(n as i32, i)])
                .await
                .expect("write")
                .index;
        }
    }
    let copies = states(&nodes, last).await;
    assert!(copies.windows(2).all(|w| w[0] == w[1]), "members differ");

    // The leader stops; the other two elect a new one and keep accepting writes.
    let old = nodes.remove(&leader).expect("leader");
    old.shutdown().await;
    drop(old);
    let new_leader = leader_of(&nodes).await;
    assert_ne!(new_leader, leader);
    for i in 0..200 {
        last = nodes
            .values()
            .next()
            .expect("a member")
            .write(vec![heartbeat(7, i)])
            .await
            .expect("write after failover")
            .index;
    }

    // The old leader restarts on its directory; the log it missed has been compacted into a
    // snapshot (every 50 entries), which it installs before catching up.
    nodes.insert(leader, start(dir.path(), leader, &voters).await);
    let copies = states(&nodes, last).await;
    assert!(copies.windows(2).all(|w| w[0] == w[1]), "members differ");
    let restarted_id = leader;
    let restarted = &nodes[&restarted_id];
    let metrics = restarted.raft().metrics().borrow().clone();
    assert!(
        metrics.snapshot.is_some() || metrics.purged.is_some(),
        "the restarted member never saw a snapshot: {metrics:?}"
    );

    // Membership by hand: the restarted member stops voting but keeps following as a learner.
    let leader = leader_of(&nodes).await;
    let voters = nodes
        .keys()
        .copied()
        .filter(|id| *id != restarted_id)
        .collect();
    nodes[&leader]
        .change_voters(voters)
        .await
        .expect("change voters");
    let index = nodes[&leader]
        .write(vec![heartbeat(9, 0)])
        .await
        .expect("write with two voters")
        .index;
    nodes[&restarted_id]
        .wait_applied(index)
        .await
        .expect("the learner follows");
    let metrics = nodes[&restarted_id].raft().metrics().borrow().clone();
    let membership = metrics.membership_config.membership();
    assert_eq!(membership.voter_ids().count(), 2);
    assert_eq!(
        membership.learner_ids().collect::<Vec<_>>(),
        vec![restarted_id]
    );
    for node in nodes.values() {
        node.shutdown().await;
    }
}
