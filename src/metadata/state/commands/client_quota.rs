//! Client quotas: set or removed together per entity, each entity of a request on its own.

use super::Apply;
use crate::metadata::state::MetadataState;
use crate::metadata::state::client_quotas::{ClientQuotaError, QuotaEntity, QuotaValue};
use serde::{Deserialize, Serialize};

noun! {
    /// What changes client quotas.
    ClientQuotaCommand => ClientQuotaOutcome {
        AlterClientQuotas => Vec<Result<(), ClientQuotaError>>,
    }
}

/// An entity's quotas set (`Some`) or removed (`None`), by key.
pub type QuotaChanges = Vec<(String, Option<QuotaValue>)>;

/// For each entity, its changes, all of them or none; the keys and values were checked where
/// the request arrived (`quotas::alter`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlterClientQuotas {
    pub entries: Vec<(QuotaEntity, QuotaChanges)>,
}

impl Apply for AlterClientQuotas {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<(), ClientQuotaError>> {
        self.entries
            .iter()
            .map(|(entity, changes)| state.client_quotas.alter(entity, changes))
            .collect()
    }
}
