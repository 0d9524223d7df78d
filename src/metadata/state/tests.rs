//! The state machine's transitions, driven directly, and the determinism Raft relies on.

use super::*;
use crate::ids::{ObjectKey, Offset, ProducerEpoch, ProducerId, TopicPartition};
use std::collections::BTreeMap;
use uuid::Uuid;

const NO_PRODUCER: (ProducerId, ProducerEpoch) = (ProducerId(-1), ProducerEpoch(-1));

/// One of each command (every noun, every command of it): what pins the log's encoding
/// (`log_store::the_log_layout_is_pinned`).
pub(crate) fn one_of_each() -> Vec<Command> {
    use crate::security::acl::{
        AccessControlEntry, AclBinding, AclBindingFilter, Operation, PatternType, Permission,
        ResourcePattern, ResourceType,
    };
    let tp = TopicPartition {
        topic_id: Uuid::from_u128(1),
        partition: 2,
    };
    let agent = Agent {
        id: 1,
        host: "h".into(),
        port: 9092,
        zone: Some("z".into()),
        internal_addr: Some("h:7000".into()),
        lease_expires_ms: 5,
    };
    let (id, epoch) = (ProducerId(3), ProducerEpoch(4));
    let offset = GroupOffset {
        offset: Offset(5),
        leader_epoch: 6,
        metadata: Some("m".into()),
        commit_timestamp: 7,
    };
    let batch_ref = BatchRef {
        base_offset: Offset(1),
        end_offset: Offset(2),
        object: ObjectId(3),
        byte_start: 4,
        byte_len: 5,
        max_timestamp: 6,
    };
    vec![
        CreateTopic {
            name: "t".into(),
            id: Uuid::from_u128(1),
            partitions: 3,
            configs: BTreeMap::from([("k".into(), "v".into())]),
        }
        .into(),
        DeleteTopic { name: "t".into() }.into(),
        CreatePartitions {
            name: "t".into(),
            total: 4,
        }
        .into(),
        AlterTopicConfigs {
            name: "t".into(),
            changes: vec![("k".into(), None), ("l".into(), Some("w".into()))],
        }
        .into(),
        CommitObject {
            object_key: ObjectKey::new("o"),
            partitions: vec![PartitionBatches {
                partition: tp,
                batches: vec![CommittedBatch {
                    byte_start: 16,
                    byte_len: 100,
                    offset_count: 2,
                    max_timestamp: 8,
                    producer_id: id,
                    producer_epoch: epoch,
                    base_sequence: 9,
                    last_sequence: 10,
                }],
            }],
        }
        .into(),
        InitProducerId {
            existing: Some((id, epoch)),
        }
        .into(),
        OffsetCommit {
            group: "g".into(),
            topic: "t".into(),
            partition: 1,
            offset: offset.clone(),
        }
        .into(),
        DeleteGroupOffsets {
            group: "g".into(),
            partitions: Some(vec![("t".into(), 1)]),
        }
        .into(),
        InitCluster { id: "c".into() }.into(),
        AgentHeartbeat {
            agent: agent.clone(),
        }
        .into(),
        SetLimits {
            limits: Limits::default(),
        }
        .into(),
        Tick { now_ms: 11 }.into(),
        ReplaceRuns {
            partition: tp,
            replaced: vec![batch_ref],
            segment: NewSegment {
                key: ObjectKey::new("s"),
                data_len: 12,
                footer: FooterAt { start: 12, len: 13 },
                max_timestamp: 14,
            },
        }
        .into(),
        DeleteRecords {
            partitions: vec![(tp, -1)],
        }
        .into(),
        EnforceRetention.into(),
        ForgetObjects {
            ids: vec![ObjectId(15)],
        }
        .into(),
        AcquireLease {
            job: Job::Compaction { shard: 16 },
            holder: 17,
            for_ms: 18,
        }
        .into(),
        ReleaseLeases { holder: 19 }.into(),
        InitTransactionalProducer {
            transactional_id: "x".into(),
            timeout_ms: 20,
            existing: Some((id, epoch)),
        }
        .into(),
        AddPartitionsToTxn {
            transactional_id: "x".into(),
            producer_id: id,
            producer_epoch: epoch,
            partitions: vec![("t".into(), 1)],
        }
        .into(),
        AddOffsetsToTxn {
            transactional_id: "x".into(),
            producer_id: id,
            producer_epoch: epoch,
            group: "g".into(),
        }
        .into(),
        TxnOffsetCommit {
            transactional_id: "x".into(),
            producer_id: id,
            producer_epoch: epoch,
            group: "g".into(),
            offsets: vec![("t".into(), 1, offset)],
        }
        .into(),
        EndTxn {
            transactional_id: "x".into(),
            producer_id: id,
            producer_epoch: epoch,
            commit: true,
            next_epoch: true,
        }
        .into(),
        AgentEndpoints {
            id: 1,
            endpoints: vec![security::Endpoint {
                listener: "L".into(),
                host: "h".into(),
                port: 21,
            }],
        }
        .into(),
        CreateAcls {
            bindings: vec![AclBinding {
                pattern: ResourcePattern {
                    resource_type: ResourceType::Topic,
                    name: "t".into(),
                    pattern_type: PatternType::Prefixed,
                },
                entry: AccessControlEntry {
                    principal: "User:u".into(),
                    host: "*".into(),
                    operation: Operation::Write,
                    permission: Permission::Deny,
                },
            }],
        }
        .into(),
        DeleteAcls {
            filters: vec![AclBindingFilter::ANY],
        }
        .into(),
        AlterScramCredentials {
            changes: vec![security::ScramChange::Delete {
                user: "u".into(),
                mechanism: crate::security::scram::ScramMechanism::Sha512,
            }],
        }
        .into(),
        RenewAgent {
            agent,
            lease_ms: 22,
        }
        .into(),
    ]
}

