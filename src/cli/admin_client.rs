//! The Kafka requests the admin subcommands make, over floe's own codec: a connection per
//! request (an operator's command makes a handful), to the bootstrap broker, a partition's
//! leader or a group's coordinator, as Kafka's admin client addresses them.

use anyhow::{Context, bail};
use floe::client::{call, connect_as};
use floe::clock::Clock;
use floe::protocol::ErrorCode;
use floe::protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use floe::protocol::messages::create_topics_response::CreatableTopicResult;
use floe::protocol::messages::delete_topics_request::DeleteTopicState;
use floe::protocol::messages::delete_topics_response::DeletableTopicResult;
use floe::protocol::messages::describe_configs_request::DescribeConfigsResource;
use floe::protocol::messages::describe_configs_response::DescribeConfigsResult;
use floe::protocol::messages::describe_groups_response::DescribedGroup;
use floe::protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use floe::protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use floe::protocol::messages::list_groups_response::ListedGroup;
use floe::protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use floe::protocol::messages::metadata_request::MetadataRequestTopic;
use floe::protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use floe::protocol::messages::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// The API versions these commands speak (floe supports each; see `server::api::supported`).
const METADATA: i16 = 12;
const CREATE_TOPICS: i16 = 7;
const DELETE_TOPICS: i16 = 6;
const DESCRIBE_CONFIGS: i16 = 4;
const INCREMENTAL_ALTER_CONFIGS: i16 = 1;
const LIST_OFFSETS: i16 = 7;
const FIND_COORDINATOR: i16 = 3;
const LIST_GROUPS: i16 = 5;
const DESCRIBE_GROUPS: i16 = 5;
const DELETE_GROUPS: i16 = 2;
const OFFSET_FETCH: i16 = 7;
const OFFSET_COMMIT: i16 = 8;
const DESCRIBE_CLUSTER: i16 = 1;
const DESCRIBE_CLIENT_QUOTAS: i16 = 1;
const ALTER_CLIENT_QUOTAS: i16 = 1;

/// Kafka's config resource type of a topic.
pub const TOPIC_RESOURCE: i8 = 2;

/// ListOffsets' special timestamps.
pub const EARLIEST: i64 = -2;
pub const LATEST: i64 = -1;

pub struct AdminClient {
    bootstrap: String,
    timeout: Duration,
    clock: Clock,
}

/// A Kafka error code as an operator reads it: its name and number.
pub fn error_name(code: i16) -> String {
    match ErrorCode::from_code(code) {
        Some(e) => format!("{e:?} ({code})"),
        None => format!("error code {code}"),
    }
}

/// `Err` naming `what` when `code` is an error.
pub fn check(code: i16, message: Option<&str>, what: &str) -> anyhow::Result<()> {
    if code == 0 {
        return Ok(());
    }
    match message {
        Some(m) if !m.is_empty() => bail!("{what}: {}: {m}", error_name(code)),
        _ => bail!("{what}: {}", error_name(code)),
    }
}

impl AdminClient {
    pub fn new(bootstrap: String, timeout: Duration) -> AdminClient {
        AdminClient {
            bootstrap,
            timeout,
            clock: Clock::system(),
        }
    }

    /// One request to `addr` and its response.
    async fn call_at(
        &self,
        addr: &str,
        version: i16,
        body: RequestBody,
    ) -> anyhow::Result<ResponseBody> {
        let api = body.api_key();
        let exchange = async {
            let (mut tx, mut rx) = connect_as(addr, "floe-cli").await?;
            call(&mut tx, &mut rx, version, body).await
        };
        match self.clock.timeout(self.timeout, exchange).await {
            Ok(answer) => answer.with_context(|| format!("{api:?} request to {addr}")),
            Err(_) => bail!(
                "{api:?} request to {addr}: no answer within {:?}",
                self.timeout
            ),
        }
    }

