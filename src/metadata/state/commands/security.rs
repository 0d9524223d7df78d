//! What changes who may do what: ACL bindings and SCRAM credentials. Each binding, filter or
//! change stands alone, and answers alone, in request order.

use super::Apply;
use crate::metadata::state::MetadataState;
use crate::metadata::state::security::{ScramChange, ScramStateError};
use crate::security::acl::{AclBinding, AclBindingFilter, AclError};
use serde::{Deserialize, Serialize};

noun! {
    /// What changes ACLs and SCRAM credentials.
    SecurityCommand => SecurityOutcome {
        CreateAcls => Vec<Result<(), AclError>>,
        DeleteAcls => Vec<Result<Vec<AclBinding>, AclError>>,
        AlterScramCredentials => Vec<Result<(), ScramStateError>>,
    }
}

/// CreateAcls: each binding stands alone. Per binding, in command order: created (or already
/// held) or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateAcls {
    pub bindings: Vec<AclBinding>,
}

impl Apply for CreateAcls {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<(), AclError>> {
        state.security.create_acls(self.bindings)
    }
}

/// DeleteAcls: each filter removes what it matches. Per filter, in command order: the
/// bindings removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteAcls {
    pub filters: Vec<AclBindingFilter>,
}

impl Apply for DeleteAcls {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<Vec<AclBinding>, AclError>> {
        state.security.delete_acls(self.filters)
    }
}

/// AlterUserScramCredentials: each change stands alone. Per change, in command order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlterScramCredentials {
    pub changes: Vec<ScramChange>,
}

impl Apply for AlterScramCredentials {
    fn apply(self, state: &mut MetadataState) -> Vec<Result<(), ScramStateError>> {
        state.security.alter_scram(self.changes)
    }
}