#[test]
fn the_topics_version_moves_with_the_topics_only() {
    let mut state = MetadataState::default();
    let start = state.topics_version();
    topic(&mut state, 1);
    let created = state.topics_version();
    assert_ne!(created, start);
    state.apply(OffsetCommit {
        group: "g".into(),
        topic: "t".into(),
        partition: 0,
        offset: GroupOffset {
            offset: Offset(1),
            leader_epoch: -1,
            metadata: None,
            commit_timestamp: 0,
        },
    });
    assert_eq!(state.topics_version(), created, "offsets are not topics");
    state.apply(CreatePartitions {
        name: "t".into(),
        total: 2,
    });
    let grown = state.topics_version();
    assert_ne!(grown, created);
    state.apply(DeleteTopic { name: "t".into() });
    assert_ne!(state.topics_version(), grown);
    // The version is replicated: a restored copy has the same one for the same topics.
    let bytes = postcard::to_stdvec(&state).unwrap();
    let restored: MetadataState = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(restored.topics_version(), state.topics_version());
}

fn topic(state: &mut MetadataState, partitions: i32) -> Uuid {
    let id = Uuid::from_u128(7);
    let outcome = state.run(CreateTopic {
        name: "t".into(),
        id,
        partitions,
        configs: BTreeMap::new(),
    });
    assert_eq!(outcome, Ok(()));
    id
}

/// Partition 0 of a new one-partition topic.
fn partition_0(state: &mut MetadataState) -> TopicPartition {
    TopicPartition {
        topic_id: topic(state, 1),
        partition: 0,
    }
}

fn batch(
    start: u64,
    len: u64,
    count: i64,
    producer: (ProducerId, ProducerEpoch),
    seq: i32,
) -> CommittedBatch {
    CommittedBatch {
        byte_start: start,
        byte_len: len,
        offset_count: count,
        max_timestamp: 10,
        producer_id: producer.0,
        producer_epoch: producer.1,
        base_sequence: seq,
        last_sequence: if !producer.0.is_idempotent() {
            -1
        } else {
            seq + count as i32 - 1
        },
    }
}

fn commit(
    state: &mut MetadataState,
    key: &str,
    tp: TopicPartition,
    batches: Vec<CommittedBatch>,
) -> Vec<BatchOutcome> {
    // Every commit is a new object, as in production (keys never repeat).
    match state.apply(CommitObject {
        object_key: ObjectKey::new(format!("{key}#{}", state.applied())),
        partitions: vec![PartitionBatches {
            partition: tp,
            batches,
        }],
    }) {
        Outcome::Log(LogOutcome::CommitObject(mut per_partition)) => per_partition.remove(0),
        other => panic!("unexpected {other:?}"),
    }
}

