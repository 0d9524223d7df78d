//! Three voters in one process over loopback HTTP, each with its own fsync'd log: writes
//! through any member, leader loss, and a lagging member brought back by a snapshot.

use super::node::{Quorum, QuorumConfig};
use crate::clock::Clock;
use crate::ids::NodeId;
use crate::metadata::state::{Agent, AgentHeartbeat, Command};
use crate::security::cluster_auth::ClusterSecret;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn heartbeat(id: i32, n: i64) -> Command {
    AgentHeartbeat {
        agent: Agent {
            id,
            host: "127.0.0.1".into(),
            port: 9092,
            zone: None,
            internal_addr: None,
            lease_expires_ms: n,
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
        // Every RPC between these voters is signed and checked.
        cluster_secret: Some(ClusterSecret::new(b"the quorum tests' shared secret")),
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
    // Every member's read index (a follower asks the leader) covers the last write.
    for node in nodes.values() {
        let index = node.read_index().await.expect("read index");
        assert!(index >= last, "read index {index} before write {last}");
    }

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

#[tokio::test]
async fn a_voters_data_directory_is_not_wiped_by_starting_it_as_an_agent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let voter = Quorum::start(dir.path(), QuorumConfig::single(NodeId(1)), Clock::system())
        .await
        .expect("voter starts");
    voter.shutdown().await;
    drop(voter);
    let as_agent = QuorumConfig {
        voters: BTreeMap::from([(NodeId(1), "127.0.0.1:1".to_string())]),
        raft_addr: Some("127.0.0.1:2".into()),
        voter: false,
        ..QuorumConfig::single(NodeId(1))
    };
    let refused = Quorum::start(dir.path(), as_agent, Clock::system())
        .await
        .err()
        .expect("refused");
    assert!(
        refused.to_string().contains("holds a voter's Raft log"),
        "{refused}"
    );
    assert!(
        dir.path().join("raft/log").exists(),
        "the log is still there"
    );
}

#[tokio::test]
async fn a_write_larger_than_an_entry_is_refused_and_the_largest_allowed_survives_a_restart() {
    use super::node::{ENTRY_BYTES_MAX, WriteError};
    use crate::metadata::state::AlterTopicConfigs;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = QuorumConfig {
        snapshot_every: 1_000_000,
        ..QuorumConfig::single(NodeId(1))
    };
    let configs = |value_bytes: usize| {
        vec![
            AlterTopicConfigs {
                name: "t".into(),
                changes: vec![("k".into(), Some("v".repeat(value_bytes)))],
            }
            .into(),
        ]
    };
    let quorum = Quorum::start(dir.path(), config.clone(), Clock::system())
        .await
        .expect("voter starts");
    let before = quorum
        .shared()
        .read(|m| m.last_applied.map_or(0, |l| l.index));
    match quorum.write(configs(ENTRY_BYTES_MAX + 1)).await {
        Err(WriteError::TooLarge { bytes, max }) => {
            assert!(bytes > max, "{bytes} > {max}")
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let refused = quorum
        .shared()
        .read(|m| m.last_applied.map_or(0, |l| l.index));
    assert_eq!(refused, before, "nothing entered the log");
    let largest = quorum
        .write(configs(ENTRY_BYTES_MAX - 64))
        .await
        .expect("the largest allowed entry is written")
        .index;
    quorum.shutdown().await;
    drop(quorum);
    let quorum = Quorum::start(dir.path(), config, Clock::system())
        .await
        .expect("restarts on its log");
    quorum.wait_applied(largest).await.expect("replayed");
    quorum.shutdown().await;
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

mod snapshot_layout {
    //! The snapshot layout is pinned: a golden file of the current one, written from
    //! `commands()` (which reach every part of the state), must be what this build writes and
    //! must read back with the same content.

    use super::super::state_machine::{Machine, decode_machine, encode_machine};
    use super::super::types::{LogId, NodeId};
    use crate::ids::{ObjectKey, Offset, ProducerEpoch, ProducerId, TopicPartition};
    use crate::metadata::MetadataState;
    use crate::metadata::state::client_quotas::{EntityType, QuotaEntity, QuotaValue};
    use crate::metadata::state::security::{Endpoint, ScramChange};
    use crate::metadata::state::{
        AcquireLease, Agent, AgentEndpoints, AgentHeartbeat, AgentOutcome, AlterScramCredentials,
        ClockOutcome, ClusterOutcome, Command, CommittedBatch, CreateAcls, GroupOffset,
        InitCluster, InitProducerId, Job, JobOutcome, OffsetCommit, Outcome, PartitionBatches,
        SecurityOutcome, SetLimits, Tick, Ticked,
    };
    use crate::metadata::state::{
        AddPartitionsToTxn, EndTxn, InitTransactionalProducer, TransactionOutcome,
    };
    use crate::metadata::state::{
        AlterClientQuotas, CommitObject, CreatePartitions, CreateTopic, DeleteTopic,
    };
    use crate::security::acl::{
        AccessControlEntry, AclBinding, Operation, PatternType, Permission, ResourcePattern,
        ResourceType,
    };
    use crate::security::scram::{ScramCredential, ScramMechanism};
    use openraft::CommittedLeaderId;
    use std::collections::BTreeMap;
    use uuid::Uuid;

    /// The current layout, written by `the_current_layout_is_pinned` (`FLOE_WRITE_GOLDEN=1`).
    const GOLDEN: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/machine.postcard"
    );

    fn batch(start: u64, count: i64, producer: i64, seq: i32) -> CommittedBatch {
        CommittedBatch {
            byte_start: start,
            byte_len: 100,
            offset_count: count,
            max_timestamp: 1000 + start as i64,
            producer_id: ProducerId(producer),
            producer_epoch: ProducerEpoch(if producer < 0 { -1 } else { 0 }),
            base_sequence: seq,
            last_sequence: if producer < 0 {
                -1
            } else {
                seq + count as i32 - 1
            },
        }
    }

    fn commands() -> Vec<Command> {
        let (orders, logs) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let tp = |topic_id, partition| TopicPartition {
            topic_id,
            partition,
        };
        vec![
            CreateTopic {
                name: "orders".into(),
                id: orders,
                partitions: 3,
                configs: BTreeMap::from([("cleanup.policy".into(), "delete".into())]),
            }
            .into(),
            CreateTopic {
                name: "logs".into(),
                id: logs,
                partitions: 1,
                configs: BTreeMap::new(),
            }
            .into(),
            InitProducerId { existing: None }.into(),
            CommitObject {
                object_key: ObjectKey::new("v1/0000000000001-a.floe"),
                partitions: vec![
                    PartitionBatches {
                        partition: tp(orders, 0),
                        batches: vec![batch(16, 5, 0, 0), batch(116, 5, 0, 5)],
                    },
                    PartitionBatches {
                        partition: tp(orders, 2),
                        batches: vec![batch(216, 3, -1, -1)],
                    },
                    PartitionBatches {
                        partition: tp(logs, 0),
                        batches: vec![batch(316, 2, -1, -1)],
                    },
                ],
            }
            .into(),
            OffsetCommit {
                group: "g1".into(),
                topic: "orders".into(),
                partition: 0,
                offset: GroupOffset {
                    offset: Offset(7),
                    leader_epoch: 0,
                    metadata: Some("m".into()),
                    commit_timestamp: 100,
                },
            }
            .into(),
            OffsetCommit {
                group: "g2".into(),
                topic: "logs".into(),
                partition: 0,
                offset: GroupOffset {
                    offset: Offset(1),
                    leader_epoch: -1,
                    metadata: None,
                    commit_timestamp: 101,
                },
            }
            .into(),
            AgentHeartbeat {
                agent: Agent {
                    id: 1,
                    host: "10.0.0.1".into(),
                    port: 9092,
                    zone: Some("a".into()),
                    internal_addr: Some("10.0.0.1:7000".into()),
                    lease_expires_ms: 5000,
                },
            }
            .into(),
            InitCluster { id: "c1".into() }.into(),
            CreatePartitions {
                name: "orders".into(),
                total: 4,
            }
            .into(),
            DeleteTopic {
                name: "logs".into(),
            }
            .into(),
            CommitObject {
                object_key: ObjectKey::new("v1/0000000000002-b.floe"),
                partitions: vec![PartitionBatches {
                    partition: tp(orders, 3),
                    batches: vec![batch(16, 4, 0, 0)],
                }],
            }
            .into(),
            // From here on, the parts the commands above leave empty.
            SetLimits {
                limits: Default::default(),
            }
            .into(),
            Tick { now_ms: 1_000 }.into(),
            AcquireLease {
                job: Job::Collection,
                holder: 1,
                for_ms: 10_000,
            }
            .into(),
            InitTransactionalProducer {
                transactional_id: "t1".into(),
                timeout_ms: 60_000,
                existing: None,
            }
            .into(),
            AddPartitionsToTxn {
                transactional_id: "t1".into(),
                producer_id: ProducerId(1),
                producer_epoch: ProducerEpoch(0),
                partitions: vec![("orders".into(), 1)],
            }
            .into(),
            EndTxn {
                transactional_id: "t1".into(),
                producer_id: ProducerId(1),
                producer_epoch: ProducerEpoch(0),
                commit: true,
                next_epoch: false,
            }
            .into(),
            CreateAcls {
                bindings: vec![AclBinding {
                    pattern: ResourcePattern {
                        resource_type: ResourceType::Topic,
                        name: "orders".into(),
                        pattern_type: PatternType::Literal,
                    },
                    entry: AccessControlEntry {
                        principal: "User:alice".into(),
                        host: "*".into(),
                        operation: Operation::Read,
                        permission: Permission::Allow,
                    },
                }],
            }
            .into(),
            AlterScramCredentials {
                changes: vec![ScramChange::Upsert {
                    user: "alice".into(),
                    mechanism: ScramMechanism::Sha256,
                    credential: ScramCredential {
                        salt: vec![1; 16],
                        stored_key: vec![2; 32],
                        server_key: vec![3; 32],
                        iterations: 4096,
                    },
                }],
            }
            .into(),
            AgentEndpoints {
                id: 1,
                endpoints: vec![Endpoint {
                    listener: "PLAINTEXT".into(),
                    host: "10.0.0.1".into(),
                    port: 9092,
                }],
            }
            .into(),
            AlterClientQuotas {
                entries: vec![(
                    QuotaEntity(vec![
                        (EntityType::User, Some("alice".into())),
                        (EntityType::ClientId, None),
                    ]),
                    vec![("producer_byte_rate".into(), Some(QuotaValue(1_048_576.0)))],
                )],
            }
            .into(),
        ]
    }

    /// Every command of `commands()` applied to an empty state.
    fn replayed() -> MetadataState {
        let mut state = MetadataState::default();
        for command in commands() {
            state.apply(command);
        }
        state
    }

    /// Everything a reader of the state can see, and what the next commands answer.
    fn observed(mut state: MetadataState) -> impl std::fmt::Debug + PartialEq {
        let topics: Vec<_> = state.topics().cloned().collect();
        let offsets: Vec<_> = state
            .groups()
            .map(|g| {
                (
                    g.to_string(),
                    state
                        .group_offsets(g)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        let agents: Vec<_> = state.live_agents().cloned().collect();
        let seen = (
            topics,
            offsets,
            agents,
            state.cluster_id().map(str::to_string),
            state.applied(),
            state.client_quotas().clone(),
        );
        let orders = state.topic("orders").map(|t| t.id).unwrap_or_default();
        // A retried object commit gets its first outcome; a retried batch its first offset;
        // the next producer id follows the old one.
        let retried = state.apply(commands().swap_remove(10));
        let duplicate = state.apply(CommitObject {
            object_key: ObjectKey::new("v1/0000000000003-c.floe"),
            partitions: vec![PartitionBatches {
                partition: TopicPartition {
                    topic_id: orders,
                    partition: 0,
                },
                batches: vec![batch(116, 5, 0, 5)],
            }],
        });
        let next_producer = state.apply(InitProducerId { existing: None });
        (seen, retried, duplicate, next_producer)
    }

    /// The commands that fill the parts `observed` does not look at are all accepted: each
    /// part of the golden state holds something.
    #[test]
    fn the_commands_reach_every_part() {
        let mut state = MetadataState::default();
        let outcomes: Vec<Outcome> = commands().into_iter().map(|c| state.apply(c)).collect();
        let tail = &outcomes[11..];
        let expected = [
            Outcome::Cluster(ClusterOutcome::SetLimits(true)),
            Outcome::Clock(ClockOutcome::Tick(Ticked {
                producers_expired: 0,
                transactions_timed_out: 0,
                share_freed: Vec::new(),
            })),
            Outcome::Job(JobOutcome::AcquireLease(true)),
            Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Ok((
                ProducerId(1),
                ProducerEpoch(0),
            )))),
            Outcome::Transaction(TransactionOutcome::AddPartitionsToTxn(vec![Ok(())])),
        ];
        assert_eq!(&tail[..expected.len()], &expected[..]);
        let ended = |o: &Outcome| match o {
            Outcome::Transaction(TransactionOutcome::EndTxn(Ok(end))) => end.marked.len(),
            _ => 0,
        };
        assert_eq!(ended(&tail[5]), 1, "{:?}", tail[5]);
        assert_eq!(
            tail[6],
            Outcome::Security(SecurityOutcome::CreateAcls(vec![Ok(())]))
        );
        assert_eq!(
            tail[7],
            Outcome::Security(SecurityOutcome::AlterScramCredentials(vec![Ok(())]))
        );
        assert_eq!(tail[8], Outcome::Agent(AgentOutcome::AgentEndpoints(true)));
    }

    #[test]
    fn the_current_layout_is_pinned() {
        let index = commands().len() as u64;
        let machine = Machine {
            state: replayed(),
            last_applied: Some(LogId::new(CommittedLeaderId::new(1, NodeId(1)), index)),
            membership: Default::default(),
        };
        let encoded = encode_machine(&machine).expect("encodes");
        if std::env::var_os("FLOE_WRITE_GOLDEN").is_some() {
            std::fs::write(GOLDEN, &encoded).expect("golden file written");
        }
        let golden = std::fs::read(GOLDEN).expect("the golden snapshot is in tests/snapshots");
        assert!(
            encoded == golden,
            "this build writes another snapshot layout than {GOLDEN}: if it is meant to, bump \
             the section name or MACHINE_FORMAT and rewrite the file with FLOE_WRITE_GOLDEN=1"
        );
        let decoded = decode_machine(&golden).expect("the golden snapshot decodes");
        assert_eq!(decoded.last_applied, machine.last_applied);
        assert_eq!(decoded.state, machine.state);
        assert_eq!(observed(decoded.state), observed(replayed()));
    }

    #[test]
    fn a_snapshot_in_another_layout_is_refused() {
        let mut earlier = b"floe-machine-v5\0".to_vec();
        earlier.extend(postcard::to_stdvec(&Machine::default()).expect("encodes"));
        let refused = decode_machine(&earlier).expect_err("another layout");
        assert!(refused.to_string().contains("floe-machine-v5"), "{refused}");
        assert!(decode_machine(&[]).is_err(), "no tag");
    }

    #[test]
    fn snapshots_are_written_in_the_current_layout_and_read_back() {
        let machine = Machine {
            state: replayed(),
            ..Default::default()
        };
        let encoded = encode_machine(&machine).expect("encodes");
        let decoded = decode_machine(&encoded).expect("decodes");
        assert_eq!(decoded.state, machine.state);
        assert_eq!(
            decoded.state.topics_version(),
            machine.state.topics_version()
        );
    }
}
