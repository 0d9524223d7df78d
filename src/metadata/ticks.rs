//! The state's clock: the quorum leader proposes a time every `TICK_EVERY` (`state::Tick`).
//! `apply` reads no clock, so this is how time that the state itself acts on arrives: agent
//! leases lapse, producer ids expire after a day idle, transactions time out, remembered
//! commit outcomes are forgotten after `COMMIT_DEDUP_WINDOW_MS`. One clock, the state's, so
//! agents with skewed clocks change nothing.
//!
//! The leader proposes its wall clock, but held near the state's time moved on by the real
//! time (monotonic) since its previous tick: at most a quarter faster, at least a tenth
//! slower (`proposal`). So the state's time runs at nearly the real rate whatever the
//! leaders' wall clocks say: a leader whose clock is 30 s ahead does not make agents' leases
//! (4 s) lapse in 2 s, and a failover to a leader whose clock is behind does not stop the
//! state's time until that clock catches up (a dead agent would stay listed meanwhile). A
//! wrong clock moves the state's time towards itself only slowly, and a correct one brings
//! it back.

use super::store::MetadataStore;
use crate::clock::{Clock, Instant};
use crate::metadata::state::Tick;
use crate::telemetry::ErrorChain;
use std::time::Duration;

/// How often the leader moves the state's time on (its resolution).
pub const TICK_EVERY: Duration = Duration::from_secs(1);

/// The time a leader proposes (pure): its wall clock `wall_ms`, held between nine tenths and
/// five quarters of `elapsed` (real time since its previous tick) past the state's time
/// `state_ms`; the wall clock alone for the state's first tick.
pub fn proposal(wall_ms: i64, state_ms: i64, elapsed: Duration) -> i64 {
    if state_ms == 0 {
        return wall_ms;
    }
    let elapsed_ms = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
    let slowest = state_ms.saturating_add((elapsed_ms / 10).saturating_mul(9));
    let fastest = state_ms.saturating_add((elapsed_ms / 4).saturating_mul(5));
    wall_ms.clamp(slowest, fastest)
}

/// Runs on every voter; proposes while it leads. A tick that fails is not retried: the next
/// one carries a later time anyway.
pub async fn tick_while_leading(store: MetadataStore, clock: Clock) {
    let mut failing = false;
    // When this node last proposed while leading; `None` once it stops leading, so a term
    // starts with one interval's worth.
    let mut previous: Option<Instant> = None;
    loop {
        clock.sleep(TICK_EVERY).await;
        if !store.quorum().is_leader() {
            previous = None;
            continue;
        }
        let now = clock.now();
        let elapsed = previous.map_or(TICK_EVERY, |at| now.saturating_duration_since(at));
        previous = Some(now);
        let state_ms = store.read(|s| s.now_ms());
        let tick = Tick {
            now_ms: proposal(clock.now_ms(), state_ms, elapsed),
        };
        match store.write(tick).await.map(|t| t.producers_expired) {
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

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_first_tick_is_the_wall_clock() {
        assert_eq!(proposal(1_700_000_000_000, 0, SECOND), 1_700_000_000_000);
    }

    #[test]
    fn a_true_wall_clock_is_proposed_as_it_is() {
        assert_eq!(proposal(10_000, 9_000, SECOND), 10_000);
    }

    #[test]
    fn a_wall_clock_far_ahead_moves_the_state_a_quarter_faster_than_real_time() {
        assert_eq!(proposal(39_000, 9_000, SECOND), 10_250);
    }

    #[test]
    fn a_wall_clock_far_behind_still_moves_the_state_nine_tenths_of_real_time() {
        assert_eq!(proposal(-21_000, 9_000, SECOND), 9_900);
    }
}
