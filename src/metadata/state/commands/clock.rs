//! The state's clock: the leader's `Tick`, the state's only time, and what ages out as it
//! moves on (idle producer ids, remembered commit outcomes, open transactions past their
//! timeout).

use super::Apply;
use crate::ids::TopicPartition;
use crate::metadata::state::MetadataState;
use crate::metadata::state::producers::{EXPIRY_CHECK_EVERY_MS, PRODUCER_ID_EXPIRATION_MS};
use crate::metadata::state::recent_commits::COMMIT_DEDUP_WINDOW_MS;
use serde::{Deserialize, Serialize};

noun! {
    /// What moves the state's time.
    ClockCommand => ClockOutcome {
        Tick => Ticked,
    }
}

/// The most one `Tick` moves the state's time: twice the ticks' interval, whatever a leader
/// proposes. Leaders propose at most a quarter more than the real time since their previous
/// tick (`ticks::proposal`), so this bound holds only against a leader that has not caught up
/// with its own log (it proposes its wall clock then) or a wrong proposal: the state's time
/// never runs faster than twice real time, and an outcome kept for `COMMIT_DEDUP_WINDOW_MS` of
/// it is kept at least half that in real time (15 s, beyond the 10 s write deadline).
pub const TICK_STEP_MAX_MS: i64 = 2_000;

/// The leader's clock, proposed every second (`metadata::ticks`): the state's only time.
/// The first tick sets it; later ones move it on by at most `TICK_STEP_MAX_MS`, and never
/// back, so a leader whose clock is ahead or behind (a failover to a skewed voter) cannot
/// make the state forget at once what it must remember for retries. Expires idle
/// producer ids and old commit outcomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tick {
    pub now_ms: i64,
}

/// What a `Tick` aged out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticked {
    pub producers_expired: u64,
    /// Open transactions aborted for their timeout (their partitions got markers).
    pub transactions_timed_out: u64,
    /// Partitions where share groups' acquisition locks ended and records became available.
    pub share_freed: Vec<TopicPartition>,
}

impl Apply for Tick {
    fn apply(self, state: &mut MetadataState) -> Ticked {
        let (producers_expired, transactions_timed_out) = tick(state, self.now_ms);
        let share_freed = state
            .share
            .expire_locks(state.now_ms)
            .into_iter()
            .map(|(topic_id, partition)| TopicPartition {
                topic_id,
                partition,
            })
            .collect();
        Ticked {
            producers_expired,
            transactions_timed_out,
            share_freed,
        }
    }
}

/// Moves the state's time on and forgets what has aged out; returns how many producer ids
/// expired and how many open transactions timed out.
fn tick(state: &mut MetadataState, proposed_ms: i64) -> (u64, u64) {
    if proposed_ms <= state.now_ms {
        return (0, 0);
    }
    let now_ms = if state.now_ms == 0 {
        state.registry.start_clock(proposed_ms);
        state.recent_commits.start_clock(proposed_ms);
        state.producers.start_clock(proposed_ms);
        state.transactions.start_clock(proposed_ms);
        state.producers_checked_ms = proposed_ms;
        proposed_ms
    } else {
        proposed_ms.min(state.now_ms.saturating_add(TICK_STEP_MAX_MS))
    };
    state.now_ms = now_ms;
    state
        .recent_commits
        .forget_before(now_ms.saturating_sub(COMMIT_DEDUP_WINDOW_MS));
    let timed_out = state.check_transactions();
    if now_ms.saturating_sub(state.producers_checked_ms) < EXPIRY_CHECK_EVERY_MS {
        return (0, timed_out);
    }
    state.producers_checked_ms = now_ms;
    let transactions = &state.transactions;
    let expired = state
        .producers
        .expire(now_ms.saturating_sub(PRODUCER_ID_EXPIRATION_MS), |id| {
            transactions.id_of(id).is_some()
        });
    (expired, timed_out)
}
