//! The APIs refused whole when any resource they name is denied (configs, DeleteRecords,
//! CreatePartitions, ...): which resources a request names, and its refusal in its own shape.

use super::*;

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
pub(super) fn resources_of(body: &RequestBody) -> (Operation, Vec<(ResourceType, String)>) {
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
pub(super) fn coarse_refusal(body: &RequestBody) -> ResponseBody {
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
