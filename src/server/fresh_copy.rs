//! Whether this agent's copy of the metadata is as fresh as the quorum's, for answers a client
//! would act on irreversibly if they were stale.
//!
//! Agents apply the quorum's log as it reaches them, so one agent's copy may lag another's (a
//! restarted or cut-off node catching up), and a client behind a load balancer moves between
//! agents. An answer from a lagging copy can send a consumer back: a high watermark below an
//! offset it already read makes librdkafka call the log truncated (OffsetForLeaderEpoch) or
//! out of range (Fetch) and reset its position; ListOffsets would show a high watermark going
//! back. Before such an answer the agent catches up: it learns the leader's read index (no
//! log entry) and waits until it has applied it. When it cannot within `CATCH_UP_LIMIT` it
//! says so, and the handler answers a retriable error (OFFSET_NOT_AVAILABLE) instead.

use crate::server::broker::Broker;
use crate::telemetry::ErrorChain;
use std::time::Duration;

/// How long a catch-up may hold a request: past it, the answer is a retriable error for
/// what the copy could not confirm, and the client asks again.
pub const CATCH_UP_LIMIT: Duration = Duration::from_secs(2);

/// Whether this agent's copy can be trusted for an answer a stale copy would get wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalCopy {
    /// Caught up with the quorum after the request arrived: everything acknowledged before
    /// the request is in it.
    Current,
    /// The quorum could not be reached in time: the copy may lag.
    MayLag,
}

/// Catches this agent's copy up with the quorum, waiting at most `CATCH_UP_LIMIT`.
pub async fn catch_up(broker: &Broker) -> LocalCopy {
    match broker
        .clock
        .timeout(CATCH_UP_LIMIT, broker.metadata.catch_up())
        .await
    {
        Ok(Ok(())) => LocalCopy::Current,
        Ok(Err(e)) => {
            tracing::debug!(error = %ErrorChain(&e), "no catch-up with the quorum");
            LocalCopy::MayLag
        }
        Err(_) => LocalCopy::MayLag,
    }
}
