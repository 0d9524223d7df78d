//! What the agents' background jobs write: their leases (`jobs`), and the dead objects the
//! collector has deleted from the store.

use super::Apply;
use crate::metadata::state::MetadataState;
use crate::metadata::state::jobs::Job;
use crate::metadata::state::objects::ObjectId;
use serde::{Deserialize, Serialize};

noun! {
    /// What the background jobs write.
    JobCommand => JobOutcome {
        ForgetObjects => u64,
        AcquireLease => bool,
        ReleaseLeases => (),
    }
}

/// Forgets dead objects the collector has deleted from the store; how many were forgotten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForgetObjects {
    pub ids: Vec<ObjectId>,
}

impl Apply for ForgetObjects {
    fn apply(self, state: &mut MetadataState) -> u64 {
        state.objects.forget(&self.ids) as u64
    }
}

/// Grants or renews a job lease (see `jobs`); whether the lease is the asker's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcquireLease {
    pub job: Job,
    pub holder: i32,
    pub for_ms: i64,
}

impl Apply for AcquireLease {
    fn apply(self, state: &mut MetadataState) -> bool {
        state
            .leases
            .acquire(self.job, self.holder, self.for_ms, state.now_ms)
    }
}

/// Gives up every lease `holder` has (an agent that stops).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseLeases {
    pub holder: i32,
}

impl Apply for ReleaseLeases {
    fn apply(self, state: &mut MetadataState) {
        state.leases.release_all(self.holder);
    }
}
