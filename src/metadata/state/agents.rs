//! The agent registry (who serves Kafka, where, until when) and the cluster's id.

use super::limits::Limits;
use imbl::OrdMap;
use serde::{Deserialize, Serialize};

/// A Kafka-serving agent in the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// Its node id, which is also its Kafka broker id.
    pub id: i32,
    /// The address clients connect to (shared by agents behind one load balancer).
    pub host: String,
    pub port: i32,
    pub zone: Option<String>,
    /// Its internal listener (Raft, and requests other agents forward for the groups it
    /// coordinates).
    pub internal_addr: Option<String>,
    /// The state's time (`MetadataState::now_ms`) after which the agent counts as gone.
    pub lease_expires_ms: i64,
}

/// The longest lease one renewal may take (state time): an agent renews every third of its
/// lease, so a longer one only keeps a dead agent listed longer.
pub const AGENT_LEASE_MS_MAX: i64 = 600_000;

/// How long an agent whose lease ran out stays in the registry.
pub const LAPSED_AGENTS_KEPT_MS: i64 = 24 * 3600 * 1000;

/// Why a registration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RegistryError {
    /// A new agent while `Limits::agents_max` are registered.
    TooManyAgents,
    /// A host, zone, address or cluster id longer than `Limits::name_bytes_max`.
    NameTooLong,
}

/// The agents by id, and the cluster's name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    #[serde(deserialize_with = "super::persistent::ord_map")]
    pub(super) agents: OrdMap<i32, Agent>,
    pub(super) cluster_id: Option<String>,
}

impl Registry {
    pub fn cluster_id(&self) -> Option<&str> {
        self.cluster_id.as_deref()
    }

    /// Whether the registry holds `agent` (live or lapsed).
    pub fn contains(&self, agent: i32) -> bool {
        self.agents.contains_key(&agent)
    }

    /// Agents whose lease has not expired at `now_ms`.
    pub fn live_agents(&self, now_ms: i64) -> impl Iterator<Item = &Agent> {
        self.agents
            .values()
            .filter(move |a| a.lease_expires_ms > now_ms)
    }

    /// The state's clock starts (its first tick, at `now_ms`): leases granted before it ran
    /// from time 0, so they move to run from `now_ms` instead of lapsing at once.
    pub(super) fn start_clock(&mut self, now_ms: i64) {
        let from_zero: Vec<i32> = self
            .agents
            .values()
            .filter(|a| a.lease_expires_ms <= AGENT_LEASE_MS_MAX)
            .map(|a| a.id)
            .collect();
        for id in from_zero {
            if let Some(agent) = self.agents.get_mut(&id) {
                agent.lease_expires_ms = agent.lease_expires_ms.saturating_add(now_ms);
            }
        }
    }

    /// Names the cluster; only the first proposal counts.
    pub(super) fn init_cluster(
        &mut self,
        id: String,
        limits: &Limits,
    ) -> Result<(), RegistryError> {
        if !limits.name_allows(&id) {
            return Err(RegistryError::NameTooLong);
        }
        self.cluster_id.get_or_insert(id);
        Ok(())
    }

    pub(super) fn heartbeat(&mut self, agent: Agent, limits: &Limits) -> Result<(), RegistryError> {
        let names = [
            Some(&agent.host),
            agent.zone.as_ref(),
            agent.internal_addr.as_ref(),
        ];
        if !names.into_iter().flatten().all(|n| limits.name_allows(n)) {
            return Err(RegistryError::NameTooLong);
        }
        let full = |agents: &OrdMap<i32, Agent>| agents.len() >= limits.agents_max as usize;
        if !self.agents.contains_key(&agent.id) && full(&self.agents) {
            // Make room by forgetting agents whose lease ran out long before this heartbeat's
            // (scaled in, replaced). The heartbeat's own expiry is the clock here, so every
            // node forgets alike; only a full registry forgets, so a skewed clock cannot
            // push live agents out of a registry that has room.
            let horizon = agent.lease_expires_ms.saturating_sub(LAPSED_AGENTS_KEPT_MS);
            self.agents = self
                .agents
                .iter()
                .filter(|(_, a)| a.lease_expires_ms >= horizon)
                .map(|(id, a)| (*id, a.clone()))
                .collect();
            if full(&self.agents) {
                return Err(RegistryError::TooManyAgents);
            }
        }
        self.agents.insert(agent.id, agent);
        Ok(())
    }
}
