//! Groups' configs (GROUP config resources): set or removed together. Kept when a group is
//! deleted, as Kafka keeps them; removed with IncrementalAlterConfigs DELETE.

use super::Apply;
use crate::metadata::state::MetadataState;
use crate::metadata::state::group_configs::GroupConfigError;
use serde::{Deserialize, Serialize};

noun! {
    /// What changes a group's configs.
    GroupConfigCommand => GroupConfigOutcome {
        AlterGroupConfigs => Result<(), GroupConfigError>,
    }
}

/// Sets (`Some`) or removes (`None`) configs of a group, all or none; the values were checked
/// where the request arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlterGroupConfigs {
    pub group: String,
    pub changes: Vec<(String, Option<String>)>,
}

impl Apply for AlterGroupConfigs {
    fn apply(self, state: &mut MetadataState) -> Result<(), GroupConfigError> {
        state.group_configs.alter(&self.group, self.changes)
    }
}
