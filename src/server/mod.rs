//! The Kafka front door: listener, connections (in-order responses), router, one handler per API.
//!
//! ```text
//! TcpListener ─► connection (frames, ≤ N in flight, ordered replies) ─► router ─► handlers/<api>
//!                                                                        │
//!            group request for another agent behind the same address ──┴► forward (out)
//! internal listener /kafka/forward ─► forwarded (in) ─► router
//! ```

pub mod authorized;
pub mod broker;
pub mod byte_pool;
pub mod connection;
pub mod error_codes;
pub mod forward;
pub mod forwarded;
pub mod handlers;
pub mod router;
pub mod siblings;
pub mod supported;

use broker::Broker;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Accepts Kafka connections on `listener` until the task is dropped, at most
/// `connections_max` at once (beyond it the listener waits, as Kafka's does) and
/// `connections_per_ip_max` from one address (beyond it a new connection is closed at once).
pub async fn serve(listener: TcpListener, broker: Arc<Broker>) {
    let slots = Arc::new(Semaphore::new(broker.config.connections_max));
    let per_ip: Arc<Mutex<HashMap<IpAddr, usize>>> = Arc::default();
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        match listener.accept().await {
            Ok((stream, peer)) => {
                let Some(address) =
                    PerAddress::claim(&per_ip, peer.ip(), broker.config.connections_per_ip_max)
                else {
                    broker
                        .metrics
                        .refused_connections
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, "too many connections from one address; closing");
                    continue;
                };
                let broker = broker.clone();
                tokio::spawn(async move {
                    connection::serve_connection(broker, stream, peer).await;
                    drop((slot, address));
                });
            }
            Err(e) => {
                // Typically out of file descriptors: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                broker
                    .clock
                    .sleep(std::time::Duration::from_millis(100))
                    .await;
            }
        }
    }
}

/// One connection counted against its address; uncounted when dropped.
struct PerAddress {
    counts: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: IpAddr,
}

impl PerAddress {
    fn claim(
        counts: &Arc<Mutex<HashMap<IpAddr, usize>>>,
        ip: IpAddr,
        max: usize,
    ) -> Option<PerAddress> {
        let mut map = counts.lock().unwrap_or_else(|p| p.into_inner());
        let count = map.entry(ip).or_default();
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(PerAddress {
            counts: counts.clone(),
            ip,
        })
    }
}

impl Drop for PerAddress {
    fn drop(&mut self) {
        let mut map = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = map.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.ip);
            }
        }
    }
}
