//! Topics: names and ids, partition counts, configs, and the version that moves with them.

use super::index::PartitionState;
use super::limits::{Limits, topic_name_is_legal};
use crate::ids::TopicPartition;
use imbl::OrdMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    pub name: String,
    pub id: Uuid,
    pub partitions: Vec<PartitionState>,
    pub configs: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TopicError {
    AlreadyExists,
    NotFound,
    /// Fewer than one, no more than the topic has, or more than a topic may have.
    InvalidPartitions,
    /// Not a legal Kafka topic name.
    InvalidName,
    /// More partitions than the cluster may hold.
    TooManyPartitions,
    /// Too many configs, or a key or value too long.
    InvalidConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topics {
    /// Persistent maps of shared topics: a copy of the state shares them (see
    /// `PartitionState::index`); a topic changed after a copy is copied alone.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    pub(super) by_name: OrdMap<String, Arc<Topic>>,
    #[serde(deserialize_with = "super::persistent::ord_map")]
    pub(super) names: OrdMap<Uuid, String>,
    /// Moves whenever topics or their partition counts change: views derived from the topics
    /// (consumer groups' resolved subscriptions) are cached under it. Replicated like the
    /// rest, so every node has the same version for the same topics.
    pub(super) version: u64,
}

impl Topics {
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn get(&self, name: &str) -> Option<&Topic> {
        self.by_name.get(name).map(|t| &**t)
    }

    pub fn by_id(&self, id: &Uuid) -> Option<&Topic> {
        self.names.get(id).and_then(|n| self.get(n))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Topic> {
        self.by_name.values().map(|t| &**t)
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Topic> {
        self.by_name.get_mut(name).map(Arc::make_mut)
    }

    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionState> {
        let topic = self.by_id(&tp.topic_id)?;
        usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get(p))
    }

    pub(super) fn partition_mut(&mut self, tp: &TopicPartition) -> Option<&mut PartitionState> {
        let name = self.names.get(&tp.topic_id)?;
        let topic = Arc::make_mut(self.by_name.get_mut(name)?);
        usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get_mut(p))
    }

    /// Partitions of all topics together.
    pub fn partition_count(&self) -> u64 {
        self.by_name
            .values()
            .map(|t| t.partitions.len() as u64)
            .sum()
    }

    /// Whether `partition` of the topic named `name` exists.
    pub fn has_partition(&self, name: &str, partition: i32) -> bool {
        self.get(name)
            .is_some_and(|t| usize::try_from(partition).is_ok_and(|p| p < t.partitions.len()))
    }

    pub(super) fn create(
        &mut self,
        name: String,
        id: Uuid,
        partitions: i32,
        configs: BTreeMap<String, String>,
        limits: &Limits,
    ) -> Result<(), TopicError> {
        if !topic_name_is_legal(&name) {
            return Err(TopicError::InvalidName);
        }
        if self.by_name.contains_key(&name) || self.names.contains_key(&id) {
            return Err(TopicError::AlreadyExists);
        }
        if !limits.partitions_per_topic_allow(i64::from(partitions)) {
            return Err(TopicError::InvalidPartitions);
        }
        if !limits.partitions_allow(self.partition_count(), partitions as u64) {
            return Err(TopicError::TooManyPartitions);
        }
        let entries = configs.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())));
        if !limits.configs_allow(configs.len(), entries) {
            return Err(TopicError::InvalidConfig);
        }
        self.names.insert(id, name.clone());
        self.version += 1;
        self.by_name.insert(
            name.clone(),
            Arc::new(Topic {
                name,
                id,
                partitions: vec![PartitionState::default(); partitions as usize],
                configs,
            }),
        );
        Ok(())
    }

    /// Removes the topic and returns it (its id: what else refers to it is cleaned up by the
    /// caller).
    pub(super) fn delete(&mut self, name: &str) -> Result<Topic, TopicError> {
        let topic = self.by_name.remove(name).ok_or(TopicError::NotFound)?;
        self.version += 1;
        self.names.remove(&topic.id);
        Ok(Arc::unwrap_or_clone(topic))
    }

    pub(super) fn create_partitions(
        &mut self,
        name: &str,
        total: i32,
        limits: &Limits,
    ) -> Result<(), TopicError> {
        let all = self.partition_count();
        let topic = self.get_mut(name).ok_or(TopicError::NotFound)?;
        let current = topic.partitions.len();
        if i64::from(total) <= current as i64 || !limits.partitions_per_topic_allow(total.into()) {
            return Err(TopicError::InvalidPartitions);
        }
        let total = total as usize;
        if !limits.partitions_allow(all, (total - current) as u64) {
            return Err(TopicError::TooManyPartitions);
        }
        topic.partitions.resize(total, PartitionState::default());
        self.version += 1;
        Ok(())
    }

    /// Sets (`Some`) or removes (`None`) configs.
    pub(super) fn alter_configs(
        &mut self,
        name: &str,
        changes: Vec<(String, Option<String>)>,
        limits: &Limits,
    ) -> Result<(), TopicError> {
        let topic = self.get_mut(name).ok_or(TopicError::NotFound)?;
        // What is set is checked, and the count the topic ends with: removing a config is
        // always allowed, so a topic over a limit can be brought back under it.
        let mut keys: std::collections::BTreeSet<&str> =
            topic.configs.keys().map(String::as_str).collect();
        for (key, value) in &changes {
            match value {
                Some(_) => keys.insert(key),
                None => keys.remove(key.as_str()),
            };
        }
        let set = changes
            .iter()
            .filter_map(|(k, v)| v.as_deref().map(|v| (k.as_str(), Some(v))));
        let grows = keys.len() > topic.configs.len();
        if (grows && !limits.configs_allow(keys.len(), set.clone()))
            || !limits.configs_allow(0, set)
        {
            return Err(TopicError::InvalidConfig);
        }
        for (key, value) in changes {
            match value {
                Some(v) => topic.configs.insert(key, v),
                None => topic.configs.remove(&key),
            };
        }
        Ok(())
    }
}