fn producer(state: &mut MetadataState) -> (ProducerId, ProducerEpoch) {
    match state.run(InitProducerId { existing: None }) {
        Ok(p) => p,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn offsets_are_contiguous_and_refs_coalesce_within_an_object() {
    let mut state = MetadataState::default();
    let tp = TopicPartition {
        topic_id: topic(&mut state, 2),
        partition: 1,
    };
    let out = commit(
        &mut state,
        "a",
        tp,
        vec![
            batch(0, 100, 3, NO_PRODUCER, -1),
            batch(100, 50, 2, NO_PRODUCER, -1),
        ],
    );
    assert_eq!(
        out,
        vec![
            BatchOutcome::Appended {
                base_offset: Offset(0)
            },
            BatchOutcome::Appended {
                base_offset: Offset(3)
            }
        ]
    );
    let out = commit(&mut state, "b", tp, vec![batch(10, 20, 4, NO_PRODUCER, -1)]);
    assert_eq!(
        out,
        vec![BatchOutcome::Appended {
            base_offset: Offset(5)
        }]
    );
    let p = state.partition(&tp).unwrap();
    assert_eq!(p.high_watermark, Offset(9));
    assert_eq!(p.index.len(), 2);
    assert_eq!(
        (
            p.index[0].base_offset,
            p.index[0].end_offset,
            p.index[0].byte_len
        ),
        (Offset(0), Offset(5), 150)
    );
    assert_eq!(
        (
            &state.objects().key(p.index[1].object).unwrap().as_str()[..1],
            p.index[1].base_offset
        ),
        ("b", Offset(5))
    );
}

#[test]
fn a_retried_batch_gets_its_original_offset_and_is_not_indexed_twice() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = producer(&mut state);
    assert_eq!(
        commit(&mut state, "a", tp, vec![batch(0, 10, 5, p, 0)]),
        vec![BatchOutcome::Appended {
            base_offset: Offset(0)
        }]
    );
    assert_eq!(
        commit(&mut state, "b", tp, vec![batch(0, 10, 5, p, 0)]),
        vec![BatchOutcome::Duplicate {
            base_offset: Offset(0)
        }]
    );
    assert_eq!(
        commit(&mut state, "b", tp, vec![batch(10, 10, 2, p, 5)]),
        vec![BatchOutcome::Appended {
            base_offset: Offset(5)
        }]
    );
    assert_eq!(state.partition(&tp).unwrap().high_watermark, Offset(7));
}

#[test]
fn only_the_last_five_batches_are_remembered() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = producer(&mut state);
    for i in 0..6 {
        commit(&mut state, "a", tp, vec![batch(i * 10, 10, 1, p, i as i32)]);
    }
    // Sequence 0 fell out of the window: its retry can no longer be recognised.
    assert_eq!(
        commit(&mut state, "b", tp, vec![batch(0, 10, 1, p, 0)]),
        vec![BatchOutcome::OutOfOrderSequence]
    );
    assert_eq!(
        commit(&mut state, "b", tp, vec![batch(0, 10, 1, p, 1)]),
        vec![BatchOutcome::Duplicate {
            base_offset: Offset(1)
        }]
    );
}

#[test]
fn gaps_and_stale_epochs_are_rejected() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = producer(&mut state);
    assert_eq!(
        commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 3)]),
        vec![BatchOutcome::OutOfOrderSequence]
    );
    commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 0)]);
    assert_eq!(
        commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 2)]),
        vec![BatchOutcome::OutOfOrderSequence]
    );
    // Re-initialising bumps the epoch and fences the old one.
    let bumped = match state.run(InitProducerId { existing: Some(p) }) {
        Ok(b) => b,
        other => panic!("{other:?}"),
    };
    assert_eq!(bumped, (p.0, ProducerEpoch(1)));
    assert_eq!(
        commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 1)]),
        vec![BatchOutcome::InvalidProducerEpoch]
    );
    assert_eq!(
        commit(&mut state, "a", tp, vec![batch(0, 10, 1, bumped, 0)]),
        vec![BatchOutcome::Appended {
            base_offset: Offset(1)
        }]
    );
    assert_eq!(
        commit(
            &mut state,
            "a",
            tp,
            vec![batch(0, 10, 1, (ProducerId(99), ProducerEpoch(0)), 0)]
        ),
        vec![BatchOutcome::UnknownProducerId]
    );
}

#[test]
fn unknown_partitions_are_refused_and_replay_is_deterministic() {
    let mut state = MetadataState::default();
    let id = topic(&mut state, 1);
    let missing = TopicPartition {
        topic_id: id,
        partition: 5,
    };
    assert_eq!(
        commit(
            &mut state,
            "a",
            missing,
            vec![batch(0, 1, 1, NO_PRODUCER, -1)]
        ),
        vec![BatchOutcome::UnknownTopicOrPartition]
    );
    let bytes = postcard::to_stdvec(&state).unwrap();
    let restored: MetadataState = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(restored, state);
}

