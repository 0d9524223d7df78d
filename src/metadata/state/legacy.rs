//! The state's first snapshot layout (one flat struct, the topics version not stored), read
//! so that a data directory written before the state was split by noun still starts. It is
//! only ever decoded, then converted; snapshots are always written in the current layout.

use super::MetadataState;
use super::agents::{Agent, Registry};
use super::groups::{GroupOffset, GroupOffsets};
use super::index::{BatchOutcome, RecentCommits};
use super::producers::{ProducerState, Producers};
use super::topics::{Topic, Topics};
use crate::ids::{ObjectKey, ProducerId};
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};
use uuid::Uuid;

/// Field for field, in order, what the first layout wrote (the newtypes serialize as the
/// values they wrap, so the parts' own types read the old bytes).
#[derive(Deserialize)]
pub struct MetadataStateV1 {
    topics: BTreeMap<String, Topic>,
    topic_names: BTreeMap<Uuid, String>,
    next_producer_id: i64,
    producers: BTreeMap<ProducerId, ProducerState>,
    group_offsets: BTreeMap<String, BTreeMap<(String, i32), GroupOffset>>,
    agents: BTreeMap<i32, Agent>,
    cluster_id: Option<String>,
    applied: u64,
    recent_commits: BTreeMap<ObjectKey, Vec<Vec<BatchOutcome>>>,
    recent_order: VecDeque<ObjectKey>,
}

impl From<MetadataStateV1> for MetadataState {
    fn from(old: MetadataStateV1) -> MetadataState {
        MetadataState {
            topics: Topics {
                by_name: old.topics,
                names: old.topic_names,
                // The old layout kept no version. Any value works as long as it moves with the
                // topics from here on; the applied count is the same on every node restored
                // from the same snapshot.
                version: old.applied,
            },
            producers: Producers {
                next_id: old.next_producer_id,
                by_id: old.producers,
            },
            group_offsets: GroupOffsets {
                by_group: old.group_offsets,
            },
            registry: Registry {
                agents: old.agents,
                cluster_id: old.cluster_id,
            },
            recent_commits: RecentCommits {
                outcomes: old.recent_commits,
                order: old.recent_order,
            },
            applied: old.applied,
            limits: None,
        }
    }
}
