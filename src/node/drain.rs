//! Leaving the cluster without failing a client: the sequence SIGTERM and `POST /v1/drain`
//! run, and when the process may exit.
//!
//! ```text
//! raise the drain signal (drain_signal) ─► /readyz 503 · out of Metadata and coordinator
//!   answers · out of the registry · listeners closed · connections answer what they read,
//!   then close · open objects sealed at once
//! wait: no connection open, no accepted batch unanswered, registry left ─► exit
//!       (or the deadline: exit with what is left, reported)
//! ```
//! Producers see their connection close after their last answer and send the rest through
//! the load balancer or Metadata to the agents that stay (idempotence keeps retried batches
//! single); consumers of the groups this agent coordinated rediscover the coordinator at
//! once, because the registry no longer lists this agent.

use super::Running;
use std::time::Duration;

/// How often the drain looks at what is left.
const POLL: Duration = Duration::from_millis(20);

/// What a drain left behind when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drained {
    pub elapsed: Duration,
    /// Client connections still open (0 unless the deadline passed).
    pub connections_open: u64,
    /// Bytes of accepted batches not yet answered (0 unless the deadline passed).
    pub pending_bytes: usize,
    /// Whether the agent left the registry (else its lease lapses on its own).
    pub deregistered: bool,
}

impl Drained {
    pub fn complete(&self) -> bool {
        self.connections_open == 0 && self.pending_bytes == 0 && self.deregistered
    }
}

impl Running {
    /// Drains this agent (see the module comment) within `deadline`; the caller then stops it.
    pub async fn drain(&mut self, deadline: Duration) -> Drained {
        let broker = self.broker.clone();
        let clock = broker.clock.clone();
        let started = clock.now();
        if broker.drain.start() {
            tracing::info!(?deadline, "draining");
        }
        // Raised first, so a join that parks after this is answered by a coordinator that no
        // longer counts itself in.
        broker.groups.release_waiters();
        loop {
            let connections_open = broker
                .metrics
                .connections
                .load(std::sync::atomic::Ordering::Relaxed)
                .max(0) as u64;
            let pending_bytes = broker.pipeline.pending_bytes();
            if self.deregistered.is_none() && self.registration.is_finished() {
                self.deregistered = Some((&mut self.registration).await.unwrap_or(false));
            }
            let finished = self.deregistered.is_some();
            let deregistered = self.deregistered == Some(true);
            let drained = Drained {
                elapsed: clock.now() - started,
                connections_open,
                pending_bytes,
                deregistered,
            };
            let settled = connections_open == 0 && pending_bytes == 0 && finished;
            if settled || drained.elapsed >= deadline {
                return drained;
            }
            clock.sleep(POLL).await;
        }
    }
}
