//! An idempotent producer's id: InitProducerId without a transactional id.

use super::Apply;
use crate::ids::{ProducerEpoch, ProducerId};
use crate::metadata::state::MetadataState;
use crate::metadata::state::producers::InitProducerIdError;
use serde::{Deserialize, Serialize};

noun! {
    /// What gives an idempotent producer its id.
    ProducerCommand => ProducerOutcome {
        InitProducerId => Result<(ProducerId, ProducerEpoch), InitProducerIdError>,
    }
}

/// A new producer id, or the next epoch of the one the client holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitProducerId {
    /// Set when the client re-initialises an id it holds (bumps the epoch).
    pub existing: Option<(ProducerId, ProducerEpoch)>,
}

impl Apply for InitProducerId {
    fn apply(
        self,
        state: &mut MetadataState,
    ) -> Result<(ProducerId, ProducerEpoch), InitProducerIdError> {
        state
            .producers
            .init(self.existing, state.now_ms, state.limits.is_some())
    }
}