    async fn call(&self, version: i16, body: RequestBody) -> anyhow::Result<ResponseBody> {
        let bootstrap = self.bootstrap.clone();
        self.call_at(&bootstrap, version, body).await
    }

    /// Metadata of `topics` (`None`: every topic).
    pub async fn metadata(&self, topics: Option<Vec<String>>) -> anyhow::Result<MetadataResponse> {
        let request = MetadataRequest {
            topics: topics.map(|names| {
                names
                    .into_iter()
                    .map(|name| MetadataRequestTopic {
                        name: Some(name),
                        ..Default::default()
                    })
                    .collect()
            }),
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        match self.call(METADATA, RequestBody::Metadata(request)).await? {
            ResponseBody::Metadata(m) => Ok(m),
            other => bail!("unexpected answer to Metadata: {other:?}"),
        }
    }

    pub async fn create_topic(
        &self,
        name: &str,
        partitions: i32,
        configs: &BTreeMap<String, String>,
    ) -> anyhow::Result<CreatableTopicResult> {
        let request = CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: name.to_string(),
                num_partitions: partitions,
                replication_factor: -1,
                configs: configs
                    .iter()
                    .map(|(name, value)| CreatableTopicConfig {
                        name: name.clone(),
                        value: Some(value.clone()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            timeout_ms: self.timeout.as_millis() as i32,
            ..Default::default()
        };
        match self
            .call(CREATE_TOPICS, RequestBody::CreateTopics(request))
            .await?
        {
            ResponseBody::CreateTopics(r) => r
                .topics
                .into_iter()
                .next()
                .context("CreateTopics answered no topic"),
            other => bail!("unexpected answer to CreateTopics: {other:?}"),
        }
    }

    pub async fn delete_topic(&self, name: &str) -> anyhow::Result<DeletableTopicResult> {
        let request = DeleteTopicsRequest {
            topics: vec![DeleteTopicState {
                name: Some(name.to_string()),
                ..Default::default()
            }],
            timeout_ms: self.timeout.as_millis() as i32,
            ..Default::default()
        };
        match self
            .call(DELETE_TOPICS, RequestBody::DeleteTopics(request))
            .await?
        {
            ResponseBody::DeleteTopics(r) => r
                .responses
                .into_iter()
                .next()
                .context("DeleteTopics answered no topic"),
            other => bail!("unexpected answer to DeleteTopics: {other:?}"),
        }
    }

    pub async fn describe_topic_configs(
        &self,
        name: &str,
    ) -> anyhow::Result<DescribeConfigsResult> {
        let request = DescribeConfigsRequest {
            resources: vec![DescribeConfigsResource {
                resource_type: TOPIC_RESOURCE,
                resource_name: name.to_string(),
                configuration_keys: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        match self
            .call(DESCRIBE_CONFIGS, RequestBody::DescribeConfigs(request))
            .await?
        {
            ResponseBody::DescribeConfigs(r) => r
                .results
                .into_iter()
                .next()
                .context("DescribeConfigs answered no resource"),
            other => bail!("unexpected answer to DescribeConfigs: {other:?}"),
        }
    }

    /// Sets and removes a topic's configs (Kafka's incremental SET and DELETE).
    pub async fn alter_topic_configs(
        &self,
        name: &str,
        set: &BTreeMap<String, String>,
        delete: &[String],
    ) -> anyhow::Result<AlterConfigsResourceResponse> {
        const SET: i8 = 0;
        const DELETE: i8 = 1;
        let configs = set
            .iter()
            .map(|(name, value)| AlterableConfig {
                name: name.clone(),
                config_operation: SET,
                value: Some(value.clone()),
                ..Default::default()
            })
            .chain(delete.iter().map(|name| AlterableConfig {
                name: name.clone(),
                config_operation: DELETE,
                value: None,
                ..Default::default()
            }))
            .collect();
        let request = IncrementalAlterConfigsRequest {
            resources: vec![AlterConfigsResource {
                resource_type: TOPIC_RESOURCE,
                resource_name: name.to_string(),
                configs,
                ..Default::default()
            }],
            ..Default::default()
        };
        match self
            .call(
                INCREMENTAL_ALTER_CONFIGS,
                RequestBody::IncrementalAlterConfigs(request),
            )
            .await?
        {
            ResponseBody::IncrementalAlterConfigs(r) => r
                .responses
                .into_iter()
                .next()
                .context("IncrementalAlterConfigs answered no resource"),
            other => bail!("unexpected answer to IncrementalAlterConfigs: {other:?}"),
        }
    }

    /// The offset at `timestamp` (`EARLIEST`, `LATEST`, or ms) of each partition of `topic`,
    /// asked of each partition's leader; a partition without one is an error.
    pub async fn list_offsets(
        &self,
        metadata: &MetadataResponse,
        topic: &str,
        partitions: &[i32],
        timestamp: i64,
    ) -> anyhow::Result<BTreeMap<i32, i64>> {
        let brokers: BTreeMap<i32, String> = metadata
            .brokers
            .iter()
            .map(|b| (b.node_id, format!("{}:{}", b.host, b.port)))
            .collect();
        let leaders: BTreeMap<i32, i32> = metadata
            .topics
            .iter()
            .filter(|t| t.name.as_deref() == Some(topic))
            .flat_map(|t| t.partitions.iter())
            .map(|p| (p.partition_index, p.leader_id))
            .collect();
        let mut by_leader: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for p in partitions {
            let addr = leaders
                .get(p)
                .and_then(|leader| brokers.get(leader))
                .with_context(|| format!("{topic}-{p} has no leader"))?;
            by_leader.entry(addr).or_default().push(*p);
        }
        let mut offsets = BTreeMap::new();
        for (addr, partitions) in by_leader {
            let request = ListOffsetsRequest {
                replica_id: -1,
                topics: vec![ListOffsetsTopic {
                    name: topic.to_string(),
                    partitions: partitions
                        .iter()
                        .map(|p| ListOffsetsPartition {
                            partition_index: *p,
                            current_leader_epoch: -1,
                            timestamp,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }],
                ..Default::default()
            };
            let answer = self
                .call_at(addr, LIST_OFFSETS, RequestBody::ListOffsets(request))
                .await?;
            let ResponseBody::ListOffsets(r) = answer else {
                bail!("unexpected answer to ListOffsets: {answer:?}");
            };
            for p in r.topics.into_iter().flat_map(|t| t.partitions) {
                check(
                    p.error_code,
                    None,
                    &format!("offsets of {topic}-{}", p.partition_index),
                )?;
                offsets.insert(p.partition_index, p.offset);
            }
        }
        Ok(offsets)
    }

    /// The address of `group`'s coordinator.
    pub async fn coordinator(&self, group: &str) -> anyhow::Result<String> {
        let request = FindCoordinatorRequest {
            key: group.to_string(),
            key_type: 0,
            ..Default::default()
        };
        match self
            .call(FIND_COORDINATOR, RequestBody::FindCoordinator(request))
            .await?
        {
            ResponseBody::FindCoordinator(r) => {
                check(
                    r.error_code,
                    r.error_message.as_deref(),
                    &format!("the coordinator of group {group}"),
                )?;
                Ok(format!("{}:{}", r.host, r.port))
            }
            other => bail!("unexpected answer to FindCoordinator: {other:?}"),
        }
    }

    /// Every group of the cluster: each broker's list, merged (a group is listed by the
    /// broker that coordinates it).
    pub async fn list_groups(&self) -> anyhow::Result<Vec<ListedGroup>> {
        let metadata = self.metadata(Some(Vec::new())).await?;
        let mut groups: BTreeMap<String, ListedGroup> = BTreeMap::new();
        for broker in &metadata.brokers {
            let addr = format!("{}:{}", broker.host, broker.port);
            let request = RequestBody::ListGroups(ListGroupsRequest::default());
            match self.call_at(&addr, LIST_GROUPS, request).await? {
                ResponseBody::ListGroups(r) => {
                    check(r.error_code, None, &format!("the groups of broker {addr}"))?;
                    for g in r.groups {
                        groups.insert(g.group_id.clone(), g);
                    }
                }
                other => bail!("unexpected answer to ListGroups: {other:?}"),
            }
        }
        Ok(groups.into_values().collect())
    }

    pub async fn describe_group(&self, group: &str) -> anyhow::Result<DescribedGroup> {
        let coordinator = self.coordinator(group).await?;
        let request = DescribeGroupsRequest {
            groups: vec![group.to_string()],
            ..Default::default()
        };
        match self
            .call_at(
                &coordinator,
                DESCRIBE_GROUPS,
                RequestBody::DescribeGroups(request),
            )
            .await?
        {
            ResponseBody::DescribeGroups(r) => {
                let described = r
                    .groups
                    .into_iter()
                    .next()
                    .context("DescribeGroups answered no group")?;
                check(
                    described.error_code,
                    described.error_message.as_deref(),
                    &format!("group {group}"),
                )?;
                Ok(described)
            }
            other => bail!("unexpected answer to DescribeGroups: {other:?}"),
        }
    }

    /// `group`'s committed offsets: (topic, partition) → offset.
    pub async fn committed_offsets(
        &self,
        group: &str,
    ) -> anyhow::Result<BTreeMap<(String, i32), i64>> {
        let coordinator = self.coordinator(group).await?;
        let request = OffsetFetchRequest {
            group_id: group.to_string(),
            topics: None,
            ..Default::default()
        };
        match self
            .call_at(
                &coordinator,
                OFFSET_FETCH,
                RequestBody::OffsetFetch(request),
            )
            .await?
        {
            ResponseBody::OffsetFetch(r) => {
                check(r.error_code, None, &format!("the offsets of group {group}"))?;
                let mut offsets = BTreeMap::new();
                for topic in r.topics {
                    for p in topic.partitions {
                        if p.error_code == 0 && p.committed_offset >= 0 {
                            offsets.insert(
                                (topic.name.clone(), p.partition_index),
                                p.committed_offset,
                            );
                        }
                    }
                }
                Ok(offsets)
            }
            other => bail!("unexpected answer to OffsetFetch: {other:?}"),
        }
    }

    /// Commits `offsets` for `group` as an admin does: no member, no generation (Kafka
    /// accepts this only while the group has no active member).
    pub async fn commit_offsets(
        &self,
        group: &str,
        topic: &str,
        offsets: &BTreeMap<i32, i64>,
    ) -> anyhow::Result<()> {
        let coordinator = self.coordinator(group).await?;
        let request = OffsetCommitRequest {
            group_id: group.to_string(),
            generation_id_or_member_epoch: -1,
            member_id: String::new(),
            retention_time_ms: -1,
            topics: vec![OffsetCommitRequestTopic {
                name: topic.to_string(),
                partitions: offsets
                    .iter()
                    .map(|(p, offset)| OffsetCommitRequestPartition {
                        partition_index: *p,
                        committed_offset: *offset,
                        committed_leader_epoch: -1,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        match self
            .call_at(
                &coordinator,
                OFFSET_COMMIT,
                RequestBody::OffsetCommit(request),
            )
            .await?
        {
            ResponseBody::OffsetCommit(r) => {
                for p in r.topics.iter().flat_map(|t| t.partitions.iter()) {
                    check(
                        p.error_code,
                        None,
                        &format!("committing {topic}-{} for group {group}", p.partition_index),
                    )?;
                }
                Ok(())
            }
            other => bail!("unexpected answer to OffsetCommit: {other:?}"),
        }
    }

    pub async fn delete_group(&self, group: &str) -> anyhow::Result<()> {
        let coordinator = self.coordinator(group).await?;
        let request = DeleteGroupsRequest {
            groups_names: vec![group.to_string()],
            ..Default::default()
        };
        match self
            .call_at(
                &coordinator,
                DELETE_GROUPS,
                RequestBody::DeleteGroups(request),
            )
            .await?
        {
            ResponseBody::DeleteGroups(r) => {
                let result = r
                    .results
                    .first()
                    .context("DeleteGroups answered no group")?;
                check(result.error_code, None, &format!("deleting group {group}"))
            }
            other => bail!("unexpected answer to DeleteGroups: {other:?}"),
        }
    }

    pub async fn describe_cluster(&self) -> anyhow::Result<DescribeClusterResponse> {
        let request = DescribeClusterRequest {
            endpoint_type: 1,
            ..Default::default()
        };
        match self
            .call(DESCRIBE_CLUSTER, RequestBody::DescribeCluster(request))
            .await?
        {
            ResponseBody::DescribeCluster(r) => {
                check(r.error_code, r.error_message.as_deref(), "DescribeCluster")?;
                Ok(r)
            }
            other => bail!("unexpected answer to DescribeCluster: {other:?}"),
        }
    }

    /// The client quotas of the entities that have every part of `parts` (`(type, name)`,
    /// `None`: the type's default), and only those parts when `strict`; every entity when
    /// `parts` is empty.
    pub async fn describe_client_quotas(
        &self,
        parts: &[(String, Option<String>)],
        strict: bool,
    ) -> anyhow::Result<Vec<describe_client_quotas_response::EntryData>> {
        let request = DescribeClientQuotasRequest {
            components: parts
                .iter()
                .map(
                    |(entity_type, name)| describe_client_quotas_request::ComponentData {
                        entity_type: entity_type.clone(),
                        // Kafka's match types: 0 a name, 1 the default.
                        match_type: if name.is_some() { 0 } else { 1 },
                        r#match: name.clone(),
                        ..Default::default()
                    },
                )
                .collect(),
            strict,
            ..Default::default()
        };
        match self
            .call(
                DESCRIBE_CLIENT_QUOTAS,
                RequestBody::DescribeClientQuotas(request),
            )
            .await?
        {
            ResponseBody::DescribeClientQuotas(r) => {
                check(
                    r.error_code,
                    r.error_message.as_deref(),
                    "DescribeClientQuotas",
                )?;
                Ok(r.entries.unwrap_or_default())
            }
            other => bail!("unexpected answer to DescribeClientQuotas: {other:?}"),
        }
    }

    /// Sets (`Some`) or removes (`None`) quotas of one entity.
    pub async fn alter_client_quotas(
        &self,
        parts: &[(String, Option<String>)],
        changes: &[(String, Option<f64>)],
    ) -> anyhow::Result<()> {
        let request = AlterClientQuotasRequest {
            entries: vec![alter_client_quotas_request::EntryData {
                entity: parts
                    .iter()
                    .map(
                        |(entity_type, name)| alter_client_quotas_request::EntityData {
                            entity_type: entity_type.clone(),
                            entity_name: name.clone(),
                            ..Default::default()
                        },
                    )
                    .collect(),
                ops: changes
                    .iter()
                    .map(|(key, value)| alter_client_quotas_request::OpData {
                        key: key.clone(),
                        value: value.unwrap_or(0.0),
                        remove: value.is_none(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        match self
            .call(ALTER_CLIENT_QUOTAS, RequestBody::AlterClientQuotas(request))
            .await?
        {
            ResponseBody::AlterClientQuotas(r) => {
                let entry = r
                    .entries
                    .into_iter()
                    .next()
                    .context("AlterClientQuotas answered no entity")?;
                check(
                    entry.error_code,
                    entry.error_message.as_deref(),
                    "AlterClientQuotas",
                )
            }
            other => bail!("unexpected answer to AlterClientQuotas: {other:?}"),
        }
    }
}
