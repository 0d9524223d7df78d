//! Handing leadership over before a voter leaves (a drain), so writes pause for one election
//! instead of waiting an election timeout for the quorum to notice the leader is gone.
//!
//! openraft 0.9 has no leadership transfer, so it is built from what it has. The leader
//! pauses new writes (`WriteGate`: local and forwarded writes wait, they are not refused),
//! waits until a voter holds its whole log, and asks that voter to start an election
//! (`/raft/elect`). The other voters still hear the leader, so they refuse the candidate
//! (leader lease); the leader itself grants the vote (the candidate's log is as long as its
//! own, and its vote is not fresh), which with the candidate's own makes a majority of three.
//! The old leader steps down, the paused writes go on to the new one. Writes are paused for
//! one attempt at a time (a few seconds at most, within a write's timeout); a lost attempt is
//! tried again until the deadline.

use super::node::Quorum;
use super::service::WriteRefused;
use super::types::NodeId;
use super::write_gate::WriteGate;
use openraft::ServerState;
use std::time::Duration;

/// Opens the gate when dropped, however the hand-off ends.
struct Paused<'a>(&'a WriteGate);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.0.reopen();
    }
}

/// How long one election may take before the hand-off tries again.
const ELECTION_WAIT: Duration = Duration::from_millis(1_500);
/// How long one attempt waits, writes paused, for a voter to hold the whole log.
const CATCH_UP_MAX: Duration = Duration::from_secs(1);
/// How often the hand-off looks at replication and leadership.
const POLL: Duration = Duration::from_millis(5);

impl Quorum {
    /// Hands leadership to another voter within `within`, if this node leads a quorum of two
    /// or three voters: the new leader's id, or `None` when there was nothing to hand over or
    /// no voter took it in time (then the quorum elects one after this node stops). With more
    /// voters the candidate cannot win (the followers' leader lease refuses it, and this
    /// leader's vote and its own are not a majority), and a lost attempt would depose this
    /// leader for a whole election, so none is made.
    pub async fn hand_off_leadership(&self, within: Duration) -> Option<NodeId> {
        let me = self.raft().metrics().borrow().id;
        let clock = self.clock().clone();
        let deadline = clock.now() + within;
        while clock.now() < deadline {
            let metrics = self.raft().metrics().borrow().clone();
            if metrics.state != ServerState::Leader {
                match metrics.current_leader.filter(|l| *l != me) {
                    Some(leader) => return Some(leader),
                    // An election is under way (a refused candidate also ends this term).
                    None => {
                        clock.sleep(POLL).await;
                        continue;
                    }
                }
            }
            let voters = metrics.membership_config.membership().voter_ids().count();
            if !(2..=3).contains(&voters) {
                return None;
            }
            self.attempt_hand_off(me, deadline).await;
        }
        None
    }

    /// One attempt, ending by `deadline`, with writes paused for its length only (at most
    /// about four seconds, well within a write's timeout): wait for a caught-up voter, ask it
    /// to stand for election, wait for the outcome.
    async fn attempt_hand_off(&self, me: NodeId, deadline: crate::clock::Instant) {
        let clock = self.clock();
        let _paused = Paused(self.write_gate());
        self.write_gate().close();
        let give_up = (clock.now() + CATCH_UP_MAX).min(deadline);
        let (candidate, addr) = loop {
            let metrics = self.raft().metrics().borrow().clone();
            if metrics.state != ServerState::Leader || clock.now() >= give_up {
                return;
            }
            // A voter that holds every entry this leader has, once no write is on its way in.
            let membership = metrics.membership_config.membership();
            let caught_up = membership.voter_ids().filter(|v| *v != me).find(|v| {
                metrics
                    .replication
                    .as_ref()
                    .and_then(|r| r.get(v).cloned().flatten())
                    .map(|log_id| log_id.index)
                    == metrics.last_log_index
            });
            if let Some(candidate) = caught_up
                && self.write_gate().in_flight() == 0
                && let Some(node) = membership.get_node(&candidate)
            {
                break (candidate, node.addr.clone());
            }
            clock.sleep(POLL).await;
        };
        let left = deadline.saturating_duration_since(clock.now());
        let asked: Result<Result<(), WriteRefused>, _> = self
            .peers()
            .post(&addr, "elect", &(), ELECTION_WAIT.min(left))
            .await;
        match asked {
            Ok(Ok(())) => {}
            Ok(Err(refused)) => {
                tracing::warn!(node = %candidate, %refused, "draining: a voter did not start an election");
            }
            Err(e) => {
                tracing::warn!(node = %candidate, error = %e, "draining: a voter did not start an election");
            }
        }
        // Until this node no longer leads, or long enough that the candidate must have lost.
        let elected = (clock.now() + ELECTION_WAIT).min(deadline);
        while clock.now() < elected && self.is_leader() {
            clock.sleep(POLL).await;
        }
    }
}
