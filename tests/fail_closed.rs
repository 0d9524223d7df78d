//! Fail-closed, proven. floe runs with `--authorizer acl`, and a principal without a single ACL
//! (a PLAINTEXT client is `User:ANONYMOUS`; the super user that set the scene is gone) sends
//! every API floe advertises, at every version it advertises, naming a topic, a group and a
//! transactional id that exist (and a topic that does not). Each answer must be a refusal, or
//! what Kafka answers such a principal: a listing that shows nothing, an answer anyone gets. A
//! closed connection or no answer is a failure too. Then a super user looks, and nothing the
//! refused requests would have changed has changed: no topic, partition, deleted record, offset,
//! ACL, SCRAM credential, config or transaction.
//!
//! Why this is independent of floe's declarations: the list of APIs and versions comes from
//! `handlers::REGISTRY`, so an API served tomorrow cannot escape (`probes` has no arm for it
//! and panics), but what a refusal looks like (`judge`) is written from Kafka's `KafkaApis`,
//! with Kafka's error codes as numbers, never from floe's `Api::NEEDS`, `Api::authorize` or
//! `ErrorCode`. A declaration that is too lax, or a refusal in the wrong shape, fails here.

// These tests drive real processes over real sockets, in real time.
#![allow(clippy::disallowed_methods)]

mod support;
use floe::client::{ClientError, call, connect};
use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use floe::server::handlers::REGISTRY;
use std::time::Duration;
use support::{Floe, temp_dir};
use tokio::runtime::Runtime;
use uuid::Uuid;

/// The topic, group and transactional id the first life makes, and a topic nobody made.
const TOPIC: &str = "t";
const ABSENT: &str = "u";
const GROUP: &str = "g";
const TRANSACTIONAL_ID: &str = "x";
const MEMBER: &str = "m";
/// The offset the first life commits for the group (after its one record).
const COMMITTED: i64 = 1;

// Kafka's error codes, as numbers: the oracle shares no table with floe.
const NONE: i16 = 0;
const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
const GROUP_AUTHORIZATION_FAILED: i16 = 30;
const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
const ILLEGAL_SASL_STATE: i16 = 34;
const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;

// Kafka's config resource types (ConfigResource.Type).
const TOPIC_CONFIG: i8 = 2;
const BROKER_CONFIG: i8 = 4;

// Kafka's ACL enums by code (ResourceType, PatternType, AclOperation, AclPermissionType).
const ANY: i8 = 1;
const TOPIC_ACL: i8 = 2;
const LITERAL: i8 = 3;
const ALL_OPERATIONS: i8 = 2;
const ALLOW: i8 = 3;

/// ListOffsets' special timestamps.
const LATEST: i64 = -1;
const EARLIEST: i64 = -2;

/// How long a probe may wait for its answer: every refusal is immediate.
const ANSWER_WITHIN: Duration = Duration::from_secs(15);

const DENIED_METRIC: &str = "floe_authorization_denied_total";

/// What the first life made, for the probes to name.
struct Known {
    topic_id: Uuid,
    producer_id: i64,
    producer_epoch: i16,
}

