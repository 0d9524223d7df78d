//! A consumer group's committed offsets: committed one partition at a time (Kafka commits
//! each partition's offset on its own too), forgotten by group or by partition.

use super::Apply;
use crate::metadata::state::MetadataState;
use crate::metadata::state::groups::{GroupOffset, OffsetCommitError};
use crate::metadata::state::parts::in_force;
use serde::{Deserialize, Serialize};

noun! {
    /// What changes a group's committed offsets.
    GroupOffsetsCommand => GroupOffsetsOutcome {
        OffsetCommit => Result<(), OffsetCommitError>,
        DeleteGroupOffsets => bool,
    }
}

/// One consumer position to commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommit {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: GroupOffset,
}

impl Apply for OffsetCommit {
    fn apply(self, state: &mut MetadataState) -> Result<(), OffsetCommitError> {
        state.offset_commit(self.group, self.topic, self.partition, self.offset)
    }
}

/// Forgets a group's committed offsets: all of them (`partitions: None`, DeleteGroups) or
/// the listed ones (OffsetDelete). Whether the group had committed offsets to delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteGroupOffsets {
    pub group: String,
    pub partitions: Option<Vec<(String, i32)>>,
}

impl Apply for DeleteGroupOffsets {
    fn apply(self, state: &mut MetadataState) -> bool {
        state.group_offsets.delete(&self.group, self.partitions)
    }
}

impl MetadataState {
    /// A group's offset, checked against the limits and the topics (a transaction's offsets
    /// are committed through here too, at its end).
    pub(in crate::metadata::state) fn offset_commit(
        &mut self,
        group: String,
        topic: String,
        partition: i32,
        offset: GroupOffset,
    ) -> Result<(), OffsetCommitError> {
        if !in_force(&self.limits).group_id_allows(&group) {
            return Err(OffsetCommitError::InvalidGroupId);
        }
        if !in_force(&self.limits).offset_metadata_allows(offset.metadata.as_deref()) {
            return Err(OffsetCommitError::MetadataTooLarge);
        }
        if !self.topics.has_partition(&topic, partition) {
            return Err(OffsetCommitError::UnknownTopicOrPartition);
        }
        self.group_offsets
            .commit(group, topic, partition, offset, in_force(&self.limits))
    }
}
