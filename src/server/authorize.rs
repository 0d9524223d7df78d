//! ACL enforcement around the handlers, Kafka's way (KafkaApis): before a handler runs, the
//! parts of a request the client may not touch are taken out (or the whole request is
//! answered with the authorization error in its own shape); after it runs, the parts taken
//! out are put back into the response with their error, and what the client may not
//! describe is hidden from listings.
//!
//! | API | needs | denied |
//! | --- | --- | --- |
//! | Produce | TransactionalId WRITE (transactional), Topic WRITE | 53 on every partition / 29 per topic |
//! | Fetch, OffsetCommit (topics) | Topic READ | 29 per topic |
//! | ListOffsets | Topic DESCRIBE | 29 per topic |
//! | Metadata | Topic DESCRIBE (CREATE to auto-create) | hidden when all are listed, 29 when named |
//! | JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetDelete, ConsumerGroupHeartbeat | Group READ | 30 |
//! | OffsetFetch, DescribeGroups, FindCoordinator (group) | Group DESCRIBE | 30 (OffsetFetch from v8: per group) |
//! | OffsetFetch (topics) | Topic DESCRIBE | 29 per named partition; hidden when all are listed |
//! | DeleteGroups | Group DELETE | 30 per group |
//! | ListGroups | Cluster DESCRIBE, or Group DESCRIBE per group | groups hidden |
//! | CreateTopics | Cluster CREATE or Topic CREATE | 29 per topic |
//! | DeleteTopics | Topic DELETE | 29 per topic |
//! | DeleteRecords | Topic DELETE | 29 on every topic when any is denied |
//! | CreatePartitions | Topic ALTER | 29 on every topic when any is denied |
//! | InitProducerId | TransactionalId WRITE; without one Cluster IDEMPOTENT_WRITE or any Topic WRITE | 53 / 31 |
//! | AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit | TransactionalId WRITE | 53 |
//! | FindCoordinator (transaction) | TransactionalId DESCRIBE | 53 |
//! | DescribeConfigs / AlterConfigs, IncrementalAlterConfigs | DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic or cluster | 29 / 31 on every resource when any is denied |
//! | OffsetForLeaderEpoch, DescribeTopicPartitions | Topic DESCRIBE | 29 on every item when any is denied |
//! | DescribeProducers | Topic READ | 29 on every item when any is denied |
//! | ConsumerGroupDescribe | Group DESCRIBE | 30 on every group when any is denied |
//! | DescribeLogDirs, DescribeTransactions, ListTransactions | Cluster DESCRIBE | 31 / 53 (whole request) |
//!
//! The ACL APIs and the SCRAM credential APIs check Cluster ALTER / DESCRIBE themselves.
//! ApiVersions, SaslHandshake, SaslAuthenticate and DescribeCluster need nothing.

use crate::protocol::ErrorCode;
use crate::protocol::messages::*;
use crate::security::acl::{Operation, ResourceType};
use crate::server::broker::Broker;
use crate::server::handlers::{Client, offset_fetch};
use uuid::Uuid;

const TOPIC: i16 = ErrorCode::TopicAuthorizationFailed as i16;
const GROUP: i16 = ErrorCode::GroupAuthorizationFailed as i16;
const CLUSTER: i16 = ErrorCode::ClusterAuthorizationFailed as i16;
const TXN: i16 = ErrorCode::TransactionalIdAuthorizationFailed as i16;

/// What was taken out of a request, to be put back into its response.
#[derive(Default)]
pub struct Denied {
    /// Topics (name, id, partitions) answered with `code`.
    topics: Vec<(String, Uuid, Vec<i32>)>,
    code: i16,
    /// Topic names answered with 29 (Metadata, CreateTopics, DeleteTopics, ...).
    names: Vec<String>,
    /// Topics asked for by id alone, answered with 29 under their id (their name is not
    /// the client's to learn).
    ids: Vec<Uuid>,
    /// Groups answered with 30 (DeleteGroups, DescribeGroups, OffsetFetch from v8).
    groups: Vec<String>,
    /// OffsetFetch: topics (group, name, id, partitions) answered with 29; the group is the
    /// request's own below v8.
    offset_topics: Vec<(String, String, Uuid, Vec<i32>)>,
    /// Metadata/ListGroups: hide what may not be described.
    filter: bool,
}

