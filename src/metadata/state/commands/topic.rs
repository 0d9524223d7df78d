//! A topic's commands. Each answers `Result<(), TopicError>`. Deleting a topic takes its
//! objects' references, its producers' sequence windows, its open transactions and its groups'
//! offsets along.

use super::Apply;
use crate::metadata::state::MetadataState;
use crate::metadata::state::parts::in_force;
use crate::metadata::state::topics::TopicError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

noun! {
    /// What changes a topic.
    TopicCommand => TopicOutcome {
        CreateTopic => Result<(), TopicError>,
        DeleteTopic => Result<(), TopicError>,
        CreatePartitions => Result<(), TopicError>,
        AlterTopicConfigs => Result<(), TopicError>,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateTopic {
    pub name: String,
    pub id: Uuid,
    pub partitions: i32,
    pub configs: BTreeMap<String, String>,
}

impl Apply for CreateTopic {
    fn apply(self, state: &mut MetadataState) -> Result<(), TopicError> {
        state.topics.create(
            self.name,
            self.id,
            self.partitions,
            self.configs,
            in_force(&state.limits),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteTopic {
    pub name: String,
}

impl Apply for DeleteTopic {
    /// A deleted topic takes its producers' sequence windows and its groups' offsets along.
    fn apply(self, state: &mut MetadataState) -> Result<(), TopicError> {
        let topic = state.topics.delete(&self.name)?;
        for r in topic.partitions.iter().flat_map(|p| p.index.iter()) {
            state.objects.drop_ref(r.object, state.now_ms);
        }
        state.producers.forget_topic(topic.id);
        state.transactions.forget_topic(topic.id);
        state.group_offsets.forget_topic(&self.name);
        state.share.forget_topic(&topic.id);
        Ok(())
    }
}

/// Grows a topic to `total` partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatePartitions {
    pub name: String,
    pub total: i32,
}

impl Apply for CreatePartitions {
    fn apply(self, state: &mut MetadataState) -> Result<(), TopicError> {
        state
            .topics
            .create_partitions(&self.name, self.total, in_force(&state.limits))
    }
}

/// Sets (`Some`) or removes (`None`) topic configs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlterTopicConfigs {
    pub name: String,
    /// `None` removes the key.
    pub changes: Vec<(String, Option<String>)>,
}

impl Apply for AlterTopicConfigs {
    fn apply(self, state: &mut MetadataState) -> Result<(), TopicError> {
        state
            .topics
            .alter_configs(&self.name, self.changes, in_force(&state.limits))
    }
}
