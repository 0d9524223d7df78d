//! The Kafka front door: listener, connections (in-order responses), router, one handler per API.
//!
//! ```text
//! TcpListener ─► connection (frames, ≤ N in flight, ordered replies) ─► router ─► handlers/<api>
//!                                                                        │
//!            group request for another agent behind the same address ──┴► forward (out)
//! internal listener /kafka/forward ─► forwarded (in) ─► router
//! ```

pub mod api;
pub mod authorize;
pub mod broker;
pub mod busy;
pub mod byte_pool;
pub mod caller;
pub mod connection;
pub mod error_codes;
pub mod forward;
pub mod forwarded;
pub mod fresh_copy;
pub mod handlers;
pub mod mutation_quota;
pub mod quota_sharing;
pub mod router;
pub mod sasl_exchange;
pub mod share_sessions;
pub mod siblings;
pub mod throttling;

use crate::security::listeners::SecurityProtocol;
use crate::security::metrics::SecurityMetrics;
use crate::security::tls::ReloadingTls;
use broker::Broker;
use caller::{ANONYMOUS, Caller};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// How long a client may take to finish its TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// One named Kafka listener, as its connections need it.
pub struct Listener {
    pub name: String,
    /// Which lane of this agent the listener's port is (`placement`; 0: the agent itself).
    pub lane: u16,
    pub protocol: SecurityProtocol,
    /// The TLS configuration of an `SSL` or `SASL_SSL` listener.
    pub tls: Option<Arc<ReloadingTls>>,
}

/// The connection limits every Kafka socket of an agent shares (its listeners and their
/// lanes): `connections_max` at once, `connections_per_ip_max` from one address.
#[derive(Clone)]
pub struct ConnectionSlots {
    open: Arc<Semaphore>,
    per_ip: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl ConnectionSlots {
    pub fn new(connections_max: usize) -> ConnectionSlots {
        ConnectionSlots {
            open: Arc::new(Semaphore::new(connections_max)),
            per_ip: Arc::default(),
        }
    }
}

/// Accepts Kafka connections on `listener` until the task is dropped or the agent drains (then
/// the socket closes, so new connections are refused and a load balancer tries another
/// agent), within `slots`: beyond `connections_max` the listener waits (as Kafka's does);
/// beyond `connections_per_ip_max` from one address a new connection is closed at once, and
/// beyond its address's `connection_creation_rate` quota once its throttle time has passed.
pub async fn serve(
    listener: TcpListener,
    broker: Arc<Broker>,
    info: Arc<Listener>,
    slots: ConnectionSlots,
) {
    let drain = broker.drain.clone();
    loop {
        let accepted = tokio::select! {
            _ = drain.started() => return,
            accepted = accept_within(&listener, &slots) => accepted,
        };
        let Some((slot, accepted)) = accepted else {
            return;
        };
        match accepted {
            Ok((stream, peer)) => {
                let Some(address) = PerAddress::claim(
                    &slots.per_ip,
                    peer.ip(),
                    broker.config.connections_per_ip_max,
                ) else {
                    broker
                        .metrics
                        .refused_connections
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, "too many connections from one address; closing");
                    continue;
                };
                // Over its ip's connection_creation_rate: held for the throttle time, then
                // closed unserved (Kafka's delayed close); it keeps its slots meanwhile, so a
                // flood of them is bounded by connections_per_ip_max and connections_max.
                let held = throttling::admit_connection(&broker, peer.ip());
                if held > 0 {
                    broker
                        .metrics
                        .refused_connections
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, held, "over its ip's connection rate; closing");
                    let clock = broker.clock.clone();
                    tokio::spawn(async move {
                        clock.sleep(Duration::from_millis(held)).await;
                        drop((slot, address, stream));
                    });
                    continue;
                }
                let broker = broker.clone();
                let info = info.clone();
                tokio::spawn(async move {
                    accept(broker, stream, peer, &info).await;
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

/// The next connection, once `slots` has room for it; `None` when the slots are gone.
async fn accept_within(
    listener: &TcpListener,
    slots: &ConnectionSlots,
) -> Option<(
    tokio::sync::OwnedSemaphorePermit,
    std::io::Result<(TcpStream, SocketAddr)>,
)> {
    let slot = slots.open.clone().acquire_owned().await.ok()?;
    Some((slot, listener.accept().await))
}

/// Completes a TLS handshake when the listener asks for one, then serves the connection.
async fn accept(broker: Arc<Broker>, stream: TcpStream, peer: SocketAddr, info: &Listener) {
    let _ = stream.set_nodelay(true);
    let caller = |principal: Option<String>| Caller {
        // Kafka shows a client's address this way in group descriptions.
        host: format!("/{}", peer.ip()),
        principal: principal.unwrap_or_else(|| ANONYMOUS.to_string()),
        listener: info.name.clone(),
        lane: info.lane,
    };
    let sasl = info.protocol.sasl();
    let Some(tls) = &info.tls else {
        connection::serve_connection(broker, stream, peer, caller(None), sasl).await;
        return;
    };
    let handshake = tls.acceptor().accept(stream);
    let stream = match broker.clock.timeout(TLS_HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            SecurityMetrics::count(&broker.metrics.security.tls_handshakes_failed);
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            SecurityMetrics::count(&broker.metrics.security.tls_handshakes_failed);
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    // mTLS: the client certificate names the principal on an SSL listener; on SASL_SSL the
    // SASL login does (as in Kafka).
    let certificate = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|certs| certs.first());
    let principal = match certificate {
        _ if sasl => None,
        None => None,
        Some(der) => match crate::security::tls::certificate_principal(der) {
            Some(principal) => Some(principal),
            None => {
                tracing::warn!(%peer, "closing a TLS connection: its client certificate has no readable subject");
                return;
            }
        },
    };
    connection::serve_connection(broker, stream, peer, caller(principal), sasl).await;
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
