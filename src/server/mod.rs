//! The Kafka front door: listener, connections (in-order responses), router, one handler per API.
//!
//! ```text
//! TcpListener ─► connection (frames, ≤ N in flight, ordered replies) ─► router ─► handlers/<api>
//!                                                                        │
//!            group request for another agent behind the same address ──┴► forward (out)
//! internal listener /kafka/forward ─► forwarded (in) ─► router
//! ```

pub mod broker;
pub mod connection;
pub mod error_codes;
pub mod forward;
pub mod forwarded;
pub mod handlers;
pub mod router;
pub mod supported;

use broker::Broker;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Accepts Kafka connections on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, broker: Arc<Broker>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tokio::spawn(connection::serve_connection(broker.clone(), stream, peer));
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
