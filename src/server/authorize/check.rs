//! The check before a handler runs: what the client may not touch is taken out of the
//! request, or the whole request is answered with the authorization error in its own shape.

use super::coarse::{coarse_refusal, resources_of};
use super::*;

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