/// Commands that are out of bounds are refused by `apply` itself, so an entry already in a
/// log (written by a client the handlers did not stop, or by a forged write) is harmless.
mod limits {
    use super::*;

    /// A state with the default limits in force, as after the nodes' `SetLimits` entry.
    fn limited() -> MetadataState {
        let mut state = MetadataState::default();
        assert_eq!(
            state.apply(SetLimits {
                limits: Limits::default(),
            }),
            Outcome::Cluster(ClusterOutcome::SetLimits(true))
        );
        state
    }

    #[test]
    fn limits_take_effect_at_their_entry_and_only_the_first_counts() {
        let mut state = MetadataState::default();
        // Before: entries an older build accepted replay as they did then...
        let configs: BTreeMap<String, String> =
            (0..300).map(|i| (format!("k{i}"), "v".into())).collect();
        assert_eq!(
            state.run(CreateTopic {
                name: "old".into(),
                id: Uuid::from_u128(1),
                partitions: 20_000,
                configs: configs.clone(),
            }),
            Ok(())
        );
        // ...but nothing that no node could hold.
        assert_eq!(
            state.run(CreatePartitions {
                name: "old".into(),
                total: 2_000_000_000,
            }),
            Err(TopicError::InvalidPartitions)
        );
        assert_eq!(
            state.apply(SetLimits {
                limits: Limits::default(),
            }),
            Outcome::Cluster(ClusterOutcome::SetLimits(true))
        );
        let stricter = Limits {
            partitions_per_topic_max: 1,
            ..Limits::default()
        };
        assert_eq!(
            state.apply(SetLimits { limits: stricter }),
            Outcome::Cluster(ClusterOutcome::SetLimits(false))
        );
        assert_eq!(state.limits(), Limits::default());
        // A topic over the limits from before can still be brought back under them.
        assert_eq!(
            state.run(AlterTopicConfigs {
                name: "old".into(),
                changes: vec![("k0".into(), None), ("k1".into(), None)],
            }),
            Ok(())
        );
        assert_eq!(
            state.run(AlterTopicConfigs {
                name: "old".into(),
                changes: vec![("k2".into(), Some("changed".into()))],
            }),
            Ok(()),
            "the count does not grow"
        );
        assert_eq!(state.topic("old").unwrap().configs.len(), 298);
        assert_eq!(
            state.run(CreateTopic {
                name: "new".into(),
                id: Uuid::from_u128(2),
                partitions: 1,
                configs,
            }),
            Err(TopicError::InvalidConfig)
        );
    }

    fn create(state: &mut MetadataState, name: &str, partitions: i32) -> Result<(), TopicError> {
        let id = Uuid::from_u128(u128::from(state.applied()) + 100);
        state.run(CreateTopic {
            name: name.into(),
            id,
            partitions,
            configs: BTreeMap::new(),
        })
    }

    #[test]
    fn partition_counts_are_bounded_per_topic_and_per_cluster() {
        let mut state = limited();
        assert_eq!(
            create(&mut state, "huge", 2_000_000_000),
            Err(TopicError::InvalidPartitions)
        );
        assert_eq!(create(&mut state, "t", 1), Ok(()));
        // The request that used to abort every node, and abort it again on every replay.
        assert_eq!(
            state.run(CreatePartitions {
                name: "t".into(),
                total: 2_000_000_000,
            }),
            Err(TopicError::InvalidPartitions)
        );
        assert_eq!(state.topic("t").unwrap().partitions.len(), 1);
        for i in 0..19 {
            assert_eq!(create(&mut state, &format!("big{i}"), 10_000), Ok(()));
        }
        assert_eq!(create(&mut state, "last", 9_999), Ok(()));
        // The cluster holds 200,000 partitions now, its limit.
        assert_eq!(
            create(&mut state, "one-more", 1),
            Err(TopicError::TooManyPartitions)
        );
        assert_eq!(
            state.run(CreatePartitions {
                name: "t".into(),
                total: 2,
            }),
            Err(TopicError::TooManyPartitions)
        );
    }

