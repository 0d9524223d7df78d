//! Three voters in one process over loopback HTTP, each with its own fsync'd log: writes
//! through any member, leader loss, and a lagging member brought back by a snapshot.

use super::node::{Quorum, QuorumConfig};
use crate::clock::Clock;
use crate::ids::NodeId;
use crate::metadata::state::{Agent, Command};
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

/// A voter serving its own Raft listener; dropping it closes the listener.
struct Member {
    quorum: Quorum,
    listener: tokio::task::JoinHandle<()>,
}

impl std::ops::Deref for Member {
    type Target = Quorum;

    fn deref(&self) -> &Quorum {
        &self.quorum
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

async fn start(dir: &Path, id: NodeId, voters: &BTreeMap<NodeId, String>) -> Member {
    let config = QuorumConfig {
        voters: voters.clone(),
        snapshot_every: 50,
        ..QuorumConfig::single(id)
    };
    let quorum = Quorum::start(&dir.join(format!("node-{id}")), config, Clock::system())
        .await
        .expect("voter starts");
    let listener = quorum
        .listen_alone()
        .await
        .expect("listens")
        .expect("a voter of three has a Raft address");
    Member { quorum, listener }
}

async fn leader_of(nodes: &BTreeMap<NodeId, Member>) -> NodeId {
    for _ in 0..400 {
        if let Some((id, _)) = nodes.iter().find(|(_, n)| n.is_leader()) {
            return *id;
        }
        Clock::system().sleep(Duration::from_millis(25)).await;
    }
    panic!("no leader elected");
}

/// Each member's copy of the state, once all have applied up to `index`.
async fn states(nodes: &BTreeMap<NodeId, Member>, index: u64) -> Vec<Vec<u8>> {
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
    let voters: BTreeMap<NodeId, String> = (1..=3)
        .map(|id| (NodeId(id), format!("127.0.0.1:{}", free_port())))
        .collect();
    let mut nodes = BTreeMap::new();
    for id in (1..=3).map(NodeId) {
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

mod storage_suite {
    //! openraft's own conformance suite, run against the durable log and the state machine.

    use super::super::log_store::LogStore;
    use super::super::state_machine::StateMachine;
    use super::super::types::{StorageError, TypeConfig};
    use openraft::testing::{StoreBuilder, Suite};
    use openraft::{AnyError, StorageIOError};

    struct Builder;

    impl StoreBuilder<TypeConfig, LogStore, StateMachine, tempfile::TempDir> for Builder {
        async fn build(&self) -> Result<(tempfile::TempDir, LogStore, StateMachine), StorageError> {
            let io = |e: std::io::Error| -> StorageError {
                StorageIOError::write_logs(AnyError::new(&e)).into()
            };
            let dir = tempfile::tempdir().map_err(io)?;
            let log = LogStore::open(dir.path()).map_err(io)?;
            let machine =
                StateMachine::open(dir.path(), crate::clock::Clock::system()).map_err(io)?;
            Ok((dir, log, machine))
        }
    }

    #[test]
    fn openraft_storage_suite_passes() {
        if let Err(e) = Suite::test_all(Builder) {
            panic!("storage suite: {e}");
        }
    }
}
