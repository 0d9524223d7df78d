//! What every node proposes once at start, and only the first applied counts: the cluster's
//! id and the limits in force.

use super::Apply;
use crate::metadata::state::limits::Limits;
use crate::metadata::state::parts::in_force;
use crate::metadata::state::{MetadataState, RegistryError};
use serde::{Deserialize, Serialize};

noun! {
    /// What names the cluster and puts its limits in force.
    ClusterCommand => ClusterOutcome {
        InitCluster => Result<(), RegistryError>,
        SetLimits => bool,
    }
}

/// Names the cluster; only the first proposal counts (every voter proposes its own).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitCluster {
    pub id: String,
}

impl Apply for InitCluster {
    fn apply(self, state: &mut MetadataState) -> Result<(), RegistryError> {
        state
            .registry
            .init_cluster(self.id, in_force(&state.limits))
    }
}

/// Puts limits in force (see `limits`); only the first one applied counts. Whether this one
/// put limits in force (false: they already were).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetLimits {
    pub limits: Limits,
}

impl Apply for SetLimits {
    fn apply(self, state: &mut MetadataState) -> bool {
        // The first one applied counts; every node proposes the same defaults.
        let set = state.limits.is_none();
        state.limits.get_or_insert(self.limits);
        set
    }
}
