//! Consumer groups' committed offsets (membership is soft state on the coordinator).

use super::limits::Limits;
use crate::ids::Offset;
use imbl::OrdMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupOffset {
    pub offset: Offset,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
    pub commit_timestamp: i64,
}

impl GroupOffset {
    /// Records between this committed offset and a partition's high watermark.
    pub fn lag(&self, high_watermark: Offset) -> i64 {
        (high_watermark - self.offset).max(0)
    }
}

/// Why an offset commit was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OffsetCommitError {
    UnknownTopicOrPartition,
    /// Empty, or longer than `Limits::group_id_bytes_max`.
    InvalidGroupId,
    /// Longer than `Limits::offset_metadata_bytes_max`.
    MetadataTooLarge,
    /// A new group while `Limits::groups_max` groups have offsets.
    TooManyGroups,
}

/// Committed offsets by group, then by (topic name, partition).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupOffsets {
    /// Persistent maps: a copy of the state shares them (see `PartitionState::index`).
    #[serde(deserialize_with = "super::persistent::ord_map_of_maps")]
    pub(super) by_group: OrdMap<String, OrdMap<(String, i32), GroupOffset>>,
}

impl GroupOffsets {
    pub fn get(&self, group: &str, topic: &str, partition: i32) -> Option<&GroupOffset> {
        self.by_group
            .get(group)
            .and_then(|g| g.get(&(topic.to_string(), partition)))
    }

    /// The groups that have committed offsets.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.by_group.keys().map(String::as_str)
    }

    pub fn of(&self, group: &str) -> impl Iterator<Item = (&(String, i32), &GroupOffset)> {
        self.by_group.get(group).into_iter().flat_map(|g| g.iter())
    }

    /// Stores the offset; the caller has checked that the partition exists (so a group holds
    /// at most one offset per partition of the cluster).
    pub(super) fn commit(
        &mut self,
        group: String,
        topic: String,
        partition: i32,
        offset: GroupOffset,
        limits: &Limits,
    ) -> Result<(), OffsetCommitError> {
        if !self.by_group.contains_key(&group) && self.by_group.len() >= limits.groups_max as usize
        {
            return Err(OffsetCommitError::TooManyGroups);
        }
        self.by_group
            .entry(group)
            .or_default()
            .insert((topic, partition), offset);
        Ok(())
    }

    /// Forgets the group's offsets (all, or the listed partitions); whether it had any.
    pub(super) fn delete(&mut self, group: &str, partitions: Option<Vec<(String, i32)>>) -> bool {
        match (self.by_group.get_mut(group), partitions) {
            (None, _) => false,
            (Some(_), None) => self.by_group.remove(group).is_some(),
            (Some(offsets), Some(partitions)) => {
                for key in &partitions {
                    offsets.remove(key);
                }
                if offsets.is_empty() {
                    self.by_group.remove(group);
                }
                true
            }
        }
    }

    /// Forgets every group's offsets on a deleted topic.
    pub(super) fn forget_topic(&mut self, name: &str) {
        let groups: Vec<String> = self.by_group.keys().cloned().collect();
        for group in groups {
            if let Some(offsets) = self.by_group.get_mut(&group) {
                let gone: Vec<(String, i32)> =
                    offsets.keys().filter(|(t, _)| t == name).cloned().collect();
                for key in &gone {
                    offsets.remove(key);
                }
            }
        }
    }
}