#[test]
fn a_principal_without_acls_is_refused_by_every_api_at_every_version_and_changes_nothing() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let runtime = Runtime::new().expect("runtime");
    let super_anonymous = ["--authorizer", "acl", "--super-users", "User:ANONYMOUS"];

    // First life: the anonymous client is the super user and sets the scene.
    let mut floe = Floe::start(&data, &super_anonymous);
    support::wait_until_ready(floe.admin);
    let known = set_up(&runtime, &floe);
    let (addr, admin) = (floe.addr, floe.admin);
    floe.stop();
    drop(floe);

    // Second life: the same client has no ACL, and no ACL found denies (Kafka's default).
    let mut floe = Floe::start_at(&data, addr, admin, &["--authorizer", "acl"]);
    support::wait_until_ready(admin);
    let denied_before = support::metric(admin, DENIED_METRIC).unwrap_or(0.0);
    let bootstrap = floe.bootstrap();
    let mut failures = Vec::new();
    let mut sent = 0;
    for entry in REGISTRY {
        for version in entry.versions.0..=entry.versions.1 {
            for probe in probes(entry.key, version, &known) {
                sent += 1;
                let shown = format!("{:?} v{version} {probe:?}", entry.key);
                match ask(&runtime, &bootstrap, version, probe.clone()) {
                    Err(e) => failures.push(format!("{shown}\n    {e}")),
                    Ok(answer) => {
                        if let Err(e) = judge(entry.key, version, &probe, &answer) {
                            failures.push(format!("{shown}\n    answered {answer:?}\n    {e}"));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {sent} probes were not answered as Kafka answers a principal without ACLs:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let denied_after = support::metric(admin, DENIED_METRIC).unwrap_or(0.0);
    assert!(
        denied_after > 0.0 && denied_after > denied_before,
        "{DENIED_METRIC}: {denied_before} before the probes, {denied_after} after"
    );
    floe.stop();
    drop(floe);

    // Third life: a super user again sees everything as the first life left it.
    let floe = Floe::start_at(&data, addr, admin, &super_anonymous);
    support::wait_until_ready(admin);
    check_unchanged(&runtime, &floe, &known);
}

/// Creates the topic with one record, commits the group's offset and opens the transactional
/// id, as the super user; returns what the probes name.
fn set_up(runtime: &Runtime, floe: &Floe) -> Known {
    let created = must(
        runtime,
        floe,
        7,
        RequestBody::CreateTopics(CreateTopicsRequest {
            topics: vec![create_topics_request::CreatableTopic {
                name: TOPIC.into(),
                num_partitions: 1,
                replication_factor: 1,
                ..Default::default()
            }],
            timeout_ms: 10_000,
            ..Default::default()
        }),
    );
    let ResponseBody::CreateTopics(created) = created else {
        panic!("not a CreateTopics answer: {created:?}")
    };
    let codes: Vec<i16> = created.topics.iter().map(|t| t.error_code).collect();
    assert_eq!(codes, [NONE], "creating {TOPIC}: {created:?}");

    let produced = must(
        runtime,
        floe,
        9,
        RequestBody::Produce(ProduceRequest {
            acks: -1,
            timeout_ms: 10_000,
            topic_data: vec![produce_request::TopicProduceData {
                name: TOPIC.into(),
                partition_data: vec![produce_request::PartitionProduceData {
                    index: 0,
                    records: Some(build_test_batch(-1, -1, -1, 1, 10).into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }),
    );
    let ResponseBody::Produce(produced) = produced else {
        panic!("not a Produce answer: {produced:?}")
    };
    let partitions: Vec<(i16, i64)> = produced
        .responses
        .iter()
        .flat_map(|t| &t.partition_responses)
        .map(|p| (p.error_code, p.base_offset))
        .collect();
    assert_eq!(
        partitions,
        [(NONE, 0)],
        "producing to {TOPIC}: {produced:?}"
    );

    // A simple `assign()` commit: no generation, no member.
    let committed = must(
        runtime,
        floe,
        8,
        RequestBody::OffsetCommit(OffsetCommitRequest {
            group_id: GROUP.into(),
            generation_id_or_member_epoch: -1,
            topics: vec![offset_commit_request::OffsetCommitRequestTopic {
                name: TOPIC.into(),
                partitions: vec![offset_commit_request::OffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: COMMITTED,
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
    let codes: Vec<i16> = committed
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, [NONE], "committing for {GROUP}: {committed:?}");

    let initiated = must(
        runtime,
        floe,
        4,
        RequestBody::InitProducerId(InitProducerIdRequest {
            transactional_id: Some(TRANSACTIONAL_ID.into()),
            transaction_timeout_ms: 60_000,
            ..Default::default()
        }),
    );
    let ResponseBody::InitProducerId(initiated) = initiated else {
        panic!("not an InitProducerId answer: {initiated:?}")
    };
    assert_eq!(initiated.error_code, NONE, "{initiated:?}");
    assert!(initiated.producer_id >= 0, "{initiated:?}");

    let described = must(
        runtime,
        floe,
        12,
        RequestBody::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(TOPIC.into()),
                ..Default::default()
            }]),
            allow_auto_topic_creation: false,
            ..Default::default()
        }),
    );
    let ResponseBody::Metadata(described) = described else {
        panic!("not a Metadata answer: {described:?}")
    };
    let topic = described
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some(TOPIC))
        .unwrap_or_else(|| panic!("no {TOPIC} in {described:?}"));
    assert_eq!(topic.error_code, NONE, "{described:?}");
    assert!(!topic.topic_id.is_nil(), "{described:?}");
    Known {
        topic_id: topic.topic_id,
        producer_id: initiated.producer_id,
        producer_epoch: initiated.producer_epoch,
    }
}

/// The requests that probe `key` at `version`: each names the topic (by name and by id, where
/// the version carries either), the group or the transactional id; some APIs get a second one
/// for a second way in (a listing, another resource, another key type).
fn probes(key: ApiKey, version: i16, known: &Known) -> Vec<RequestBody> {
    let topic_id = known.topic_id;
    let (producer_id, producer_epoch) = (known.producer_id, known.producer_epoch);
    match key {
        ApiKey::Produce => vec![RequestBody::Produce(ProduceRequest {
            acks: -1,
            timeout_ms: 5_000,
            topic_data: vec![produce_request::TopicProduceData {
                name: TOPIC.into(),
                topic_id,
                partition_data: vec![produce_request::PartitionProduceData {
                    index: 0,
                    records: Some(build_test_batch(-1, -1, -1, 1, 10).into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        // By name to v12, by id from v13: the encoder writes the field the version has.
        ApiKey::Fetch => vec![RequestBody::Fetch(FetchRequest {
            max_wait_ms: 0,
            min_bytes: 1,
            max_bytes: 1 << 20,
            topics: vec![fetch_request::FetchTopic {
                topic: TOPIC.into(),
                topic_id,
                partitions: vec![fetch_request::FetchPartition {
                    partition: 0,
                    fetch_offset: 0,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::ListOffsets => vec![RequestBody::ListOffsets(ListOffsetsRequest {
            replica_id: -1,
            topics: vec![list_offsets_request::ListOffsetsTopic {
                name: TOPIC.into(),
                partitions: vec![list_offsets_request::ListOffsetsPartition {
                    partition_index: 0,
                    timestamp: LATEST,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::Metadata => {
            let named = |name: &str| metadata_request::MetadataRequestTopic {
                name: Some(name.into()),
                ..Default::default()
            };
            let mut probes = vec![
                // By name, with a topic that does not exist: asking may create it.
                RequestBody::Metadata(MetadataRequest {
                    topics: Some(vec![named(TOPIC), named(ABSENT)]),
                    ..Default::default()
                }),
                // All topics: null from v1, an empty list in v0.
                RequestBody::Metadata(MetadataRequest {
                    topics: (version == 0).then(Vec::new),
                    ..Default::default()
                }),
            ];
            // By id from v12 only: Kafka refuses an id in v10 and v11 (INVALID_REQUEST), and
            // a request naming both looks the id up alone, so the id gets a probe of its own.
            if version >= 12 {
                probes.push(RequestBody::Metadata(MetadataRequest {
                    topics: Some(vec![metadata_request::MetadataRequestTopic {
                        topic_id,
                        name: None,
                        ..Default::default()
                    }]),
                    ..Default::default()
                }));
            }
            probes
        }
        ApiKey::OffsetCommit => vec![RequestBody::OffsetCommit(OffsetCommitRequest {
            group_id: GROUP.into(),
            generation_id_or_member_epoch: -1,
            topics: vec![offset_commit_request::OffsetCommitRequestTopic {
                name: TOPIC.into(),
                topic_id,
                partitions: vec![offset_commit_request::OffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 0,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        // Named partitions, and (where the version allows null) all the group committed.
        ApiKey::OffsetFetch if version < 8 => {
            let mut probes = vec![RequestBody::OffsetFetch(OffsetFetchRequest {
                group_id: GROUP.into(),
                topics: Some(vec![offset_fetch_request::OffsetFetchRequestTopic {
                    name: TOPIC.into(),
                    partition_indexes: vec![0],
                    ..Default::default()
                }]),
                ..Default::default()
            })];
            if version >= 2 {
                probes.push(RequestBody::OffsetFetch(OffsetFetchRequest {
                    group_id: GROUP.into(),
                    topics: None,
                    ..Default::default()
                }));
            }
            probes
        }
        ApiKey::OffsetFetch => {
            let named = Some(vec![offset_fetch_request::OffsetFetchRequestTopics {
                name: TOPIC.into(),
                topic_id,
                partition_indexes: vec![0],
                ..Default::default()
            }]);
            [named, None]
                .into_iter()
                .map(|topics| {
                    RequestBody::OffsetFetch(OffsetFetchRequest {
                        groups: vec![offset_fetch_request::OffsetFetchRequestGroup {
                            group_id: GROUP.into(),
                            member_epoch: -1,
                            topics,
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                })
                .collect()
        }
        ApiKey::FindCoordinator => {
            let find = |key_type: i8, key: &str| {
                RequestBody::FindCoordinator(if version < 4 {
                    FindCoordinatorRequest {
                        key: key.into(),
                        key_type,
                        ..Default::default()
                    }
                } else {
                    FindCoordinatorRequest {
                        key_type,
                        coordinator_keys: vec![key.into()],
                        ..Default::default()
                    }
                })
            };
            // v0 has no key type: it finds group coordinators only.
            let mut probes = vec![find(0, GROUP)];
            if version >= 1 {
                probes.push(find(1, TRANSACTIONAL_ID));
            }
            probes
        }
        ApiKey::JoinGroup => vec![RequestBody::JoinGroup(JoinGroupRequest {
            group_id: GROUP.into(),
            session_timeout_ms: 30_000,
            rebalance_timeout_ms: 30_000,
            protocol_type: "consumer".into(),
            protocols: vec![join_group_request::JoinGroupRequestProtocol {
                name: "range".into(),
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::Heartbeat => vec![RequestBody::Heartbeat(HeartbeatRequest {
            group_id: GROUP.into(),
            generation_id: 1,
            member_id: MEMBER.into(),
            ..Default::default()
        })],
        ApiKey::LeaveGroup => vec![RequestBody::LeaveGroup(if version < 3 {
            LeaveGroupRequest {
                group_id: GROUP.into(),
                member_id: MEMBER.into(),
                ..Default::default()
            }
        } else {
            LeaveGroupRequest {
                group_id: GROUP.into(),
                members: vec![leave_group_request::MemberIdentity {
                    member_id: MEMBER.into(),
                    ..Default::default()
                }],
                ..Default::default()
            }
        })],
        // The protocol type and name are there (Kafka requires them from v5 before it looks
        // at ACLs: INCONSISTENT_GROUP_PROTOCOL).
        ApiKey::SyncGroup => vec![RequestBody::SyncGroup(SyncGroupRequest {
            group_id: GROUP.into(),
            generation_id: 1,
            member_id: MEMBER.into(),
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            ..Default::default()
        })],
        ApiKey::DescribeGroups => vec![RequestBody::DescribeGroups(DescribeGroupsRequest {
            groups: vec![GROUP.into()],
            ..Default::default()
        })],
        ApiKey::ListGroups => vec![RequestBody::ListGroups(ListGroupsRequest::default())],
        ApiKey::DeleteGroups => vec![RequestBody::DeleteGroups(DeleteGroupsRequest {
            groups_names: vec![GROUP.into()],
            ..Default::default()
        })],
        ApiKey::OffsetDelete => vec![RequestBody::OffsetDelete(OffsetDeleteRequest {
            group_id: GROUP.into(),
            topics: vec![offset_delete_request::OffsetDeleteRequestTopic {
                name: TOPIC.into(),
                partitions: vec![offset_delete_request::OffsetDeleteRequestPartition {
                    partition_index: 0,
                }],
            }],
        })],
        // Kafka refuses an empty software name from v3 (INVALID_REQUEST).
        ApiKey::ApiVersions => vec![RequestBody::ApiVersions(ApiVersionsRequest {
            client_software_name: "fail-closed".into(),
            client_software_version: "1.0".into(),
            ..Default::default()
        })],
        ApiKey::CreateTopics => vec![RequestBody::CreateTopics(CreateTopicsRequest {
            topics: [TOPIC, ABSENT]
                .into_iter()
                .map(|name| create_topics_request::CreatableTopic {
                    name: name.into(),
                    num_partitions: 1,
                    replication_factor: 1,
                    ..Default::default()
                })
                .collect(),
            timeout_ms: 5_000,
            ..Default::default()
        })],
        ApiKey::DeleteTopics if version < 6 => {
            vec![RequestBody::DeleteTopics(DeleteTopicsRequest {
                topic_names: vec![TOPIC.into()],
                timeout_ms: 5_000,
                ..Default::default()
            })]
        }
        // By name and by id, one request each: Kafka refuses a topic named both ways.
        ApiKey::DeleteTopics => [
            delete_topics_request::DeleteTopicState {
                name: Some(TOPIC.into()),
                ..Default::default()
            },
            delete_topics_request::DeleteTopicState {
                name: None,
                topic_id,
                ..Default::default()
            },
        ]
        .into_iter()
        .map(|state| {
            RequestBody::DeleteTopics(DeleteTopicsRequest {
                topics: vec![state],
                timeout_ms: 5_000,
                ..Default::default()
            })
        })
        .collect(),
        // An idempotent producer (KIP-679) and a transactional one.
        ApiKey::InitProducerId => [None, Some(TRANSACTIONAL_ID.to_string())]
            .into_iter()
            .map(|transactional_id| {
                RequestBody::InitProducerId(InitProducerIdRequest {
                    transactional_id,
                    transaction_timeout_ms: 60_000,
                    ..Default::default()
                })
            })
            .collect(),
        ApiKey::DescribeConfigs => config_resources()
            .into_iter()
            .map(|(resource_type, resource_name, _)| {
                RequestBody::DescribeConfigs(DescribeConfigsRequest {
                    resources: vec![describe_configs_request::DescribeConfigsResource {
                        resource_type,
                        resource_name: resource_name.into(),
                        configuration_keys: None,
                        ..Default::default()
                    }],
                    ..Default::default()
                })
            })
            .collect(),
        ApiKey::AlterConfigs => config_resources()
            .into_iter()
            .map(|(resource_type, resource_name, change)| {
                RequestBody::AlterConfigs(AlterConfigsRequest {
                    resources: vec![alter_configs_request::AlterConfigsResource {
                        resource_type,
                        resource_name: resource_name.into(),
                        configs: change
                            .into_iter()
                            .map(|(name, value)| alter_configs_request::AlterableConfig {
                                name: name.into(),
                                value: Some(value.into()),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    }],
                    ..Default::default()
                })
            })
            .collect(),
        ApiKey::CreatePartitions => vec![RequestBody::CreatePartitions(CreatePartitionsRequest {
            topics: vec![create_partitions_request::CreatePartitionsTopic {
                name: TOPIC.into(),
                count: 2,
                assignments: None,
                ..Default::default()
            }],
            timeout_ms: 5_000,
            ..Default::default()
        })],
        ApiKey::IncrementalAlterConfigs => config_resources()
            .into_iter()
            .map(|(resource_type, resource_name, change)| {
                RequestBody::IncrementalAlterConfigs(IncrementalAlterConfigsRequest {
                    resources: vec![incremental_alter_configs_request::AlterConfigsResource {
                        resource_type,
                        resource_name: resource_name.into(),
                        configs: change
                            .into_iter()
                            .map(|(name, value)| {
                                incremental_alter_configs_request::AlterableConfig {
                                    name: name.into(),
                                    // SET
                                    config_operation: 0,
                                    value: Some(value.into()),
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        ..Default::default()
                    }],
                    ..Default::default()
                })
            })
            .collect(),
        ApiKey::DescribeCluster => vec![RequestBody::DescribeCluster(DescribeClusterRequest {
            include_cluster_authorized_operations: true,
            ..Default::default()
        })],
        ApiKey::OffsetForLeaderEpoch => {
            vec![RequestBody::OffsetForLeaderEpoch(
                OffsetForLeaderEpochRequest {
                    topics: vec![offset_for_leader_epoch_request::OffsetForLeaderTopic {
                        topic: TOPIC.into(),
                        partitions: vec![
                            offset_for_leader_epoch_request::OffsetForLeaderPartition {
                                partition: 0,
                                current_leader_epoch: -1,
                                leader_epoch: 0,
                                ..Default::default()
                            },
                        ],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            )]
        }
        // Every directory, and the topic's.
        ApiKey::DescribeLogDirs => [
            None,
            Some(vec![describe_log_dirs_request::DescribableLogDirTopic {
                topic: TOPIC.into(),
                partitions: vec![0],
                ..Default::default()
            }]),
        ]
        .into_iter()
        .map(|topics| {
            RequestBody::DescribeLogDirs(DescribeLogDirsRequest {
                topics,
                ..Default::default()
            })
        })
        .collect(),
        // The metadata log, as Kafka's Admin names it.
        ApiKey::DescribeQuorum => vec![RequestBody::DescribeQuorum(DescribeQuorumRequest {
            topics: vec![describe_quorum_request::TopicData {
                topic_name: "__cluster_metadata".into(),
                partitions: vec![describe_quorum_request::PartitionData {
                    partition_index: 0,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::DeleteRecords => vec![RequestBody::DeleteRecords(DeleteRecordsRequest {
            topics: vec![delete_records_request::DeleteRecordsTopic {
                name: TOPIC.into(),
                partitions: vec![delete_records_request::DeleteRecordsPartition {
                    partition_index: 0,
                    offset: 1,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            timeout_ms: 5_000,
            ..Default::default()
        })],
        ApiKey::DescribeProducers => {
            vec![RequestBody::DescribeProducers(DescribeProducersRequest {
                topics: vec![describe_producers_request::TopicRequest {
                    name: TOPIC.into(),
                    partition_indexes: vec![0],
                    ..Default::default()
                }],
                ..Default::default()
            })]
        }
        // The topic, and every topic (an empty list).
        ApiKey::DescribeTopicPartitions => [
            vec![describe_topic_partitions_request::TopicRequest {
                name: TOPIC.into(),
                ..Default::default()
            }],
            Vec::new(),
        ]
        .into_iter()
        .map(|topics| {
            RequestBody::DescribeTopicPartitions(DescribeTopicPartitionsRequest {
                topics,
                ..Default::default()
            })
        })
        .collect(),
        // A member joining: epoch 0 with its subscription.
        ApiKey::ConsumerGroupHeartbeat => {
            vec![RequestBody::ConsumerGroupHeartbeat(
                ConsumerGroupHeartbeatRequest {
                    group_id: GROUP.into(),
                    member_id: MEMBER.into(),
                    member_epoch: 0,
                    rebalance_timeout_ms: 30_000,
                    subscribed_topic_names: Some(vec![TOPIC.into()]),
                    topic_partitions: Some(Vec::new()),
                    ..Default::default()
                },
            )]
        }
        // A share group member joining; its first fetch, opening a session over the topic;
        // its acknowledgements of the topic's first record.
        ApiKey::ShareGroupHeartbeat => {
            vec![RequestBody::ShareGroupHeartbeat(
                ShareGroupHeartbeatRequest {
                    group_id: GROUP.into(),
                    member_id: MEMBER.into(),
                    member_epoch: 0,
                    subscribed_topic_names: Some(vec![TOPIC.into()]),
                    ..Default::default()
                },
            )]
        }
        ApiKey::ShareFetch => vec![RequestBody::ShareFetch(ShareFetchRequest {
            group_id: Some(GROUP.into()),
            member_id: Some(MEMBER.into()),
            share_session_epoch: 0,
            max_wait_ms: 0,
            min_bytes: 1,
            max_bytes: 1 << 20,
            max_records: 500,
            batch_size: 500,
            topics: vec![share_fetch_request::FetchTopic {
                topic_id,
                partitions: vec![share_fetch_request::FetchPartition {
                    partition_index: 0,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::ShareAcknowledge => vec![RequestBody::ShareAcknowledge(ShareAcknowledgeRequest {
            group_id: Some(GROUP.into()),
            member_id: Some(MEMBER.into()),
            share_session_epoch: 1,
            topics: vec![share_acknowledge_request::AcknowledgeTopic {
                topic_id,
                partitions: vec![share_acknowledge_request::AcknowledgePartition {
                    partition_index: 0,
                    acknowledgement_batches: vec![
                        share_acknowledge_request::AcknowledgementBatch {
                            first_offset: 0,
                            last_offset: 0,
                            acknowledge_types: vec![1],
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::ConsumerGroupDescribe => {
            vec![RequestBody::ConsumerGroupDescribe(
                ConsumerGroupDescribeRequest {
                    group_ids: vec![GROUP.into()],
                    ..Default::default()
                },
            )]
        }
        ApiKey::ShareGroupDescribe => {
            vec![RequestBody::ShareGroupDescribe(ShareGroupDescribeRequest {
                group_ids: vec![GROUP.into()],
                include_authorized_operations: true,
                ..Default::default()
            })]
        }
        // The group's offsets of the topic, then of everything it read.
        ApiKey::DescribeShareGroupOffsets => [
            Some(vec![
                describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestTopic {
                    topic_name: TOPIC.into(),
                    partitions: vec![0],
                    ..Default::default()
                },
            ]),
            None,
        ]
        .into_iter()
        .map(|topics| {
            RequestBody::DescribeShareGroupOffsets(DescribeShareGroupOffsetsRequest {
                groups: vec![
                    describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup {
                        group_id: GROUP.into(),
                        topics,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            })
        })
        .collect(),
        ApiKey::AlterShareGroupOffsets => {
            vec![RequestBody::AlterShareGroupOffsets(
                AlterShareGroupOffsetsRequest {
                    group_id: GROUP.into(),
                    topics: vec![
                        alter_share_group_offsets_request::AlterShareGroupOffsetsRequestTopic {
                            topic_name: TOPIC.into(),
                            partitions: vec![
                                alter_share_group_offsets_request::AlterShareGroupOffsetsRequestPartition {
                                    partition_index: 0,
                                    start_offset: 0,
                                    ..Default::default()
                                },
                            ],
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                },
            )]
        }
        ApiKey::DeleteShareGroupOffsets => {
            vec![RequestBody::DeleteShareGroupOffsets(
                DeleteShareGroupOffsetsRequest {
                    group_id: GROUP.into(),
                    topics: vec![
                        delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic {
                            topic_name: TOPIC.into(),
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                },
            )]
        }
        ApiKey::AddPartitionsToTxn => {
            let topics = vec![add_partitions_to_txn_request::AddPartitionsToTxnTopic {
                name: TOPIC.into(),
                partitions: vec![0],
                ..Default::default()
            }];
            vec![RequestBody::AddPartitionsToTxn(if version < 4 {
                AddPartitionsToTxnRequest {
                    v3_and_below_transactional_id: TRANSACTIONAL_ID.into(),
                    v3_and_below_producer_id: producer_id,
                    v3_and_below_producer_epoch: producer_epoch,
                    v3_and_below_topics: topics,
                    ..Default::default()
                }
            } else {
                AddPartitionsToTxnRequest {
                    transactions: vec![
                        add_partitions_to_txn_request::AddPartitionsToTxnTransaction {
                            transactional_id: TRANSACTIONAL_ID.into(),
                            producer_id,
                            producer_epoch,
                            verify_only: false,
                            topics,
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                }
            })]
        }
        ApiKey::AddOffsetsToTxn => vec![RequestBody::AddOffsetsToTxn(AddOffsetsToTxnRequest {
            transactional_id: TRANSACTIONAL_ID.into(),
            producer_id,
            producer_epoch,
            group_id: GROUP.into(),
            ..Default::default()
        })],
        ApiKey::EndTxn => vec![RequestBody::EndTxn(EndTxnRequest {
            transactional_id: TRANSACTIONAL_ID.into(),
            producer_id,
            producer_epoch,
            committed: true,
            ..Default::default()
        })],
        ApiKey::TxnOffsetCommit => vec![RequestBody::TxnOffsetCommit(TxnOffsetCommitRequest {
            transactional_id: TRANSACTIONAL_ID.into(),
            group_id: GROUP.into(),
            producer_id,
            producer_epoch,
            topics: vec![txn_offset_commit_request::TxnOffsetCommitRequestTopic {
                name: TOPIC.into(),
                partitions: vec![txn_offset_commit_request::TxnOffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 0,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::DescribeTransactions => {
            vec![RequestBody::DescribeTransactions(
                DescribeTransactionsRequest {
                    transactional_ids: vec![TRANSACTIONAL_ID.into()],
                    ..Default::default()
                },
            )]
        }
        ApiKey::ListTransactions => {
            vec![RequestBody::ListTransactions(
                ListTransactionsRequest::default(),
            )]
        }
        ApiKey::SaslHandshake => vec![RequestBody::SaslHandshake(SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        })],
        ApiKey::SaslAuthenticate => vec![RequestBody::SaslAuthenticate(SaslAuthenticateRequest {
            auth_bytes: bytes::Bytes::from_static(b"\0ANONYMOUS\0secret"),
            ..Default::default()
        })],
        ApiKey::DescribeAcls => vec![RequestBody::DescribeAcls(every_acl())],
        // The escalation: the principal grants itself everything on the topic.
        ApiKey::CreateAcls => vec![RequestBody::CreateAcls(CreateAclsRequest {
            creations: vec![create_acls_request::AclCreation {
                resource_type: TOPIC_ACL,
                resource_name: TOPIC.into(),
                resource_pattern_type: LITERAL,
                principal: "User:ANONYMOUS".into(),
                host: "*".into(),
                operation: ALL_OPERATIONS,
                permission_type: ALLOW,
                ..Default::default()
            }],
            ..Default::default()
        })],
        ApiKey::DeleteAcls => {
            let every = every_acl();
            vec![RequestBody::DeleteAcls(DeleteAclsRequest {
                filters: vec![delete_acls_request::DeleteAclsFilter {
                    resource_type_filter: every.resource_type_filter,
                    resource_name_filter: every.resource_name_filter,
                    pattern_type_filter: every.pattern_type_filter,
                    principal_filter: every.principal_filter,
                    host_filter: every.host_filter,
                    operation: every.operation,
                    permission_type: every.permission_type,
                    ..Default::default()
                }],
                ..Default::default()
            })]
        }
        // One user, and every user (an empty list; null is Kafka's too, but its own refusal
        // of a null list fails, so it is no oracle there).
        // Every quota; a user's producer quota set.
        ApiKey::DescribeClientQuotas => vec![RequestBody::DescribeClientQuotas(
            DescribeClientQuotasRequest::default(),
        )],
        ApiKey::AlterClientQuotas => {
            vec![RequestBody::AlterClientQuotas(AlterClientQuotasRequest {
                entries: vec![alter_client_quotas_request::EntryData {
                    entity: vec![alter_client_quotas_request::EntityData {
                        entity_type: "user".into(),
                        entity_name: Some("someone".into()),
                        ..Default::default()
                    }],
                    ops: vec![alter_client_quotas_request::OpData {
                        key: "producer_byte_rate".into(),
                        value: 1024.0,
                        remove: false,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            })]
        }
        ApiKey::DescribeUserScramCredentials => [
            vec![describe_user_scram_credentials_request::UserName {
                name: "ANONYMOUS".into(),
                ..Default::default()
            }],
            Vec::new(),
        ]
        .into_iter()
        .map(|users| {
            RequestBody::DescribeUserScramCredentials(DescribeUserScramCredentialsRequest {
                users: Some(users),
                ..Default::default()
            })
        })
        .collect(),
        // The principal gives itself a SCRAM-SHA-256 password.
        ApiKey::AlterUserScramCredentials => {
            vec![RequestBody::AlterUserScramCredentials(
                AlterUserScramCredentialsRequest {
                    upsertions: vec![
                        alter_user_scram_credentials_request::ScramCredentialUpsertion {
                            name: "ANONYMOUS".into(),
                            mechanism: 1,
                            iterations: 4096,
                            salt: bytes::Bytes::from_static(&[7; 16]),
                            salted_password: bytes::Bytes::from_static(&[9; 32]),
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                },
            )]
        }
        other => panic!("{other:?} is served without a probe in tests/fail_closed.rs"),
    }
}

/// A config name and the value a probe sets it to.
type ConfigChange = (&'static str, &'static str);

/// The resources a config probe names, one per request: the topic (with a change to its
/// retention, which `check_unchanged` looks for), and the cluster-wide broker resource (named
/// "": Kafka checks that a named one is this broker, and a broker change, before it looks at
/// ACLs, so it gets no change).
fn config_resources() -> [(i8, &'static str, Option<ConfigChange>); 2] {
    [
        (TOPIC_CONFIG, TOPIC, Some(("retention.ms", "1000"))),
        (BROKER_CONFIG, "", None),
    ]
}

/// A filter that matches every ACL.
fn every_acl() -> DescribeAclsRequest {
    DescribeAclsRequest {
        resource_type_filter: ANY,
        resource_name_filter: None,
        pattern_type_filter: ANY,
        principal_filter: None,
        host_filter: None,
        operation: ANY,
        permission_type: ANY,
        ..Default::default()
    }
}

/// The oracle: whether `answer` is what Kafka (`KafkaApis`, with `StandardAuthorizer` and no
/// ACL for the principal) answers `probe` at `version`. Fields a version lacks decode as their
/// defaults, so each check reads only fields the version has.
fn judge(key: ApiKey, version: i16, probe: &RequestBody, answer: &ResponseBody) -> Verdict {
    use RequestBody as Q;
    use ResponseBody as A;
    match (probe, answer) {
        (Q::Produce(_), A::Produce(r)) => each(
            "each partition",
            r.responses
                .iter()
                .flat_map(|t| &t.partition_responses)
                .map(|p| p.error_code),
            TOPIC_AUTHORIZATION_FAILED,
        ),
        (Q::Fetch(_), A::Fetch(r)) => {
            // The top-level error is there from v7; the refusal is per partition.
            if version >= 7 {
                is("the top-level error", r.error_code, NONE)?;
            }
            let partitions: Vec<_> = r.responses.iter().flat_map(|t| &t.partitions).collect();
            each(
                "each partition",
                partitions.iter().map(|p| p.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            holds(
                partitions
                    .iter()
                    .all(|p| p.records.as_ref().is_none_or(|records| records.is_empty())),
                || "records were returned".into(),
            )
        }
        (Q::ListOffsets(_), A::ListOffsets(r)) => {
            let partitions: Vec<_> = r.topics.iter().flat_map(|t| &t.partitions).collect();
            each(
                "each partition",
                partitions.iter().map(|p| p.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            holds(partitions.iter().all(|p| p.offset == -1), || {
                "an offset was revealed".into()
            })
        }
        (Q::Metadata(q), A::Metadata(r)) => {
            let asked = q.topics.as_deref().unwrap_or_default();
            // All topics: only those the principal may describe, so none.
            if asked.is_empty() {
                return holds(r.topics.is_empty(), || "the listing shows topics".into());
            }
            holds(r.topics.len() == asked.len(), || {
                format!(
                    "{} topics answered for {} asked",
                    r.topics.len(),
                    asked.len()
                )
            })?;
            each(
                "each topic",
                r.topics.iter().map(|t| t.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            holds(r.topics.iter().all(|t| t.partitions.is_empty()), || {
                "partitions were revealed".into()
            })?;
            // Kafka answers a topic asked by name without its id, one asked by id without
            // its name.
            let by_id = asked.iter().all(|t| t.name.is_none());
            holds(
                r.topics.iter().all(|t| {
                    if by_id {
                        t.name.is_none()
                    } else {
                        t.topic_id.is_nil()
                    }
                }),
                || "a topic's id or name was revealed".into(),
            )
        }
        (Q::OffsetCommit(_), A::OffsetCommit(r)) => each(
            "each partition",
            r.topics
                .iter()
                .flat_map(|t| &t.partitions)
                .map(|p| p.error_code),
            GROUP_AUTHORIZATION_FAILED,
        ),
        (Q::OffsetFetch(_), A::OffsetFetch(r)) if version < 8 => {
            // From v2 the top-level error is the refusal. v1 has none: Kafka answers there
            // each named partition with it, or (from its coordinator path) nothing at all;
            // either way no partition may answer otherwise or show an offset.
            if version >= 2 {
                is(
                    "the top-level error",
                    r.error_code,
                    GROUP_AUTHORIZATION_FAILED,
                )?;
            }
            holds(
                r.topics.iter().flat_map(|t| &t.partitions).all(|p| {
                    p.error_code == GROUP_AUTHORIZATION_FAILED && p.committed_offset == -1
                }),
                || "a partition was answered other than 30 with offset -1".into(),
            )
        }
        (Q::OffsetFetch(_), A::OffsetFetch(r)) => {
            each(
                "each group",
                r.groups.iter().map(|g| g.error_code),
                GROUP_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.groups
                    .iter()
                    .flat_map(|g| &g.topics)
                    .flat_map(|t| &t.partitions)
                    .all(|p| {
                        p.error_code == GROUP_AUTHORIZATION_FAILED && p.committed_offset == -1
                    }),
                || "a partition was answered other than 30 with offset -1".into(),
            )
        }
        (Q::FindCoordinator(q), A::FindCoordinator(r)) => {
            let want = if q.key_type == 1 {
                TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            } else {
                GROUP_AUTHORIZATION_FAILED
            };
            if version < 4 {
                is("the error", r.error_code, want)?;
                holds(r.node_id == -1, || {
                    format!("node {} was revealed", r.node_id)
                })
            } else {
                each(
                    "each coordinator",
                    r.coordinators.iter().map(|c| c.error_code),
                    want,
                )?;
                holds(r.coordinators.iter().all(|c| c.node_id == -1), || {
                    "a coordinator was revealed".into()
                })
            }
        }
        (Q::JoinGroup(_), A::JoinGroup(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.members.is_empty(), || "members were revealed".into())
        }
        (Q::Heartbeat(_), A::Heartbeat(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)
        }
        (Q::LeaveGroup(_), A::LeaveGroup(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(
                r.members
                    .iter()
                    .all(|m| m.error_code == GROUP_AUTHORIZATION_FAILED),
                || "a member was answered other than 30".into(),
            )
        }
        (Q::SyncGroup(_), A::SyncGroup(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.assignment.is_empty(), || {
                "an assignment was returned".into()
            })
        }
        (Q::DescribeGroups(_), A::DescribeGroups(r)) => {
            each(
                "each group",
                r.groups.iter().map(|g| g.error_code),
                GROUP_AUTHORIZATION_FAILED,
            )?;
            holds(r.groups.iter().all(|g| g.members.is_empty()), || {
                "members were revealed".into()
            })
        }
        // Groups the principal may not describe are left out of the listing.
        (Q::ListGroups(_), A::ListGroups(r)) => {
            is("the error", r.error_code, NONE)?;
            holds(r.groups.is_empty(), || "the listing shows groups".into())
        }
        (Q::DeleteGroups(_), A::DeleteGroups(r)) => each(
            "each group",
            r.results.iter().map(|g| g.error_code),
            GROUP_AUTHORIZATION_FAILED,
        ),
        (Q::OffsetDelete(_), A::OffsetDelete(r)) => {
            is(
                "the top-level error",
                r.error_code,
                GROUP_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.topics
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .all(|p| p.error_code == GROUP_AUTHORIZATION_FAILED),
                || "a partition was answered other than 30".into(),
            )
        }
        // Anyone may ask; the answer advertises every API the probes reach.
        (Q::ApiVersions(_), A::ApiVersions(r)) => {
            is("the error", r.error_code, NONE)?;
            holds(
                REGISTRY.iter().all(|entry| {
                    r.api_keys.iter().any(|a| {
                        a.api_key == entry.key as i16
                            && (a.min_version, a.max_version) == entry.versions
                    })
                }),
                || "not every served API is advertised".into(),
            )
        }
        (Q::CreateTopics(_), A::CreateTopics(r)) => each(
            "each topic",
            r.topics.iter().map(|t| t.error_code),
            TOPIC_AUTHORIZATION_FAILED,
        ),
        (Q::DeleteTopics(q), A::DeleteTopics(r)) => {
            each(
                "each topic",
                r.responses.iter().map(|t| t.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            // Asked by id, Kafka answers without the name.
            let by_id = q.topics.iter().any(|t| t.name.is_none());
            holds(
                !by_id || r.responses.iter().all(|t| t.name.is_none()),
                || "the name of a topic asked by id was revealed".into(),
            )
        }
        // Without a transactional id (KIP-679): IDEMPOTENT_WRITE on the cluster or WRITE on
        // some topic, else CLUSTER_AUTHORIZATION_FAILED.
        (Q::InitProducerId(q), A::InitProducerId(r)) => {
            let want = if q.transactional_id.is_some() {
                TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            } else {
                CLUSTER_AUTHORIZATION_FAILED
            };
            is("the error", r.error_code, want)?;
            holds(r.producer_id == -1, || {
                format!("producer id {} was granted", r.producer_id)
            })
        }
        (Q::DescribeConfigs(q), A::DescribeConfigs(r)) => {
            let want = config_refusal(q.resources.iter().map(|c| c.resource_type));
            each(
                "each resource",
                r.results.iter().map(|c| c.error_code),
                want,
            )?;
            holds(r.results.iter().all(|c| c.configs.is_empty()), || {
                "configs were revealed".into()
            })
        }
        (Q::AlterConfigs(q), A::AlterConfigs(r)) => each(
            "each resource",
            r.responses.iter().map(|c| c.error_code),
            config_refusal(q.resources.iter().map(|c| c.resource_type)),
        ),
        (Q::IncrementalAlterConfigs(q), A::IncrementalAlterConfigs(r)) => each(
            "each resource",
            r.responses.iter().map(|c| c.error_code),
            config_refusal(q.resources.iter().map(|c| c.resource_type)),
        ),
        (Q::CreatePartitions(_), A::CreatePartitions(r)) => each(
            "each topic",
            r.results.iter().map(|t| t.error_code),
            TOPIC_AUTHORIZATION_FAILED,
        ),
        // Anyone may ask; asked for the operations allowed on the cluster, Kafka answers 0
        // to a principal that may not describe it.
        (Q::DescribeCluster(q), A::DescribeCluster(r)) => {
            is("the error", r.error_code, NONE)?;
            holds(!r.brokers.is_empty(), || "no broker listed".into())?;
            holds(
                !q.include_cluster_authorized_operations || r.cluster_authorized_operations == 0,
                || {
                    format!(
                        "cluster operations {:#x} allowed",
                        r.cluster_authorized_operations
                    )
                },
            )
        }
        (Q::OffsetForLeaderEpoch(_), A::OffsetForLeaderEpoch(r)) => {
            let partitions: Vec<_> = r.topics.iter().flat_map(|t| &t.partitions).collect();
            each(
                "each partition",
                partitions.iter().map(|p| p.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            holds(partitions.iter().all(|p| p.end_offset == -1), || {
                "an end offset was revealed".into()
            })
        }
        // v1 and v2 have no top-level error: the refusal there is an empty answer.
        (Q::DescribeLogDirs(_), A::DescribeLogDirs(r)) => {
            if version >= 3 {
                is(
                    "the top-level error",
                    r.error_code,
                    CLUSTER_AUTHORIZATION_FAILED,
                )?;
            }
            holds(r.results.is_empty(), || {
                "log directories were revealed".into()
            })
        }
        // Kafka: Cluster DESCRIBE, refused at the top level with nothing described.
        (Q::DescribeQuorum(_), A::DescribeQuorum(r)) => {
            is(
                "the top-level error",
                r.error_code,
                CLUSTER_AUTHORIZATION_FAILED,
            )?;
            holds(r.topics.is_empty() && r.nodes.is_empty(), || {
                "the quorum was described".into()
            })
        }
        (Q::DeleteRecords(_), A::DeleteRecords(r)) => each(
            "each partition",
            r.topics
                .iter()
                .flat_map(|t| &t.partitions)
                .map(|p| p.error_code),
            TOPIC_AUTHORIZATION_FAILED,
        ),
        (Q::DescribeProducers(_), A::DescribeProducers(r)) => {
            let partitions: Vec<_> = r.topics.iter().flat_map(|t| &t.partitions).collect();
            each(
                "each partition",
                partitions.iter().map(|p| p.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            holds(
                partitions.iter().all(|p| p.active_producers.is_empty()),
                || "producers were revealed".into(),
            )
        }
        (Q::DescribeTopicPartitions(q), A::DescribeTopicPartitions(r)) => {
            // All topics (an empty list): only those the principal may describe, so none.
            if q.topics.is_empty() {
                return holds(r.topics.is_empty(), || "the listing shows topics".into());
            }
            each(
                "each topic",
                r.topics.iter().map(|t| t.error_code),
                TOPIC_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.topics
                    .iter()
                    .all(|t| t.partitions.is_empty() && t.topic_id.is_nil()),
                || "partitions or a topic id were revealed".into(),
            )
        }
        (Q::ConsumerGroupHeartbeat(_), A::ConsumerGroupHeartbeat(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.assignment.is_none(), || {
                "an assignment was returned".into()
            })
        }
        // Kafka checks READ on the group before anything else: the whole request is refused.
        (Q::ShareGroupHeartbeat(_), A::ShareGroupHeartbeat(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.assignment.is_none(), || {
                "an assignment was returned".into()
            })
        }
        (Q::ShareFetch(_), A::ShareFetch(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.responses.is_empty(), || "records were returned".into())
        }
        (Q::ShareAcknowledge(_), A::ShareAcknowledge(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.responses.is_empty(), || {
                "acknowledgements were answered".into()
            })
        }
        // Kafka checks DESCRIBE group by group: each is refused, nothing of it shown.
        (Q::ShareGroupDescribe(_), A::ShareGroupDescribe(r)) => {
            each(
                "each group",
                r.groups.iter().map(|g| g.error_code),
                GROUP_AUTHORIZATION_FAILED,
            )?;
            holds(r.groups.iter().all(|g| g.members.is_empty()), || {
                "members were revealed".into()
            })
        }
        (Q::DescribeShareGroupOffsets(_), A::DescribeShareGroupOffsets(r)) => {
            each(
                "each group",
                r.groups.iter().map(|g| g.error_code),
                GROUP_AUTHORIZATION_FAILED,
            )?;
            holds(r.groups.iter().all(|g| g.topics.is_empty()), || {
                "offsets were revealed".into()
            })
        }
        // READ (Alter) or DELETE (Delete) on the group first: the whole request is refused.
        (Q::AlterShareGroupOffsets(_), A::AlterShareGroupOffsets(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.responses.is_empty(), || "partitions were answered".into())
        }
        (Q::DeleteShareGroupOffsets(_), A::DeleteShareGroupOffsets(r)) => {
            is("the error", r.error_code, GROUP_AUTHORIZATION_FAILED)?;
            holds(r.responses.is_empty(), || "topics were answered".into())
        }
        (Q::ConsumerGroupDescribe(_), A::ConsumerGroupDescribe(r)) => {
            each(
                "each group",
                r.groups.iter().map(|g| g.error_code),
                GROUP_AUTHORIZATION_FAILED,
            )?;
            holds(r.groups.iter().all(|g| g.members.is_empty()), || {
                "members were revealed".into()
            })
        }
        (Q::AddPartitionsToTxn(_), A::AddPartitionsToTxn(r)) if version < 4 => each(
            "each partition",
            r.results_by_topic_v3_and_below
                .iter()
                .flat_map(|t| &t.results_by_partition)
                .map(|p| p.partition_error_code),
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ),
        // From v4 the API is the brokers' (KIP-890): Kafka requires CLUSTER_ACTION on the
        // cluster before it looks at any transactional id (`KafkaApis.
        // handleAddPartitionsToTxnRequest`), and answers the whole request with the error.
        (Q::AddPartitionsToTxn(_), A::AddPartitionsToTxn(r)) => {
            is(
                "the top-level error",
                r.error_code,
                CLUSTER_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.results_by_transaction
                    .iter()
                    .flat_map(|t| &t.topic_results)
                    .flat_map(|t| &t.results_by_partition)
                    .all(|p| p.partition_error_code == CLUSTER_AUTHORIZATION_FAILED),
                || "a partition was answered other than 31".into(),
            )
        }
        (Q::AddOffsetsToTxn(_), A::AddOffsetsToTxn(r)) => is(
            "the error",
            r.error_code,
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ),
        (Q::EndTxn(_), A::EndTxn(r)) => is(
            "the error",
            r.error_code,
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ),
        (Q::TxnOffsetCommit(_), A::TxnOffsetCommit(r)) => each(
            "each partition",
            r.topics
                .iter()
                .flat_map(|t| &t.partitions)
                .map(|p| p.error_code),
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ),
        (Q::DescribeTransactions(_), A::DescribeTransactions(r)) => {
            each(
                "each transactional id",
                r.transaction_states.iter().map(|t| t.error_code),
                TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.transaction_states
                    .iter()
                    .all(|t| t.transaction_state.is_empty() && t.topics.is_empty()),
                || "a transaction's state or partitions were revealed".into(),
            )
        }
        // Kafka lists only the transactional ids the principal may describe (none here) with
        // error 0; floe refuses the whole request with 31. Either shows no transaction.
        (Q::ListTransactions(_), A::ListTransactions(r)) => {
            holds(
                r.error_code == NONE || r.error_code == CLUSTER_AUTHORIZATION_FAILED,
                || format!("error {}, Kafka answers 0 (floe 31)", r.error_code),
            )?;
            holds(r.transaction_states.is_empty(), || {
                "transactions were listed".into()
            })
        }
        // A PLAINTEXT listener has no SASL exchange: Kafka answers both ILLEGAL_SASL_STATE.
        (Q::SaslHandshake(_), A::SaslHandshake(r)) => {
            is("the error", r.error_code, ILLEGAL_SASL_STATE)
        }
        (Q::SaslAuthenticate(_), A::SaslAuthenticate(r)) => {
            is("the error", r.error_code, ILLEGAL_SASL_STATE)
        }
        (Q::DescribeAcls(_), A::DescribeAcls(r)) => {
            is("the error", r.error_code, CLUSTER_AUTHORIZATION_FAILED)?;
            holds(r.resources.is_empty(), || "ACLs were revealed".into())
        }
        (Q::CreateAcls(_), A::CreateAcls(r)) => each(
            "each creation",
            r.results.iter().map(|c| c.error_code),
            CLUSTER_AUTHORIZATION_FAILED,
        ),
        (Q::DeleteAcls(_), A::DeleteAcls(r)) => {
            each(
                "each filter",
                r.filter_results.iter().map(|f| f.error_code),
                CLUSTER_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.filter_results.iter().all(|f| f.matching_acls.is_empty()),
                || "ACLs were revealed".into(),
            )
        }
        // DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster, else nothing is shown or changed.
        (Q::DescribeClientQuotas(_), A::DescribeClientQuotas(r)) => {
            is("the error", r.error_code, CLUSTER_AUTHORIZATION_FAILED)?;
            holds(r.entries.as_ref().is_none_or(Vec::is_empty), || {
                "quotas were revealed".into()
            })
        }
        (Q::AlterClientQuotas(_), A::AlterClientQuotas(r)) => each(
            "each entry",
            r.entries.iter().map(|e| e.error_code),
            CLUSTER_AUTHORIZATION_FAILED,
        ),
        (Q::DescribeUserScramCredentials(_), A::DescribeUserScramCredentials(r)) => {
            is(
                "the top-level error",
                r.error_code,
                CLUSTER_AUTHORIZATION_FAILED,
            )?;
            holds(
                r.results.iter().all(|u| {
                    u.error_code == CLUSTER_AUTHORIZATION_FAILED && u.credential_infos.is_empty()
                }),
                || "a user was answered other than 31, or credentials were revealed".into(),
            )
        }
        (Q::AlterUserScramCredentials(_), A::AlterUserScramCredentials(r)) => each(
            "each user",
            r.results.iter().map(|u| u.error_code),
            CLUSTER_AUTHORIZATION_FAILED,
        ),
        _ => Err(format!(
            "the answer is not {key:?}'s, or tests/fail_closed.rs has no oracle for {key:?}"
        )),
    }
}

/// A topic resource is refused with 29, the broker resource with 31 (the probes name one
/// resource each).
fn config_refusal(mut resource_types: impl Iterator<Item = i8>) -> i16 {
    if resource_types.all(|t| t == TOPIC_CONFIG) {
        TOPIC_AUTHORIZATION_FAILED
    } else {
        CLUSTER_AUTHORIZATION_FAILED
    }
}

type Verdict = Result<(), String>;

fn is(what: &str, got: i16, want: i16) -> Verdict {
    holds(got == want, || {
        format!("{what}: {got}, Kafka answers {want}")
    })
}

/// Every code is `want`, and there is at least one: Kafka answers each item asked.
fn each(what: &str, codes: impl IntoIterator<Item = i16>, want: i16) -> Verdict {
    let codes: Vec<i16> = codes.into_iter().collect();
    holds(!codes.is_empty(), || {
        format!("{what}: nothing answered, Kafka answers each with {want}")
    })?;
    holds(codes.iter().all(|&c| c == want), || {
        format!("{what}: {codes:?}, Kafka answers {want}")
    })
}

fn holds(condition: bool, failure: impl FnOnce() -> String) -> Verdict {
    if condition { Ok(()) } else { Err(failure()) }
}

/// As the super user: the topic, its partition, its records, the group's offset, the topic's
/// config and the transactional id are as the first life left them, and no ACL or SCRAM
/// credential exists.
fn check_unchanged(runtime: &Runtime, floe: &Floe, known: &Known) {
    // Only `t`, with one partition: no topic created (CreateTopics, auto-creation), deleted,
    // or grown (CreatePartitions).
    let listed = must(
        runtime,
        floe,
        12,
        RequestBody::Metadata(MetadataRequest {
            topics: None,
            allow_auto_topic_creation: false,
            ..Default::default()
        }),
    );
    let ResponseBody::Metadata(listed) = listed else {
        panic!("not a Metadata answer: {listed:?}")
    };
    let topics: Vec<(Option<&str>, usize)> = listed
        .topics
        .iter()
        .map(|t| (t.name.as_deref(), t.partitions.len()))
        .collect();
    assert_eq!(topics, [(Some(TOPIC), 1)], "{listed:?}");

    // Its one record is still there, and no other: DeleteRecords and Produce were refused.
    let offset = |timestamp: i64| {
        let answer = must(
            runtime,
            floe,
            7,
            RequestBody::ListOffsets(ListOffsetsRequest {
                replica_id: -1,
                topics: vec![list_offsets_request::ListOffsetsTopic {
                    name: TOPIC.into(),
                    partitions: vec![list_offsets_request::ListOffsetsPartition {
                        partition_index: 0,
                        timestamp,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }),
        );
        let ResponseBody::ListOffsets(answer) = answer else {
            panic!("not a ListOffsets answer: {answer:?}")
        };
        let partition = answer
            .topics
            .iter()
            .flat_map(|t| &t.partitions)
            .next()
            .unwrap_or_else(|| panic!("no partition in {answer:?}"));
        assert_eq!(partition.error_code, NONE, "{answer:?}");
        partition.offset
    };
    assert_eq!(offset(EARLIEST), 0, "the log start offset");
    assert_eq!(offset(LATEST), 1, "the high watermark");

    // The group's offset: OffsetCommit, TxnOffsetCommit, OffsetDelete and DeleteGroups were
    // refused. The coordinator may still be loading the group after the restart.
    let committed = support::wait_for(
        "the group's committed offset",
        Duration::from_secs(30),
        || {
            let answer = must(
                runtime,
                floe,
                8,
                RequestBody::OffsetFetch(OffsetFetchRequest {
                    groups: vec![offset_fetch_request::OffsetFetchRequestGroup {
                        group_id: GROUP.into(),
                        member_epoch: -1,
                        topics: Some(vec![offset_fetch_request::OffsetFetchRequestTopics {
                            name: TOPIC.into(),
                            partition_indexes: vec![0],
                            ..Default::default()
                        }]),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            );
            let ResponseBody::OffsetFetch(answer) = answer else {
                panic!("not an OffsetFetch answer: {answer:?}")
            };
            let group = answer.groups.first()?;
            let partition = group.topics.iter().flat_map(|t| &t.partitions).next()?;
            (group.error_code == NONE && partition.error_code == NONE)
                .then_some(partition.committed_offset)
        },
    );
    assert_eq!(committed, COMMITTED, "the group's committed offset");

    // No ACL: CreateAcls was refused (and DeleteAcls had nothing to delete).
    let acls = must(runtime, floe, 3, RequestBody::DescribeAcls(every_acl()));
    let ResponseBody::DescribeAcls(acls) = acls else {
        panic!("not a DescribeAcls answer: {acls:?}")
    };
    assert_eq!(acls.error_code, NONE, "{acls:?}");
    assert!(acls.resources.is_empty(), "ACLs exist: {acls:?}");

    // No SCRAM credential: AlterUserScramCredentials was refused.
    let users = must(
        runtime,
        floe,
        0,
        RequestBody::DescribeUserScramCredentials(DescribeUserScramCredentialsRequest {
            users: None,
            ..Default::default()
        }),
    );
    let ResponseBody::DescribeUserScramCredentials(users) = users else {
        panic!("not a DescribeUserScramCredentials answer: {users:?}")
    };
    assert_eq!(users.error_code, NONE, "{users:?}");
    assert!(
        users.results.is_empty(),
        "SCRAM credentials exist: {users:?}"
    );

    // The topic's retention: AlterConfigs and IncrementalAlterConfigs were refused.
    let configs = must(
        runtime,
        floe,
        4,
        RequestBody::DescribeConfigs(DescribeConfigsRequest {
            resources: vec![describe_configs_request::DescribeConfigsResource {
                resource_type: TOPIC_CONFIG,
                resource_name: TOPIC.into(),
                configuration_keys: Some(vec!["retention.ms".into()]),
                ..Default::default()
            }],
            ..Default::default()
        }),
    );
    let ResponseBody::DescribeConfigs(configs) = configs else {
        panic!("not a DescribeConfigs answer: {configs:?}")
    };
    let codes: Vec<i16> = configs.results.iter().map(|r| r.error_code).collect();
    assert_eq!(codes, [NONE], "{configs:?}");
    assert!(
        configs
            .results
            .iter()
            .flat_map(|r| &r.configs)
            .all(|c| c.name != "retention.ms" || c.value.as_deref() != Some("1000")),
        "the topic's retention was changed: {configs:?}"
    );

    // The transactional id as InitProducerId left it: no new epoch (InitProducerId), no
    // transaction begun or ended (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn).
    let described = must(
        runtime,
        floe,
        0,
        RequestBody::DescribeTransactions(DescribeTransactionsRequest {
            transactional_ids: vec![TRANSACTIONAL_ID.into()],
            ..Default::default()
        }),
    );
    let ResponseBody::DescribeTransactions(described) = described else {
        panic!("not a DescribeTransactions answer: {described:?}")
    };
    let states: Vec<(i16, &str, i64, i16, usize)> = described
        .transaction_states
        .iter()
        .map(|t| {
            (
                t.error_code,
                t.transaction_state.as_str(),
                t.producer_id,
                t.producer_epoch,
                t.topics.len(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [(NONE, "Empty", known.producer_id, known.producer_epoch, 0)],
        "{described:?}"
    );
}

/// `ask`, for the set-up and the final look, where any failure ends the test.
fn must(runtime: &Runtime, floe: &Floe, version: i16, request: RequestBody) -> ResponseBody {
    let shown = format!("{:?} v{version}", request.api_key());
    ask(runtime, &floe.bootstrap(), version, request).unwrap_or_else(|e| panic!("{shown}: {e}"))
}

/// Sends `probe` on a connection of its own and returns its answer, or why there is none.
/// Unlike `support::kafka_call`, which panics on a closed connection and waits without a
/// bound, both come back as findings to report with the probe that caused them, and the other
/// probes still run.
fn ask(
    runtime: &Runtime,
    addr: &str,
    version: i16,
    probe: RequestBody,
) -> Result<ResponseBody, String> {
    runtime.block_on(async {
        match tokio::time::timeout(ANSWER_WITHIN, exchange(addr, version, probe)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(format!("no answer (a refusal must be one): {e}")),
            Err(_) => Err(format!("no answer within {ANSWER_WITHIN:?}")),
        }
    })
}

async fn exchange(
    addr: &str,
    version: i16,
    probe: RequestBody,
) -> Result<ResponseBody, ClientError> {
    let (mut tx, mut rx) = connect(addr).await?;
    call(&mut tx, &mut rx, version, probe).await
}
