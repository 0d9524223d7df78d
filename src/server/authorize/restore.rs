//! After a handler runs: what `check` took out goes back into the response with its error, and
//! what the client may not describe is hidden from listings.

use super::*;

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