/// The outcome of the check before a handler runs.
pub enum Check {
    /// Run the handler on what is left; then `restore`.
    Run(Denied),
    /// Answer this instead of running the handler.
    Answer(ResponseBody),
}

fn topic_name(broker: &Broker, name: &str, id: &Uuid) -> String {
    if !name.is_empty() || id.is_nil() {
        return name.to_string();
    }
    broker
        .metadata
        .read(|s| s.topic_by_id(id).map(|t| t.name.clone()))
        .unwrap_or_default()
}

impl Broker {
    fn topic_allowed(&self, client: &Client<'_>, operation: Operation, name: &str) -> bool {
        self.allowed(client, operation, ResourceType::Topic, name)
    }

    fn group_allowed(&self, client: &Client<'_>, operation: Operation, group: &str) -> bool {
        self.allowed(client, operation, ResourceType::Group, group)
    }

    fn txn_allowed(&self, client: &Client<'_>, operation: Operation, id: &str) -> bool {
        self.allowed(client, operation, ResourceType::TransactionalId, id)
    }
}

/// The check of a Produce request (it is queued before the others are routed).
pub fn produce(broker: &Broker, client: &Client<'_>, request: &mut ProduceRequest) -> Denied {
    let mut denied = Denied::default();
    if !broker.authorizes() {
        return denied;
    }
    let transactional = request.transactional_id.clone();
    let txn_ok = transactional
        .as_deref()
        .is_none_or(|id| broker.txn_allowed(client, Operation::Write, id));
    denied.code = if txn_ok { TOPIC } else { TXN };
    request.topic_data.retain(|t| {
        let name = topic_name(broker, &t.name, &t.topic_id);
        let keep = txn_ok && broker.topic_allowed(client, Operation::Write, &name);
        if !keep {
            let partitions = t.partition_data.iter().map(|p| p.index).collect();
            denied.topics.push((t.name.clone(), t.topic_id, partitions));
        }
        keep
    });
    denied
}

