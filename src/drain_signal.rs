//! Whether this agent is draining: leaving the cluster without failing a client.
//!
//! One flag, raised once (SIGTERM or `POST /v1/drain`), that every part watches and acts on
//! by itself: `/readyz` answers 503 so load balancers stop sending; the agent drops out of
//! its own Metadata and coordinator answers and out of the registry, so partitions and
//! groups move at once instead of after a lease; listeners stop accepting; connections stop
//! reading, answer what they already read and close; the produce pipeline seals whatever
//! waits instead of waiting for its PUT budget. `node::drain` runs the sequence and decides
//! when the process may exit.

use std::sync::Arc;
use tokio::sync::watch;

#[derive(Clone)]
pub struct DrainSignal(Arc<watch::Sender<bool>>);

impl Default for DrainSignal {
    fn default() -> Self {
        DrainSignal(Arc::new(watch::channel(false).0))
    }
}

impl DrainSignal {
    /// Raises the flag; whether this call raised it (false: it already was).
    pub fn start(&self) -> bool {
        !self.0.send_replace(true)
    }

    pub fn is_draining(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the flag is raised (at once if it is).
    pub async fn started(&self) {
        let mut flag = self.0.subscribe();
        // The sender lives in `self`, so the channel cannot close while this waits.
        let _ = flag.wait_for(|draining| *draining).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn raised_once_and_seen_by_every_waiter() {
        let signal = DrainSignal::default();
        let waiter = tokio::spawn({
            let signal = signal.clone();
            async move { signal.started().await }
        });
        assert!(!signal.is_draining());
        assert!(signal.start());
        assert!(!signal.start(), "a second start changes nothing");
        waiter.await.expect("the waiter wakes");
        assert!(signal.is_draining());
        // A waiter that comes late returns at once.
        signal.started().await;
    }
}
