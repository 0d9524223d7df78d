//! What the state machine refuses to hold. Every command is checked against these limits
//! inside `apply`, on every node alike, so a command that is out of bounds yields an error
//! outcome instead of a panic or a huge allocation — also when it is already in a log and
//! is replayed. The limits are part of the replicated state (snapshots carry them), so
//! every node checks the same numbers; handlers check the same numbers first, from their
//! copy of the state, and answer with Kafka's error codes.
//!
//! A log written before limits existed may hold entries they would refuse, so a state
//! starts without them (`Limits::BEFORE_SET`: only the caps that keep a node alive) and the
//! limits take effect at the `SetLimits` entry the nodes propose at start: every node, from
//! a snapshot or from the log, switches at the same index.

use serde::{Deserialize, Serialize};

/// Kafka's topic name rule: at most 249 characters (a topic's name also names its
/// directories and metrics there), of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub const TOPIC_NAME_BYTES_MAX: usize = 249;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Partitions of one topic (CreateTopics, CreatePartitions: INVALID_PARTITIONS).
    pub partitions_per_topic_max: u32,
    /// Partitions of all topics together (POLICY_VIOLATION): every node holds each one's
    /// index in memory.
    pub partitions_max: u32,
    /// Configs set on one topic, and the length of a key and of a value (INVALID_CONFIG).
    pub topic_configs_max: u32,
    pub config_key_bytes_max: u32,
    pub config_value_bytes_max: u32,
    /// Group ids in offset commits (INVALID_GROUP_ID).
    pub group_id_bytes_max: u32,
    /// Kafka's `offset.metadata.max.bytes` (OFFSET_METADATA_TOO_LARGE).
    pub offset_metadata_bytes_max: u32,
    /// Groups with committed offsets.
    pub groups_max: u32,
    /// Agents in the registry, and the length of their addresses, zones and the cluster id.
    pub agents_max: u32,
    pub name_bytes_max: u32,
    /// Object keys (S3's own limit is 1,024 bytes).
    pub object_key_bytes_max: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            partitions_per_topic_max: 10_000,
            partitions_max: 200_000,
            topic_configs_max: 256,
            config_key_bytes_max: 256,
            config_value_bytes_max: 32 * 1024,
            group_id_bytes_max: 1024,
            offset_metadata_bytes_max: 4096,
            groups_max: 100_000,
            agents_max: 10_000,
            name_bytes_max: 1024,
            object_key_bytes_max: 1024,
        }
    }
}

/// Whether `name` is a legal Kafka topic name.
pub fn topic_name_is_legal(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= TOPIC_NAME_BYTES_MAX
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

impl Limits {
    /// In force until `SetLimits` is applied: no limit, but the partition counts no node could
    /// allocate (a tiny command that would allocate gigabytes).
    pub const BEFORE_SET: Limits = Limits {
        partitions_per_topic_max: 1_000_000,
        partitions_max: 10_000_000,
        topic_configs_max: u32::MAX,
        config_key_bytes_max: u32::MAX,
        config_value_bytes_max: u32::MAX,
        group_id_bytes_max: u32::MAX,
        offset_metadata_bytes_max: u32::MAX,
        groups_max: u32::MAX,
        agents_max: u32::MAX,
        name_bytes_max: u32::MAX,
        object_key_bytes_max: u32::MAX,
    };

    /// Whether a topic may have `count` partitions (on its own; see `partitions_max`).
    pub fn partitions_per_topic_allow(&self, count: i64) -> bool {
        (1..=i64::from(self.partitions_per_topic_max)).contains(&count)
    }

    /// Whether the cluster may grow from `current` partitions by `added`.
    pub fn partitions_allow(&self, current: u64, added: u64) -> bool {
        current.saturating_add(added) <= u64::from(self.partitions_max)
    }

    /// Whether a topic may carry these configs.
    pub fn configs_allow<'a>(
        &self,
        count: usize,
        mut entries: impl Iterator<Item = (&'a str, Option<&'a str>)>,
    ) -> bool {
        count <= self.topic_configs_max as usize
            && entries.all(|(key, value)| {
                !key.is_empty()
                    && key.len() <= self.config_key_bytes_max as usize
                    && value.is_none_or(|v| v.len() <= self.config_value_bytes_max as usize)
            })
    }

    pub fn group_id_allows(&self, group: &str) -> bool {
        !group.is_empty() && group.len() <= self.group_id_bytes_max as usize
    }

    pub fn offset_metadata_allows(&self, metadata: Option<&str>) -> bool {
        metadata.is_none_or(|m| m.len() <= self.offset_metadata_bytes_max as usize)
    }

    pub fn name_allows(&self, name: &str) -> bool {
        name.len() <= self.name_bytes_max as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names() {
        assert!(topic_name_is_legal("orders.v1_x-2"));
        assert!(topic_name_is_legal(&"x".repeat(249)));
        for bad in ["", ".", "..", "a b", "ä", &"x".repeat(250)] {
            assert!(!topic_name_is_legal(bad), "{bad}");
        }
    }

    #[test]
    fn counts_at_and_past_the_limits() {
        let limits = Limits::default();
        assert!(limits.partitions_per_topic_allow(10_000));
        assert!(!limits.partitions_per_topic_allow(10_001));
        assert!(!limits.partitions_per_topic_allow(0));
        assert!(!limits.partitions_per_topic_allow(2_000_000_000));
        assert!(limits.partitions_allow(199_999, 1));
        assert!(!limits.partitions_allow(199_999, 2));
        assert!(!limits.partitions_allow(u64::MAX, 1), "no overflow");
        assert!(limits.offset_metadata_allows(Some(&"m".repeat(4096))));
        assert!(!limits.offset_metadata_allows(Some(&"m".repeat(4097))));
        let long = "v".repeat(32 * 1024 + 1);
        assert!(!limits.configs_allow(1, [("k", Some(long.as_str()))].into_iter()));
        assert!(limits.configs_allow(1, [("k", None)].into_iter()));
    }
}