    #[test]
    fn names_configs_and_offset_commits_are_bounded() {
        let mut state = limited();
        assert_eq!(
            create(&mut state, &"x".repeat(250), 1),
            Err(TopicError::InvalidName)
        );
        assert_eq!(create(&mut state, "a b", 1), Err(TopicError::InvalidName));
        let configs: BTreeMap<String, String> =
            (0..300).map(|i| (format!("k{i}"), "v".into())).collect();
        assert_eq!(
            state.run(CreateTopic {
                name: "c".into(),
                id: Uuid::from_u128(9),
                partitions: 1,
                configs,
            }),
            Err(TopicError::InvalidConfig)
        );
        assert_eq!(create(&mut state, "t", 1), Ok(()));
        assert_eq!(
            state.run(AlterTopicConfigs {
                name: "t".into(),
                changes: vec![("k".into(), Some("v".repeat(1 << 20)))],
            }),
            Err(TopicError::InvalidConfig)
        );
        let commit = |group: String, metadata: Option<String>| OffsetCommit {
            group,
            topic: "t".into(),
            partition: 0,
            offset: GroupOffset {
                offset: Offset(1),
                leader_epoch: -1,
                metadata,
                commit_timestamp: 0,
            },
        };
        assert_eq!(
            state.run(commit("g".into(), Some("m".repeat(4097)))),
            Err(OffsetCommitError::MetadataTooLarge)
        );
        assert_eq!(
            state.run(commit("g".repeat(1025), None)),
            Err(OffsetCommitError::InvalidGroupId)
        );
        assert_eq!(
            state.run(commit(String::new(), None)),
            Err(OffsetCommitError::InvalidGroupId)
        );
        assert_eq!(
            state.run(commit("g".into(), Some("m".repeat(4096)))),
            Ok(())
        );
        assert_eq!(state.groups().count(), 1);
    }

    #[test]
    fn malformed_batches_and_keys_are_refused_without_moving_offsets() {
        let mut state = limited();
        let tp = partition_0(&mut state);
        let mut huge = batch(0, 10, 1, NO_PRODUCER, -1);
        huge.offset_count = i64::MAX;
        let mut empty = batch(0, 0, 1, NO_PRODUCER, -1);
        empty.byte_len = 0;
        assert_eq!(
            commit(
                &mut state,
                "a",
                tp,
                vec![huge, empty, batch(0, 10, 0, NO_PRODUCER, -1)]
            ),
            vec![BatchOutcome::Malformed; 3]
        );
        assert_eq!(
            state.apply(CommitObject {
                object_key: ObjectKey::new("k".repeat(1025)),
                partitions: vec![PartitionBatches {
                    partition: tp,
                    batches: vec![batch(0, 10, 1, NO_PRODUCER, -1)],
                }],
            }),
            Outcome::Log(LogOutcome::CommitObject(vec![vec![
                BatchOutcome::Malformed
            ]]))
        );
        assert_eq!(state.partition(&tp).unwrap().high_watermark, Offset(0));
    }

    #[test]
    fn registrations_are_bounded() {
        let mut state = limited();
        let agent = |id: i32, host: String| Agent {
            id,
            host,
            port: 9092,
            zone: None,
            internal_addr: None,
            lease_expires_ms: 1,
        };
        assert_eq!(
            state.run(AgentHeartbeat {
                agent: agent(1, "h".repeat(1025)),
            }),
            Err(RegistryError::NameTooLong)
        );
        assert_eq!(
            state.run(InitCluster {
                id: "c".repeat(1025),
            }),
            Err(RegistryError::NameTooLong)
        );
        for id in 0..10_000 {
            assert_eq!(
                state.run(AgentHeartbeat {
                    agent: agent(id, "h".into()),
                }),
                Ok(())
            );
        }
        assert_eq!(
            state.run(AgentHeartbeat {
                agent: agent(10_000, "h".into()),
            }),
            Err(RegistryError::TooManyAgents)
        );
        assert_eq!(
            state.run(AgentHeartbeat {
                agent: agent(7, "renewed".into()),
            }),
            Ok(()),
            "a known agent renews whatever the count"
        );
        // A day after all those leases ran out, a new agent makes room by forgetting them.
        let mut late = agent(20_000, "new".into());
        late.lease_expires_ms = 1 + 24 * 3600 * 1000 + 1;
        assert_eq!(state.run(AgentHeartbeat { agent: late }), Ok(()));
        assert_eq!(state.live_agents().count(), 1);
    }
}

mod determinism {
    use super::*;
    use proptest::prelude::*;

