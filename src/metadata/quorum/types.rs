//! The types the Raft quorum is instantiated with: what is written (a list of metadata
//! commands) and what comes back (their outcomes).

use crate::metadata::state::{Command, Outcome};
use serde::{Deserialize, Serialize};
use std::io::Cursor;

/// One write to the quorum: commands applied together, in order, at one log index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commands(pub Vec<Command>);

/// The outcomes of one `Commands`, in the same order, and the log index they were applied at
/// (0 for entries that carry no commands).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub index: u64,
    pub outcomes: Vec<Outcome>,
}

openraft::declare_raft_types!(
    pub TypeConfig:
        D = Commands,
        R = Applied,
        NodeId = NodeId,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

pub use crate::ids::NodeId;
pub type Node = openraft::BasicNode;
pub type Raft = openraft::Raft<TypeConfig>;
pub type Entry = openraft::Entry<TypeConfig>;
pub type LogId = openraft::LogId<NodeId>;
pub type Vote = openraft::Vote<NodeId>;
pub type StorageError = openraft::StorageError<NodeId>;
pub type StoredMembership = openraft::StoredMembership<NodeId, Node>;
pub type SnapshotMeta = openraft::SnapshotMeta<NodeId, Node>;
pub type Snapshot = openraft::Snapshot<TypeConfig>;
