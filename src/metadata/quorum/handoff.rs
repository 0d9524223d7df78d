//! Handing leadership over before a voter leaves (a drain), so writes pause for one election
//! instead of waiting an election timeout for the quorum to notice the leader is gone.
//!
//! openraft 0.9 has no leadership transfer, so it is built from what it has. The leader
//! pauses new writes (`WriteGate`: local and forwarded writes wait, they are not refused),
//! waits until a voter holds its whole log, and asks that voter to start an election
//! (`/raft/elect`). The other voters still hear the leader, so they refuse the candidate
//! (leader lease); the leader itself grants the vote (the candidate's log is as long as its
//! own, and its vote is not fresh), which with the candidate's own makes a majority of three.
//! The old leader steps down, the paused writes go on to the new one.

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
/// How often the hand-off looks at replication and leadership.
const POLL: Duration = Duration::from_millis(5);

impl Quorum {
    /// Hands leadership to another voter within `within`, if this node leads and is not the
    /// only voter: the new leader's id, or `None` when there was nothing to hand over or no
    /// voter took it in time (then the quorum elects one after this node stops).
    pub async fn hand_off_leadership(&self, within: Duration) -> Option<NodeId> {
        let me = self.raft().metrics().borrow().id;
        let clock = self.clock().clone();
        let deadline = clock.now() + within;
        let _paused = Paused(self.write_gate());
        self.write_gate().close();
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
            let membership = metrics.membership_config.membership().clone();
            let others: Vec<NodeId> = membership.voter_ids().filter(|v| *v != me).collect();
            if others.is_empty() {
                return None;
            }
            // A voter that holds every entry this leader has, once no write is on its way in.
            let last = metrics.last_log_index;
            let caught_up = others.iter().copied().find(|v| {
                metrics
                    .replication
                    .as_ref()
                    .and_then(|r| r.get(v).cloned().flatten())
                    .map(|log_id| log_id.index)
                    == last
            });
            let candidate = match caught_up {
                Some(candidate) if self.write_gate().in_flight() == 0 => candidate,
                _ => {
                    clock.sleep(POLL).await;
                    continue;
                }
            };
            let addr = membership.get_node(&candidate).map(|n| n.addr.clone())?;
            let asked: Result<Result<(), WriteRefused>, _> =
                self.peers().post(&addr, "elect", &(), ELECTION_WAIT).await;
            match asked {
                Ok(Ok(())) => {}
                Ok(Err(refused)) => {
                    tracing::warn!(node = %candidate, %refused, "draining: a voter did not start an election");
                }
                Err(e) => {
                    tracing::warn!(node = %candidate, error = %e, "draining: a voter did not start an election");
                }
            }
            // Until this node no longer leads (the loop above then waits for the new
            // leader), or long enough that the candidate must have lost: try again.
            let elected = clock.now() + ELECTION_WAIT;
            while clock.now() < elected.min(deadline) && self.is_leader() {
                clock.sleep(POLL).await;
            }
        }
        None
    }
}