    fn command(kind: u8, a: u8, b: u8) -> Command {
        let topic = format!("t{}", a % 3);
        match kind % 11 {
            0 => CreateTopic {
                name: topic,
                id: Uuid::from_u128(u128::from(a % 3) + 1),
                partitions: i32::from(b % 4) + 1,
                configs: BTreeMap::new(),
            }
            .into(),
            1 => InitProducerId {
                existing: b
                    .is_multiple_of(2)
                    .then_some((ProducerId(i64::from(a % 4)), ProducerEpoch(0))),
            }
            .into(),
            2 | 3 => CommitObject {
                object_key: ObjectKey::new(format!("o{}", b % 16)),
                partitions: vec![PartitionBatches {
                    partition: TopicPartition {
                        topic_id: Uuid::from_u128(u128::from(a % 3) + 1),
                        partition: i32::from(b % 4),
                    },
                    batches: vec![CommittedBatch {
                        byte_start: 16,
                        byte_len: 100,
                        offset_count: i64::from(b % 5) + 1,
                        max_timestamp: i64::from(a),
                        producer_id: ProducerId(i64::from(a % 5) - 1),
                        producer_epoch: ProducerEpoch(0),
                        base_sequence: i32::from(b % 3),
                        last_sequence: i32::from(b % 3) + i32::from(b % 5),
                    }],
                }],
            }
            .into(),
            4 => OffsetCommit {
                group: "g".into(),
                topic,
                partition: i32::from(b % 4),
                offset: GroupOffset {
                    offset: Offset(i64::from(b)),
                    leader_epoch: 0,
                    metadata: None,
                    commit_timestamp: 1,
                },
            }
            .into(),
            6 => DeleteGroupOffsets {
                group: "g".into(),
                partitions: b
                    .is_multiple_of(2)
                    .then(|| vec![(topic.clone(), i32::from(b % 4))]),
            }
            .into(),
            5 => AgentHeartbeat {
                agent: Agent {
                    id: i32::from(a % 3),
                    host: "127.0.0.1".into(),
                    port: 9092 + i32::from(a % 3),
                    zone: b.is_multiple_of(2).then(|| "z".to_string()),
                    internal_addr: None,
                    lease_expires_ms: i64::from(b),
                },
            }
            .into(),
            7 => CreatePartitions {
                name: topic,
                total: i32::from(b % 6) + 1,
            }
            .into(),
            9 => AcquireLease {
                job: Job::Compaction {
                    shard: u16::from(a % 4),
                },
                holder: i32::from(b % 3),
                for_ms: i64::from(b) * 1_000,
            }
            .into(),
            10 => CreateAcls {
                bindings: vec![acl_binding(&topic, b)],
            }
            .into(),
            // Hours apart, so that producers and remembered commits expire along the way.
            _ => Tick {
                now_ms: (i64::from(a) * 256 + i64::from(b)) * 3_600_000,
            }
            .into(),
        }
    }

    fn acl_binding(topic: &str, b: u8) -> crate::security::acl::AclBinding {
        use crate::security::acl::{
            AccessControlEntry, AclBinding, Operation, PatternType, Permission, ResourcePattern,
            ResourceType,
        };
        AclBinding {
            pattern: ResourcePattern {
                resource_type: ResourceType::Topic,
                name: topic.to_string(),
                pattern_type: PatternType::Literal,
            },
            entry: AccessControlEntry {
                principal: format!("User:u{}", b % 3),
                host: "*".into(),
                operation: Operation::Read,
                permission: Permission::Allow,
            },
        }
    }

    proptest! {
        /// The same command log applied twice gives byte-identical snapshots: what makes the
        /// state machine safe to replicate and to rebuild from a log.
        #[test]
        fn the_same_log_gives_identical_snapshots(log in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..200)) {
            let commands: Vec<Command> = log.iter().map(|&(k, a, b)| command(k, a, b)).collect();
            let mut first = MetadataState::default();
            let mut second = MetadataState::default();
            let outcomes_first: Vec<Outcome> = commands.iter().cloned().map(|c| first.apply(c)).collect();
            let outcomes_second: Vec<Outcome> = commands.into_iter().map(|c| second.apply(c)).collect();
            prop_assert_eq!(outcomes_first, outcomes_second);
            prop_assert_eq!(postcard::to_stdvec(&first).unwrap(), postcard::to_stdvec(&second).unwrap());
            // And a snapshot round trip loses nothing.
            let restored: MetadataState = postcard::from_bytes(&postcard::to_stdvec(&first).unwrap()).unwrap();
            prop_assert_eq!(restored, first);
        }
    }

    #[test]
    fn a_retried_object_commit_returns_its_original_outcome() {
        let mut state = MetadataState::default();
        state.apply(command(0, 0, 0));
        let commit = command(2, 0, 4);
        let first = state.apply(commit.clone());
        let high_watermark = state.topic("t0").unwrap().partitions[0].high_watermark;
        assert_eq!(state.apply(commit), first, "same outcome again");
        assert_eq!(
            state.topic("t0").unwrap().partitions[0].high_watermark,
            high_watermark,
            "no new offsets"
        );
    }
}

