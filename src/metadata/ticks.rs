//! The state's clock: the quorum leader proposes its wall clock every `TICK_EVERY`
//! (`Command::Tick`). `apply` reads no clock, so this is how time that the state itself acts
//! on arrives: producer ids expire after a day idle, remembered commit outcomes after
//! `COMMIT_DEDUP_WINDOW_MS`. One clock, the leader's, so agents with skewed clocks change
//! nothing.

use super::store::MetadataStore;
use crate::clock::Clock;
use crate::telemetry::ErrorChain;
use std::time::Duration;

/// How often the leader moves the state's time on (its resolution).
pub const TICK_EVERY: Duration = Duration::from_secs(1);

/// Runs on every voter; proposes while it leads. A tick that fails is not retried: the next
/// one carries a later time anyway.
pub async fn tick_while_leading(store: MetadataStore, clock: Clock) {
    let mut failing = false;
    loop {
        clock.sleep(TICK_EVERY).await;
        if !store.quorum().is_leader() {
            continue;
        }
        match store.tick(clock.now_ms()).await {
            Ok(0) => failing = false,
            Ok(expired) => {
                failing = false;
                tracing::info!(expired, "producer ids idle for a day expired");
            }
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %ErrorChain(&e), "the state's clock did not advance");
            }
            Err(_) => {}
        }
    }
}
