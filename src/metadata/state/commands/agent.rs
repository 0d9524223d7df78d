//! What an agent says of itself: its registration (a lease of the state's time) and the
//! addresses it advertises on each listener.

use super::Apply;
use crate::metadata::state::agents::{AGENT_LEASE_MS_MAX, Agent};
use crate::metadata::state::parts::in_force;
use crate::metadata::state::security::Endpoint;
use crate::metadata::state::{MetadataState, RegistryError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

noun! {
    /// What an agent writes about itself.
    AgentCommand => AgentOutcome {
        AgentHeartbeat => Result<(), RegistryError>,
        RenewAgent => Result<(), RegistryError>,
        AgentEndpoints => bool,
    }
}

/// An agent (re)registers until `agent.lease_expires_ms`, read as a time of the state's
/// clock. Written by earlier versions, whose agents put their own wall clock there; agents
/// now send `RenewAgent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentHeartbeat {
    pub agent: Agent,
}

impl Apply for AgentHeartbeat {
    fn apply(self, state: &mut MetadataState) -> Result<(), RegistryError> {
        state
            .registry
            .heartbeat(self.agent, in_force(&state.limits))
    }
}

/// An agent (re)registers for `lease_ms` of the state's time from this entry on (at most
/// `agents::AGENT_LEASE_MS_MAX`; 0 takes it out at once): it stays in Metadata answers until
/// then. `agent.lease_expires_ms` is ignored; the state sets it. Every node judges the lease
/// by the same clock at the same entry, so no node's wall clock decides who is alive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenewAgent {
    pub agent: Agent,
    pub lease_ms: i64,
}

impl RenewAgent {
    /// Renews `agent` for `lease` of the state's time (`Duration::ZERO`: takes it out).
    pub fn for_lease(agent: Agent, lease: Duration) -> RenewAgent {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        RenewAgent { agent, lease_ms }
    }
}

impl Apply for RenewAgent {
    fn apply(self, state: &mut MetadataState) -> Result<(), RegistryError> {
        let RenewAgent {
            mut agent,
            lease_ms,
        } = self;
        let lease_ms = lease_ms.clamp(0, AGENT_LEASE_MS_MAX);
        agent.lease_expires_ms = state.now_ms.saturating_add(lease_ms);
        state.registry.heartbeat(agent, in_force(&state.limits))
    }
}

/// The addresses an agent advertises on each of its named listeners; whether they were
/// recorded (the agent is registered, within bounds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentEndpoints {
    pub id: i32,
    pub endpoints: Vec<Endpoint>,
}

impl Apply for AgentEndpoints {
    fn apply(self, state: &mut MetadataState) -> bool {
        let registry = &state.registry;
        state.security.set_endpoints(
            self.id,
            self.endpoints,
            |agent| registry.contains(agent),
            in_force(&state.limits),
        )
    }
}