mod clock {
    //! What the state does with time: the leader's `Tick`s expire idle producer ids and old
    //! commit outcomes, never anything younger.

    use super::*;

    const T0: i64 = 1_700_000_000_000;

    fn tick(state: &mut MetadataState, now_ms: i64) -> u64 {
        state.run(Tick { now_ms }).producers_expired
    }

    /// Ticks as a leader does until the state's time reaches `to_ms` (one tick moves it at
    /// most `TICK_STEP_MAX_MS`); the producer ids that expired on the way.
    fn run_clock_to(state: &mut MetadataState, to_ms: i64) -> u64 {
        let mut expired = 0;
        while state.now_ms() < to_ms {
            expired += tick(state, (state.now_ms() + TICK_STEP_MAX_MS).min(to_ms));
        }
        expired
    }

    fn commit_as(state: &mut MetadataState, key: &str, tp: TopicPartition) -> Outcome {
        state.apply(CommitObject {
            object_key: ObjectKey::new(key),
            partitions: vec![PartitionBatches {
                partition: tp,
                batches: vec![batch(0, 10, 1, NO_PRODUCER, -1)],
            }],
        })
    }

    #[test]
    fn a_retry_within_the_window_is_recognised_however_many_commits_came_between() {
        let mut state = MetadataState::default();
        let tp = partition_0(&mut state);
        tick(&mut state, T0);
        let first = commit_as(&mut state, "first", tp);
        // More commits than any count-bounded window would hold, all within the deadline.
        for i in 0..20_000 {
            commit_as(&mut state, &format!("o{i}"), tp);
        }
        run_clock_to(&mut state, T0 + COMMIT_DEDUP_WINDOW_MS - 1);
        let high_watermark = state.high_watermark("t", 0);
        assert_eq!(
            commit_as(&mut state, "first", tp),
            first,
            "the original outcome"
        );
        assert_eq!(
            state.high_watermark("t", 0),
            high_watermark,
            "no new offsets"
        );
        // Past the window the outcome is forgotten: the memory is bounded by time.
        run_clock_to(&mut state, T0 + COMMIT_DEDUP_WINDOW_MS + 1);
        assert_eq!(state.remembered_commits(), 0);
    }

    #[test]
    fn the_clock_never_goes_back() {
        let mut state = MetadataState::default();
        tick(&mut state, T0);
        tick(&mut state, T0 - 60_000);
        assert_eq!(
            state.now_ms(),
            T0,
            "a leader whose clock is behind changes nothing"
        );
        tick(&mut state, i64::MIN);
        assert_eq!(state.now_ms(), T0);
    }

    #[test]
    fn a_clock_far_ahead_moves_the_state_on_at_a_bounded_pace() {
        let mut state = MetadataState::default();
        let tp = partition_0(&mut state);
        tick(&mut state, T0);
        let first = commit_as(&mut state, "first", tp);
        // A failover to a voter whose clock is an hour ahead, or a hostile entry.
        tick(&mut state, T0 + 3_600_000);
        assert_eq!(state.now_ms(), T0 + TICK_STEP_MAX_MS);
        tick(&mut state, i64::MAX);
        assert_eq!(state.now_ms(), T0 + 2 * TICK_STEP_MAX_MS);
        assert_eq!(
            commit_as(&mut state, "first", tp),
            first,
            "still remembered"
        );
    }