/// Puts a Produce request's denied topics back into its response.
pub fn restore_produce(denied: Denied, response: &mut ProduceResponse) {
    for (name, topic_id, partitions) in denied.topics {
        response
            .responses
            .push(produce_response::TopicProduceResponse {
                name,
                topic_id,
                partition_responses: partitions
                    .into_iter()
                    .map(|index| produce_response::PartitionProduceResponse {
                        index,
                        error_code: denied.code,
                        base_offset: -1,
                        log_append_time_ms: -1,
                        log_start_offset: -1,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            });
    }
}

fn whole(body: ResponseBody) -> Check {
    Check::Answer(body)
}

/// The check of any other request.
pub fn check(broker: &Broker, client: &Client<'_>, body: &mut RequestBody) -> Check {
    let mut denied = Denied::default();
    if !broker.authorizes() {
        return Check::Run(denied);
    }
    let group_read = |group: &str| broker.group_allowed(client, Operation::Read, group);
    let txn_write = |id: &str| broker.txn_allowed(client, Operation::Write, id);
    match body {
        RequestBody::Fetch(r) => {
            denied.code = TOPIC;
            r.topics.retain(|t| {
                let name = topic_name(broker, &t.topic, &t.topic_id);
                let keep = broker.topic_allowed(client, Operation::Read, &name);
                if !keep {
                    let partitions = t.partitions.iter().map(|p| p.partition).collect();
                    denied
                        .topics
                        .push((t.topic.clone(), t.topic_id, partitions));
                }
                keep
            });
        }
        RequestBody::ListOffsets(r) => {
            denied.code = TOPIC;
            r.topics.retain(|t| {
                let keep = broker.topic_allowed(client, Operation::Describe, &t.name);
                if !keep {
                    let partitions = t.partitions.iter().map(|p| p.partition_index).collect();
                    denied
                        .topics
                        .push((t.name.clone(), Uuid::nil(), partitions));
                }
                keep
            });
        }
        RequestBody::Metadata(r) => {
            denied.filter = true;
            if let Some(topics) = &mut r.topics {
                topics.retain(|t| {
                    let by_id = t.name.is_none();
                    let name = topic_name(broker, t.name.as_deref().unwrap_or(""), &t.topic_id);
                    // An id nobody knows is the handler's to answer (UNKNOWN_TOPIC_ID).
                    if by_id && name.is_empty() {
                        return true;
                    }
                    let keep = broker.topic_allowed(client, Operation::Describe, &name);
                    if !keep && by_id {
                        denied.ids.push(t.topic_id);
                    } else if !keep {
                        denied.names.push(name);
                    }
                    keep
                });
                // Auto-creation needs Cluster CREATE or Topic CREATE.
                if r.allow_auto_topic_creation
                    && !broker.allowed_on_cluster(client, Operation::Create)
                    && topics.iter().any(|t| {
                        !broker.topic_allowed(
                            client,
                            Operation::Create,
                            t.name.as_deref().unwrap_or(""),
                        )
                    })
                {
                    r.allow_auto_topic_creation = false;
                }
            }
        }
        RequestBody::OffsetCommit(r) => {
            if !group_read(&r.group_id) {
                return whole(ResponseBody::OffsetCommit(OffsetCommitResponse {
                    topics: r
                        .topics
                        .iter()
                        .map(|t| offset_commit_response::OffsetCommitResponseTopic {
                            name: t.name.clone(),
                            topic_id: t.topic_id,
                            partitions: t
                                .partitions
                                .iter()
                                .map(|p| offset_commit_response::OffsetCommitResponsePartition {
                                    partition_index: p.partition_index,
                                    error_code: GROUP,
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }));
            }
            denied.code = TOPIC;
            r.topics.retain(|t| {
                let name = topic_name(broker, &t.name, &t.topic_id);
                let keep = broker.topic_allowed(client, Operation::Read, &name);
                if !keep {
                    let partitions = t.partitions.iter().map(|p| p.partition_index).collect();
                    denied.topics.push((t.name.clone(), t.topic_id, partitions));
                }
                keep
            });
        }
        // Before v8 a request names one group (`group_id`), from v8 on a list.
        RequestBody::OffsetFetch(r)
            if r.groups.is_empty()
                && !broker.group_allowed(client, Operation::Describe, &r.group_id) =>
        {
            return whole(ResponseBody::OffsetFetch(offset_fetch::error_before_v8(
                r,
                ErrorCode::GroupAuthorizationFailed,
            )));
        }
        // From v8 on, each group is answered on its own, as Kafka does. In every version a
        // topic the client may not describe is answered with 29 when named, and left out of
        // an answer that lists all the group committed (`filter`).
        RequestBody::OffsetFetch(r) => {
            r.groups.retain(|g| {
                let keep = broker.group_allowed(client, Operation::Describe, &g.group_id);
                if !keep {
                    denied.groups.push(g.group_id.clone());
                }
                keep
            });
            let describable = |name: &str| broker.topic_allowed(client, Operation::Describe, name);
            match &mut r.topics {
                None => denied.filter |= r.groups.is_empty(),
                Some(topics) => topics.retain(|t| {
                    let keep = describable(&t.name);
                    if !keep {
                        denied.offset_topics.push((
                            r.group_id.clone(),
                            t.name.clone(),
                            Uuid::nil(),
                            t.partition_indexes.clone(),
                        ));
                    }
                    keep
                }),
            }
            for group in &mut r.groups {
                match &mut group.topics {
                    None => denied.filter = true,
                    Some(topics) => topics.retain(|t| {
                        let keep = describable(&topic_name(broker, &t.name, &t.topic_id));
                        if !keep {
                            denied.offset_topics.push((
                                group.group_id.clone(),
                                t.name.clone(),
                                t.topic_id,
                                t.partition_indexes.clone(),
                            ));
                        }
                        keep
                    }),
                }
            }
        }
        RequestBody::FindCoordinator(r) => {
            let keys: Vec<String> = if r.coordinator_keys.is_empty() {
                vec![r.key.clone()]
            } else {
                r.coordinator_keys.clone()
            };
            let (resource, code) = if r.key_type == 1 {
                (ResourceType::TransactionalId, TXN)
            } else {
                (ResourceType::Group, GROUP)
            };
            if keys
                .iter()
                .any(|k| !broker.allowed(client, Operation::Describe, resource, k))
            {
                return whole(ResponseBody::FindCoordinator(FindCoordinatorResponse {
                    error_code: code,
                    node_id: -1,
                    port: -1,
                    coordinators: if r.coordinator_keys.is_empty() {
                        Vec::new()
                    } else {
                        keys.into_iter()
                            .map(|key| find_coordinator_response::Coordinator {
                                key,
                                node_id: -1,
                                port: -1,
                                error_code: code,
                                ..Default::default()
                            })
                            .collect()
                    },
                    ..Default::default()
                }));
            }
        }
        RequestBody::JoinGroup(r) if !group_read(&r.group_id) => {
            return whole(ResponseBody::JoinGroup(JoinGroupResponse {
                error_code: GROUP,
                generation_id: -1,
                ..Default::default()
            }));
        }
        RequestBody::SyncGroup(r) if !group_read(&r.group_id) => {
            return whole(ResponseBody::SyncGroup(SyncGroupResponse {
                error_code: GROUP,
                ..Default::default()
            }));
        }
        RequestBody::Heartbeat(r) if !group_read(&r.group_id) => {
            return whole(ResponseBody::Heartbeat(HeartbeatResponse {
                error_code: GROUP,
                ..Default::default()
            }));
        }
        RequestBody::LeaveGroup(r) if !group_read(&r.group_id) => {
            return whole(ResponseBody::LeaveGroup(LeaveGroupResponse {
                error_code: GROUP,
                ..Default::default()
            }));
        }
        RequestBody::OffsetDelete(r)
            if !broker.group_allowed(client, Operation::Delete, &r.group_id) =>
        {
            return whole(ResponseBody::OffsetDelete(OffsetDeleteResponse {
                error_code: GROUP,
                ..Default::default()
            }));
        }
        RequestBody::ConsumerGroupHeartbeat(r) if !group_read(&r.group_id) => {
            return whole(ResponseBody::ConsumerGroupHeartbeat(
                ConsumerGroupHeartbeatResponse {
                    error_code: GROUP,
                    error_message: Some("Group authorization failed.".into()),
                    ..Default::default()
                },
            ));
        }
        RequestBody::DescribeGroups(r) => {
            r.groups.retain(|g| {
                let keep = broker.group_allowed(client, Operation::Describe, g);
                if !keep {
                    denied.groups.push(g.clone());
                }
                keep
            });
        }
        RequestBody::DeleteGroups(r) => {
            r.groups_names.retain(|g| {
                let keep = broker.group_allowed(client, Operation::Delete, g);
                if !keep {
                    denied.groups.push(g.clone());
                }
                keep
            });
        }
        RequestBody::ListGroups(_) => {
            denied.filter = !broker.allowed_on_cluster(client, Operation::Describe);
        }
        RequestBody::CreateTopics(r) => {
            let cluster = broker.allowed_on_cluster(client, Operation::Create);
            r.topics.retain(|t| {
                let keep = cluster || broker.topic_allowed(client, Operation::Create, &t.name);
                if !keep {
                    denied.names.push(t.name.clone());
                }
                keep
            });
        }
        RequestBody::DeleteTopics(r) => {
            r.topic_names.retain(|name| {
                let keep = broker.topic_allowed(client, Operation::Delete, name);
                if !keep {
                    denied.names.push(name.clone());
                }
                keep
            });
            r.topics.retain(|t| {
                let by_id = t.name.is_none();
                let name = topic_name(broker, t.name.as_deref().unwrap_or(""), &t.topic_id);
                if by_id && name.is_empty() {
                    return true;
                }
                let keep = broker.topic_allowed(client, Operation::Delete, &name);
                if !keep && by_id {
                    denied.ids.push(t.topic_id);
                } else if !keep {
                    denied.names.push(name);
                }
                keep
            });
        }
        RequestBody::InitProducerId(r) => {
            let allowed = match r.transactional_id.as_deref() {
                Some(id) => txn_write(id),
                None => {
                    broker.allowed_on_cluster(client, Operation::IdempotentWrite)
                        || broker.any_topic_writable(client)
                }
            };
            if !allowed {
                let code = if r.transactional_id.is_some() {
                    TXN
                } else {
                    CLUSTER
                };
                return whole(ResponseBody::InitProducerId(InitProducerIdResponse {
                    error_code: code,
                    producer_id: -1,
                    producer_epoch: -1,
                    ..Default::default()
                }));
            }
        }
        RequestBody::AddPartitionsToTxn(r) => {
            let ids: Vec<String> = if r.transactions.is_empty() {
                vec![r.v3_and_below_transactional_id.clone()]
            } else {
                r.transactions
                    .iter()
                    .map(|t| t.transactional_id.clone())
                    .collect()
            };
            if ids.iter().any(|id| !txn_write(id)) {
                return whole(ResponseBody::AddPartitionsToTxn(AddPartitionsToTxnResponse {
                    error_code: TXN,
                    results_by_topic_v3_and_below: r
                        .v3_and_below_topics
                        .iter()
                        .map(|t| add_partitions_to_txn_response::AddPartitionsToTxnTopicResult {
                            name: t.name.clone(),
                            results_by_partition: t
                                .partitions
                                .iter()
                                .map(|p| add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult {
                                    partition_index: *p,
                                    partition_error_code: TXN,
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }));
            }
        }
        RequestBody::AddOffsetsToTxn(r)
            if !txn_write(&r.transactional_id) || !group_read(&r.group_id) =>
        {
            let code = if txn_write(&r.transactional_id) {
                GROUP
            } else {
                TXN
            };
            return whole(ResponseBody::AddOffsetsToTxn(AddOffsetsToTxnResponse {
                error_code: code,
                ..Default::default()
            }));
        }
        RequestBody::EndTxn(r) if !txn_write(&r.transactional_id) => {
            return whole(ResponseBody::EndTxn(EndTxnResponse {
                error_code: TXN,
                producer_id: -1,
                producer_epoch: -1,
                ..Default::default()
            }));
        }
        RequestBody::TxnOffsetCommit(r)
            if !txn_write(&r.transactional_id) || !group_read(&r.group_id) =>
        {
            let code = if txn_write(&r.transactional_id) {
                GROUP
            } else {
                TXN
            };
            return whole(ResponseBody::TxnOffsetCommit(TxnOffsetCommitResponse {
                topics: r
                    .topics
                    .iter()
                    .map(
                        |t| txn_offset_commit_response::TxnOffsetCommitResponseTopic {
                            name: t.name.clone(),
                            partitions: t
                                .partitions
                                .iter()
                                .map(|p| {
                                    txn_offset_commit_response::TxnOffsetCommitResponsePartition {
                                        partition_index: p.partition_index,
                                        error_code: code,
                                        ..Default::default()
                                    }
                                })
                                .collect(),
                            ..Default::default()
                        },
                    )
                    .collect(),
                ..Default::default()
            }));
        }
        RequestBody::DescribeLogDirs(_)
        | RequestBody::DescribeTransactions(_)
        | RequestBody::ListTransactions(_)
            if !broker.allowed_on_cluster(client, Operation::Describe) =>
        {
            return Check::Answer(coarse_refusal(body));
        }
        // Per resource; when any one is denied the whole request is answered with the
        // error on every item (coarser than Kafka, which answers item by item).
        RequestBody::DescribeProducers(_)
        | RequestBody::CreatePartitions(_)
        | RequestBody::DeleteRecords(_)
        | RequestBody::DescribeConfigs(_)
        | RequestBody::AlterConfigs(_)
        | RequestBody::IncrementalAlterConfigs(_)
        | RequestBody::OffsetForLeaderEpoch(_)
        | RequestBody::DescribeTopicPartitions(_)
        | RequestBody::ConsumerGroupDescribe(_) => {
            let (operation, resources) = resources_of(body);
            let allowed = resources.iter().all(|(resource_type, name)| {
                broker.allowed(client, operation, *resource_type, name)
            });
            if !allowed {
                return Check::Answer(coarse_refusal(body));
            }
        }
        _ => {}
    }
    Check::Run(denied)
}

/// Kafka's config resource types: 2 a topic, 4 a broker (the cluster's configs).
fn config_resource(resource_type: i8, name: &str) -> (ResourceType, String) {
    if resource_type == 2 {
        (ResourceType::Topic, name.to_string())
    } else {
        (
            ResourceType::Cluster,
            crate::server::access::CLUSTER.to_string(),
        )
    }
}

/// What the per-resource APIs need: the operation and every resource the request names.
fn resources_of(body: &RequestBody) -> (Operation, Vec<(ResourceType, String)>) {
    let topics = |names: Vec<&String>| -> Vec<(ResourceType, String)> {
        names
            .into_iter()
            .map(|n| (ResourceType::Topic, n.clone()))
            .collect()
    };
    match body {
        RequestBody::DescribeProducers(r) => (
            Operation::Read,
            topics(r.topics.iter().map(|t| &t.name).collect()),
        ),
        RequestBody::CreatePartitions(r) => (
            Operation::Alter,
            topics(r.topics.iter().map(|t| &t.name).collect()),
        ),
        RequestBody::DeleteRecords(r) => (
            Operation::Delete,
            topics(r.topics.iter().map(|t| &t.name).collect()),
        ),
        RequestBody::OffsetForLeaderEpoch(r) => (
            Operation::Describe,
            topics(r.topics.iter().map(|t| &t.topic).collect()),
        ),
        RequestBody::DescribeTopicPartitions(r) => (
            Operation::Describe,
            topics(r.topics.iter().map(|t| &t.name).collect()),
        ),
        RequestBody::ConsumerGroupDescribe(r) => (
            Operation::Describe,
            r.group_ids
                .iter()
                .map(|g| (ResourceType::Group, g.clone()))
                .collect(),
        ),
        RequestBody::DescribeConfigs(r) => (
            Operation::DescribeConfigs,
            r.resources
                .iter()
                .map(|res| config_resource(res.resource_type, &res.resource_name))
                .collect(),
        ),
        RequestBody::AlterConfigs(r) => (
            Operation::AlterConfigs,
            r.resources
                .iter()
                .map(|res| config_resource(res.resource_type, &res.resource_name))
                .collect(),
        ),
        RequestBody::IncrementalAlterConfigs(r) => (
            Operation::AlterConfigs,
            r.resources
                .iter()
                .map(|res| config_resource(res.resource_type, &res.resource_name))
                .collect(),
        ),
        _ => (Operation::Describe, Vec::new()),
    }
}

/// The answer to a request refused as a whole: its response with every item's error set.
fn coarse_refusal(body: &RequestBody) -> ResponseBody {
    match body {
        RequestBody::DescribeLogDirs(_) => ResponseBody::DescribeLogDirs(DescribeLogDirsResponse {
            error_code: CLUSTER,
            ..Default::default()
        }),
        RequestBody::DescribeProducers(r) => {
            ResponseBody::DescribeProducers(DescribeProducersResponse {
                topics: r
                    .topics
                    .iter()
                    .map(|t| describe_producers_response::TopicResponse {
                        name: t.name.clone(),
                        partitions: t
                            .partition_indexes
                            .iter()
                            .map(|p| describe_producers_response::PartitionResponse {
                                partition_index: *p,
                                error_code: TOPIC,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::DescribeTransactions(r) => {
            ResponseBody::DescribeTransactions(DescribeTransactionsResponse {
                transaction_states: r
                    .transactional_ids
                    .iter()
                    .map(|id| describe_transactions_response::TransactionState {
                        transactional_id: id.clone(),
                        error_code: TXN,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::ListTransactions(_) => {
            ResponseBody::ListTransactions(ListTransactionsResponse {
                error_code: CLUSTER,
                ..Default::default()
            })
        }
        RequestBody::CreatePartitions(r) => {
            ResponseBody::CreatePartitions(CreatePartitionsResponse {
                results: r
                    .topics
                    .iter()
                    .map(
                        |t| create_partitions_response::CreatePartitionsTopicResult {
                            name: t.name.clone(),
                            error_code: TOPIC,
                            ..Default::default()
                        },
                    )
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::DeleteRecords(r) => ResponseBody::DeleteRecords(DeleteRecordsResponse {
            topics: r
                .topics
                .iter()
                .map(|t| delete_records_response::DeleteRecordsTopicResult {
                    name: t.name.clone(),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| delete_records_response::DeleteRecordsPartitionResult {
                            partition_index: p.partition_index,
                            low_watermark: -1,
                            error_code: TOPIC,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::DescribeConfigs(r) => ResponseBody::DescribeConfigs(DescribeConfigsResponse {
            results: r
                .resources
                .iter()
                .map(|res| describe_configs_response::DescribeConfigsResult {
                    error_code: resource_code(res.resource_type),
                    resource_type: res.resource_type,
                    resource_name: res.resource_name.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::AlterConfigs(r) => ResponseBody::AlterConfigs(AlterConfigsResponse {
            responses: r
                .resources
                .iter()
                .map(|res| alter_configs_response::AlterConfigsResourceResponse {
                    error_code: resource_code(res.resource_type),
                    resource_type: res.resource_type,
                    resource_name: res.resource_name.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::IncrementalAlterConfigs(r) => {
            ResponseBody::IncrementalAlterConfigs(IncrementalAlterConfigsResponse {
                responses: r
                    .resources
                    .iter()
                    .map(
                        |res| incremental_alter_configs_response::AlterConfigsResourceResponse {
                            error_code: resource_code(res.resource_type),
                            resource_type: res.resource_type,
                            resource_name: res.resource_name.clone(),
                            ..Default::default()
                        },
                    )
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::OffsetForLeaderEpoch(r) => {
            ResponseBody::OffsetForLeaderEpoch(OffsetForLeaderEpochResponse {
                topics: r
                    .topics
                    .iter()
                    .map(
                        |t| offset_for_leader_epoch_response::OffsetForLeaderTopicResult {
                            topic: t.topic.clone(),
                            partitions: t
                                .partitions
                                .iter()
                                .map(|p| offset_for_leader_epoch_response::EpochEndOffset {
                                    partition: p.partition,
                                    error_code: TOPIC,
                                    leader_epoch: -1,
                                    end_offset: -1,
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        },
                    )
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::DescribeTopicPartitions(r) => {
            ResponseBody::DescribeTopicPartitions(DescribeTopicPartitionsResponse {
                topics: r
                    .topics
                    .iter()
                    .map(|t| {
                        describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic {
                            error_code: TOPIC,
                            name: Some(t.name.clone()),
                            ..Default::default()
                        }
                    })
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::ConsumerGroupDescribe(r) => {
            ResponseBody::ConsumerGroupDescribe(ConsumerGroupDescribeResponse {
                groups: r
                    .group_ids
                    .iter()
                    .map(|g| consumer_group_describe_response::DescribedGroup {
                        group_id: g.clone(),
                        error_code: GROUP,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        _ => ResponseBody::ListTransactions(ListTransactionsResponse {
            error_code: CLUSTER,
            ..Default::default()
        }),
    }
}

/// Kafka's config resource types: 2 is a topic, 4 a broker.
fn resource_code(resource_type: i8) -> i16 {
    if resource_type == 2 { TOPIC } else { CLUSTER }
}

impl Broker {
    /// Whether `client` may write to some topic (InitProducerId without a transactional id,
    /// KIP-679: idempotence needs only a topic it may write).
    fn any_topic_writable(&self, client: &Client<'_>) -> bool {
        let names: Vec<String> = self
            .metadata
            .read(|s| s.topics().map(|t| t.name.clone()).collect());
        names
            .iter()
            .any(|name| self.topic_allowed(client, Operation::Write, name))
    }
}

/// Puts what `check` took out back into the response, and hides what may not be described.
pub fn restore(broker: &Broker, client: &Client<'_>, denied: Denied, response: &mut ResponseBody) {
    if !broker.authorizes() {
        return;
    }
    match response {
        ResponseBody::Fetch(r) => {
            for (topic, topic_id, partitions) in denied.topics {
                r.responses.push(fetch_response::FetchableTopicResponse {
                    topic,
                    topic_id,
                    partitions: partitions
                        .into_iter()
                        .map(|partition_index| fetch_response::PartitionData {
                            partition_index,
                            error_code: denied.code,
                            high_watermark: -1,
                            last_stable_offset: -1,
                            log_start_offset: -1,
                            // Empty, not null: clients read a null record set as corrupt.
                            records: Some(Default::default()),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                });
            }
        }
        ResponseBody::ListOffsets(r) => {
            for (name, _, partitions) in denied.topics {
                r.topics
                    .push(list_offsets_response::ListOffsetsTopicResponse {
                        name,
                        partitions: partitions
                            .into_iter()
                            .map(|partition_index| {
                                list_offsets_response::ListOffsetsPartitionResponse {
                                    partition_index,
                                    error_code: denied.code,
                                    timestamp: -1,
                                    offset: -1,
                                    leader_epoch: -1,
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        ..Default::default()
                    });
            }
        }
        ResponseBody::OffsetCommit(r) => {
            for (name, topic_id, partitions) in denied.topics {
                r.topics
                    .push(offset_commit_response::OffsetCommitResponseTopic {
                        name,
                        topic_id,
                        partitions: partitions
                            .into_iter()
                            .map(|partition_index| {
                                offset_commit_response::OffsetCommitResponsePartition {
                                    partition_index,
                                    error_code: denied.code,
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        ..Default::default()
                    });
            }
        }
        ResponseBody::Metadata(r) => {
            if denied.filter {
                // Topics listed because all were asked for: only the describable ones.
                r.topics.retain(|t| {
                    t.name
                        .as_deref()
                        .is_none_or(|name| broker.topic_allowed_quietly(client, name))
                });
            }
            for name in denied.names {
                r.topics.push(metadata_response::MetadataResponseTopic {
                    error_code: TOPIC,
                    name: Some(name),
                    ..Default::default()
                });
            }
            for topic_id in denied.ids {
                r.topics.push(metadata_response::MetadataResponseTopic {
                    error_code: TOPIC,
                    name: None,
                    topic_id,
                    ..Default::default()
                });
            }
        }
        ResponseBody::CreateTopics(r) => {
            for name in denied.names {
                r.topics.push(create_topics_response::CreatableTopicResult {
                    name,
                    error_code: TOPIC,
                    error_message: Some("Authorization failed.".into()),
                    num_partitions: -1,
                    replication_factor: -1,
                    ..Default::default()
                });
            }
        }
        ResponseBody::DeleteTopics(r) => {
            for name in denied.names {
                r.responses
                    .push(delete_topics_response::DeletableTopicResult {
                        name: Some(name),
                        error_code: TOPIC,
                        ..Default::default()
                    });
            }
            for topic_id in denied.ids {
                r.responses
                    .push(delete_topics_response::DeletableTopicResult {
                        name: None,
                        topic_id,
                        error_code: TOPIC,
                        ..Default::default()
                    });
            }
        }
        ResponseBody::DescribeGroups(r) => {
            for group_id in denied.groups {
                r.groups.push(describe_groups_response::DescribedGroup {
                    error_code: GROUP,
                    group_id,
                    ..Default::default()
                });
            }
        }
        ResponseBody::OffsetFetch(r) => {
            if denied.filter {
                let describable = |name: &str| broker.topic_allowed_quietly(client, name);
                r.topics.retain(|t| describable(&t.name));
                for group in &mut r.groups {
                    group
                        .topics
                        .retain(|t| describable(&topic_name(broker, &t.name, &t.topic_id)));
                }
            }
            // As in Kafka, an answer that failed whole (the coordinator is loading, say) stays
            // as it is: the client asks again.
            for (group_id, name, topic_id, partitions) in denied.offset_topics {
                if r.groups.is_empty() && r.error_code == 0 {
                    r.topics
                        .push(offset_fetch_response::OffsetFetchResponseTopic {
                            name,
                            partitions: partitions
                                .into_iter()
                                .map(|p| offset_fetch::refused_partition(p, TOPIC))
                                .collect(),
                            ..Default::default()
                        });
                } else if let Some(group) = r
                    .groups
                    .iter_mut()
                    .find(|g| g.group_id == group_id && g.error_code == 0)
                {
                    group
                        .topics
                        .push(offset_fetch_response::OffsetFetchResponseTopics {
                            name,
                            topic_id,
                            partitions: partitions
                                .into_iter()
                                .map(|p| offset_fetch::refused_partition_v8(p, TOPIC))
                                .collect(),
                            ..Default::default()
                        });
                }
            }
            for group_id in denied.groups {
                r.groups
                    .push(offset_fetch_response::OffsetFetchResponseGroup {
                        group_id,
                        error_code: GROUP,
                        ..Default::default()
                    });
            }
        }
        ResponseBody::DeleteGroups(r) => {
            for group_id in denied.groups {
                r.results
                    .push(delete_groups_response::DeletableGroupResult {
                        group_id,
                        error_code: GROUP,
                        ..Default::default()
                    });
            }
        }
        ResponseBody::ListGroups(r) if denied.filter => {
            r.groups.retain(|g| {
                broker.allowed_quietly(
                    client,
                    Operation::Describe,
                    ResourceType::Group,
                    &g.group_id,
                )
            });
        }
        _ => {}
    }
}
