//! Identifiers and positions that cross modules, as types of their own so that an `i32`
//! partition, an `i64` offset and a producer id cannot be swapped.
//!
//! Every type here serializes as the value it wraps (`serde(transparent)`), so Raft log
//! entries read the same bytes as before the types existed.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One partition of one topic, by the topic's id (names can be reused after a delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic_id: Uuid,
    pub partition: i32,
}

/// A position in a partition's log: a record's offset, or one past the last (a high
/// watermark, an end offset). Offsets grow by record counts (`+ i64`); the distance between
/// two is a record count (`-`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Offset(pub i64);

impl Offset {
    /// Kafka's "no offset" (-1), as responses carry it.
    pub const NONE: Offset = Offset(-1);
}

impl std::ops::Add<i64> for Offset {
    type Output = Offset;

    fn add(self, records: i64) -> Offset {
        Offset(self.0 + records)
    }
}

impl std::ops::Sub<i64> for Offset {
    type Output = Offset;

    fn sub(self, records: i64) -> Offset {
        Offset(self.0 - records)
    }
}

impl std::ops::Sub for Offset {
    type Output = i64;

    fn sub(self, earlier: Offset) -> i64 {
        self.0 - earlier.0
    }
}

impl std::fmt::Display for Offset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// An object's key in the store (see `object::key` for the schema).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ObjectKey(String);

impl ObjectKey {
    pub fn new(key: impl Into<String>) -> ObjectKey {
        ObjectKey(key.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A producer id handed out by InitProducerId; negative: a producer without idempotence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProducerId(pub i64);

impl ProducerId {
    /// Whether the producer is idempotent (Kafka's NO_PRODUCER_ID is -1).
    pub fn is_idempotent(self) -> bool {
        self.0 >= 0
    }
}

/// A producer id's epoch: raised by every InitProducerId of the same id, fencing older ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProducerEpoch(pub i16);

/// A node of the cluster: its Raft member id, which is also its Kafka broker id. (`Debug`
/// shows the bare number, as operators see ids in messages and logs.)
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u64);

impl std::fmt::Debug for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl NodeId {
    /// The Kafka broker id clients know the node by (`Config::validate` keeps node ids
    /// within `i32`).
    pub fn broker_id(self) -> i32 {
        i32::try_from(self.0).unwrap_or(i32::MAX)
    }

    /// The node an agent of the registry runs on (`None` for a negative broker id).
    pub fn of_broker(broker_id: i32) -> Option<NodeId> {
        u64::try_from(broker_id).ok().map(NodeId)
    }
}

/// openraft's storage test suite makes node ids from integers.
impl From<u64> for NodeId {
    fn from(id: u64) -> NodeId {
        NodeId(id)
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