    #[test]
    fn idle_producer_ids_expire_after_a_day_and_active_ones_stay() {
        let mut state = MetadataState::default();
        let tp = partition_0(&mut state);
        tick(&mut state, T0);
        let idle = producer(&mut state);
        let active = producer(&mut state);
        assert_eq!(
            commit(&mut state, "a", tp, vec![batch(0, 10, 1, idle, 0)]).len(),
            1
        );
        // The active one produces every hour; the idle one never again.
        for hour in 1..=24 {
            run_clock_to(&mut state, T0 + hour * 3_600_000);
            let outcome = commit(
                &mut state,
                "b",
                tp,
                vec![batch(0, 10, 1, active, hour as i32 - 1)],
            );
            assert!(
                matches!(outcome[0], BatchOutcome::Appended { .. }),
                "{outcome:?}"
            );
        }
        assert_eq!(state.producer_count(), 2, "not a day idle yet");
        let expired = run_clock_to(
            &mut state,
            T0 + PRODUCER_ID_EXPIRATION_MS + EXPIRY_CHECK_EVERY_MS,
        );
        assert_eq!(expired, 1);
        assert_eq!(
            commit(&mut state, "c", tp, vec![batch(0, 10, 1, idle, 1)]),
            vec![BatchOutcome::UnknownProducerId],
            "the client must initialise again, as with Kafka"
        );
        // Re-initialising the expired id gives a fresh one.
        match state.run(InitProducerId {
            existing: Some(idle),
        }) {
            Ok((id, ProducerEpoch(0))) => assert_ne!(id, idle.0),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn what_was_remembered_before_the_clock_started_counts_from_its_first_tick() {
        let mut state = MetadataState::default();
        let tp = partition_0(&mut state);
        // A log written before ticks existed: commits and producers without a time.
        let first = commit_as(&mut state, "old", tp);
        producer(&mut state);
        tick(&mut state, T0);
        assert_eq!(
            commit_as(&mut state, "old", tp),
            first,
            "not expired at the first tick"
        );
        assert_eq!(
            run_clock_to(&mut state, T0 + PRODUCER_ID_EXPIRATION_MS - 1),
            0
        );
        assert_eq!(state.producer_count(), 1);
    }

    #[test]
    fn producer_ids_are_bounded_once_limits_are_in_force() {
        let mut state = MetadataState::default();
        state.apply(SetLimits {
            limits: Limits::default(),
        });
        for _ in 0..PRODUCERS_MAX {
            producer(&mut state);
        }
        assert_eq!(
            state.run(InitProducerId { existing: None }),
            Err(InitProducerIdError::TooManyProducers)
        );
    }

    fn agent(id: i32) -> Agent {
        Agent {
            id,
            host: "h".into(),
            port: 9092,
            zone: None,
            internal_addr: None,
            lease_expires_ms: 0,
        }
    }

    fn live(state: &MetadataState) -> Vec<i32> {
        state.live_agents().map(|a| a.id).collect()
    }

    #[test]
    fn an_agent_lease_runs_on_the_state_clock_whatever_the_agent_sent() {
        let mut state = MetadataState::default();
        tick(&mut state, T0);
        let mut claims_forever = agent(1);
        // The expiry an agent sends is ignored: the lease is the state's time plus its length.
        claims_forever.lease_expires_ms = i64::MAX;
        state.apply(RenewAgent {
            agent: claims_forever,
            lease_ms: 4_000,
        });
        state.apply(RenewAgent {
            agent: agent(2),
            lease_ms: 8_000,
        });
        assert_eq!(live(&state), [1, 2]);
        run_clock_to(&mut state, T0 + 3_999);
        assert_eq!(live(&state), [1, 2]);
        run_clock_to(&mut state, T0 + 4_000);
        assert_eq!(
            live(&state),
            [2],
            "agent 1's lease ran out at the state's T0 + 4 s"
        );
        // Renewed for no time: out at once, on every node alike.
        state.apply(RenewAgent {
            agent: agent(2),
            lease_ms: 0,
        });
        assert!(live(&state).is_empty());
    }

    #[test]
    fn an_agent_lease_is_bounded() {
        let mut state = MetadataState::default();
        tick(&mut state, T0);
        state.apply(RenewAgent {
            agent: agent(1),
            lease_ms: i64::MAX,
        });
        state.apply(RenewAgent {
            agent: agent(2),
            lease_ms: i64::MIN,
        });
        assert_eq!(live(&state), [1]);
        run_clock_to(&mut state, T0 + agents::AGENT_LEASE_MS_MAX);
        assert!(live(&state).is_empty());
    }

    #[test]
    fn a_lease_granted_before_the_first_tick_runs_from_it() {
        let mut state = MetadataState::default();
        state.apply(RenewAgent {
            agent: agent(1),
            lease_ms: 4_000,
        });
        assert_eq!(live(&state), [1]);
        tick(&mut state, T0);
        assert_eq!(live(&state), [1], "the first tick does not end it");
        run_clock_to(&mut state, T0 + 4_000);
        assert!(live(&state).is_empty());
    }
}

#[path = "txn_tests.rs"]
mod transactions;
