//! This agent's place in the registry: the cluster id it proposes, and the heartbeats that
//! keep it in Metadata answers.

use crate::metadata::state::{AgentEndpoints, InitCluster, RenewAgent, SetLimits};
use crate::random::Rng;
use crate::server::broker::Broker;
use crate::telemetry::ErrorChain;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Keeps this agent in the registry: a heartbeat every third of the lease, which the state
/// counts from the entry that applies it, by its own clock. A missed heartbeat (no leader for
/// a moment) is retried at the next tick; only a lease that runs out drops the agent from
/// Metadata answers. Returns when the agent drains: whether it left the registry.
pub async fn keep_registered(broker: Arc<Broker>) -> bool {
    let lease = broker.config.agent_lease;
    let mut failing = false;
    let mut named = false;
    // Limits take effect at one log entry, the same on every node (`state::limits`).
    let mut limited = false;
    loop {
        if !named && broker.metadata.read(|s| s.cluster_id().is_none()) {
            named = match broker
                .metadata
                .write(InitCluster {
                    id: broker.local_cluster_id.clone(),
                })
                .await
            {
                Ok(Ok(())) => true,
                Ok(Err(refused)) => {
                    tracing::error!(?refused, id = %broker.local_cluster_id, "the quorum refused this node's cluster id");
                    true
                }
                Err(_) => false,
            };
        }
        if !limited && broker.metadata.read(|s| !s.limits_set()) {
            limited = broker
                .metadata
                .write(SetLimits {
                    limits: Default::default(),
                })
                .await
                .is_ok();
        }
        let sent = broker.clock.monotonic_ms();
        let lease_end_before = lease_end(&broker);
        match broker
            .metadata
            .write(RenewAgent::for_lease(broker.agent(0), lease))
            .await
        {
            Ok(Ok(())) => {
                failing = false;
                // Whether the quorum's time had passed the lease this renewal replaced: the
                // others counted this agent out meanwhile, and may have coordinated its
                // groups. It lets go of them before `registered` (which reads `sent`) lets
                // it coordinate again. (The state set the new lease from its time at the
                // renewal; a lease renewed before but applied here only later makes this
                // err towards letting go.)
                let renewed_at = lease_end(&broker).map(|end| end - lease_ms(&broker));
                let took_ms = broker.clock.monotonic_ms() - sent;
                tracing::debug!(
                    ?renewed_at,
                    ?lease_end_before,
                    took_ms,
                    "registration renewed"
                );
                if renewed_at.is_none_or(|at| lease_end_before.is_none_or(|before| at >= before)) {
                    broker.groups.let_go();
                }
                broker
                    .renewal_sent_ms
                    .store(sent, std::sync::atomic::Ordering::Relaxed);
                // Once registered: the listeners' addresses, whenever the state's differ.
                let me = broker.node_id();
                let recorded = broker
                    .metadata
                    .read(|s| s.security().endpoints(me) == &broker.endpoints[..]);
                if !recorded
                    && let Ok(false) = broker
                        .metadata
                        .write(AgentEndpoints {
                            id: me,
                            endpoints: broker.endpoints.clone(),
                        })
                        .await
                {
                    tracing::warn!("the quorum refused this agent's listener addresses");
                }
            }
            Ok(Err(refused)) if !failing => {
                failing = true;
                tracing::error!(?refused, "the quorum refused this agent's registration");
            }
            Ok(Err(_)) => {}
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %ErrorChain(&e), "agent registration failed; retrying");
            }
            Err(_) => {}
        }
        tokio::select! {
            _ = broker.clock.sleep(lease / 3) => {}
            _ = broker.drain.started() => return deregister(&broker).await,
        }
    }
}

/// When this agent's lease ends by the quorum's time, in this node's copy of the state.
fn lease_end(broker: &Broker) -> Option<i64> {
    let me = broker.node_id();
    broker.metadata.read(|s| {
        s.registered_agents()
            .find(|a| a.id == me)
            .map(|a| a.lease_expires_ms)
    })
}

/// The lease a renewal asks for, as the state grants it.
fn lease_ms(broker: &Broker) -> i64 {
    i64::try_from(broker.config.agent_lease.as_millis())
        .unwrap_or(i64::MAX)
        .clamp(0, crate::metadata::state::AGENT_LEASE_MS_MAX)
}

/// How often a drain tries to take the agent out of the registry before leaving it to lapse.
const DEREGISTER_ATTEMPTS: u32 = 5;

/// Takes this agent out of the registry, so no node lists it or routes a partition or group to
/// it: a last renewal for no time at all, which every node applies alike. Failing that
/// (`false`), the lease lapses on its own.
async fn deregister(broker: &Broker) -> bool {
    for attempt in 1..=DEREGISTER_ATTEMPTS {
        let renewal = broker
            .metadata
            .write(RenewAgent::for_lease(broker.agent(0), Duration::ZERO));
        match renewal.await {
            Ok(Ok(())) => {
                tracing::info!("draining: left the registry");
                return true;
            }
            Ok(Err(refused)) => {
                tracing::warn!(?refused, "draining: the quorum refused the deregistration");
                return false;
            }
            Err(e) if attempt == DEREGISTER_ATTEMPTS => {
                tracing::warn!(error = %ErrorChain(&e), "draining: cannot leave the registry; its lease will lapse");
            }
            // A leader election: a few tries a fifth of a lease apart.
            Err(_) => broker.clock.sleep(broker.config.agent_lease / 5).await,
        }
    }
    false
}

/// This node's cluster id (the file at `path`, created with the data directory); the first
/// one the quorum applies names the cluster.
pub fn local_cluster_id(path: &Path, rng: &Rng) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(id) => Ok(id.trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Durable before it is proposed: a restart must propose the same id.
            let id = rng.uuid().simple().to_string();
            let tmp = path.with_extension("tmp");
            let mut file = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut file, id.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if let Some(dir) = path.parent() {
                std::fs::File::open(dir)?.sync_all()?;
            }
            Ok(id)
        }
        Err(e) => Err(e),
    }
}
