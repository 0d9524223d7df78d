//! Raft membership follows the agent registry. On the quorum leader, every few seconds:
//!
//! - a learner whose agent has not renewed its registration for `--remove-departed-agents-after`
//!   is removed from the membership, so the leader stops replicating to agents that are gone
//!   for good (scaled in, replaced);
//! - a live agent that is not a member is added back as a learner: one removed while it was
//!   cut off, that came back without restarting, would otherwise serve a metadata copy that
//!   no longer advances.
//!
//! Voters are never touched: changing them is the operator's decision (`PUT /v1/quorum/voters`).

use super::Quorum;
use super::types::NodeId;
use crate::clock::Clock;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// How often the leader compares the membership with the registry.
const CHECK_EVERY: Duration = Duration::from_secs(2);
/// Longest wait for a learner being added back to catch up.
const ADD_TIMEOUT: Duration = Duration::from_secs(10);

/// What to change: learners to remove, agents (id → Raft address) to add as learners.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LearnerChanges {
    pub remove: BTreeSet<NodeId>,
    pub add: BTreeMap<NodeId, String>,
}

/// Decides the changes (pure). `missing_since` remembers, across calls, since when each
/// learner has been absent from the live agents; `live` maps live agents to their Raft
/// addresses.
pub fn plan(
    members: &BTreeSet<NodeId>,
    learners: &BTreeSet<NodeId>,
    live: &BTreeMap<NodeId, String>,
    missing_since: &mut BTreeMap<NodeId, i64>,
    now_ms: i64,
    grace: Duration,
) -> LearnerChanges {
    missing_since.retain(|id, _| learners.contains(id) && !live.contains_key(id));
    for id in learners {
        if !live.contains_key(id) {
            missing_since.entry(*id).or_insert(now_ms);
        }
    }
    let grace_ms = grace.as_millis() as i64;
    LearnerChanges {
        remove: missing_since
            .iter()
            .filter(|(_, since)| now_ms - **since >= grace_ms)
            .map(|(id, _)| *id)
            .collect(),
        add: live
            .iter()
            .filter(|(id, _)| !members.contains(id))
            .map(|(id, addr)| (*id, addr.clone()))
            .collect(),
    }
}

/// Runs on every voter; acts while it leads.
pub async fn follow_registry(quorum: Arc<Quorum>, grace: Duration, clock: Clock) {
    let mut missing_since = BTreeMap::new();
    loop {
        clock.sleep(CHECK_EVERY).await;
        if !quorum.is_leader() {
            missing_since.clear();
            continue;
        }
        let metrics = quorum.raft().metrics().borrow().clone();
        let membership = metrics.membership_config.membership();
        if membership.get_joint_config().len() > 1 {
            continue; // a membership change is under way
        }
        let voters: BTreeSet<NodeId> = membership.voter_ids().collect();
        let learners: BTreeSet<NodeId> = membership.learner_ids().collect();
        let members: BTreeSet<NodeId> = voters.union(&learners).copied().collect();
        // The state's time, as for the registry's leases: a leader whose wall clock is ahead
        // must not count a live agent's absence as longer than it is.
        let (now, live): (i64, BTreeMap<NodeId, String>) = quorum.shared().read(|machine| {
            let live = machine
                .state
                .live_agents()
                .filter_map(|a| Some((NodeId::of_broker(a.id)?, a.internal_addr.clone()?)))
                .collect();
            (machine.state.now_ms(), live)
        });
        let plan = plan(&members, &learners, &live, &mut missing_since, now, grace);
        if !plan.remove.is_empty() {
            let change = openraft::ChangeMembers::RemoveNodes(plan.remove.clone());
            match quorum.raft().change_membership(change, false).await {
                Ok(_) => tracing::info!(
                    removed = ?plan.remove,
                    "agents gone longer than {grace:?} left the metadata quorum"
                ),
                Err(e) => tracing::warn!(error = %e, "removing departed agents failed"),
            }
        }
        for (id, addr) in plan.add {
            match clock
                .timeout(ADD_TIMEOUT, quorum.add_learner(id, addr.clone()))
                .await
            {
                Ok(Ok(())) => {
                    tracing::info!(%id, %addr, "a live agent rejoined the metadata quorum")
                }
                Ok(Err(e)) => tracing::warn!(%id, error = %e, "adding a live agent back failed"),
                Err(_) => tracing::warn!(%id, "adding a live agent back timed out"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[u64]) -> BTreeSet<NodeId> {
        ids.iter().copied().map(NodeId).collect()
    }

    fn live(ids: &[u64]) -> BTreeMap<NodeId, String> {
        ids.iter()
            .map(|id| (NodeId(*id), format!("10.0.0.{id}:7000")))
            .collect()
    }

    #[test]
    fn a_learner_gone_longer_than_the_grace_is_removed() {
        let members = set(&[1, 2, 3, 4, 5]);
        let learners = set(&[4, 5]);
        let grace = Duration::from_secs(60);
        let mut missing = BTreeMap::new();
        let first = plan(
            &members,
            &learners,
            &live(&[1, 2, 3, 4]),
            &mut missing,
            0,
            grace,
        );
        assert_eq!(first, LearnerChanges::default(), "5 just went missing");
        let later = plan(
            &members,
            &learners,
            &live(&[1, 2, 3, 4]),
            &mut missing,
            59_999,
            grace,
        );
        assert!(later.remove.is_empty());
        let gone = plan(
            &members,
            &learners,
            &live(&[1, 2, 3, 4]),
            &mut missing,
            60_000,
            grace,
        );
        assert_eq!(gone.remove, set(&[5]));
    }

    #[test]
    fn a_learner_back_in_time_is_kept() {
        let members = set(&[1, 4]);
        let learners = set(&[4]);
        let grace = Duration::from_secs(60);
        let mut missing = BTreeMap::new();
        plan(&members, &learners, &live(&[1]), &mut missing, 0, grace);
        plan(
            &members,
            &learners,
            &live(&[1, 4]),
            &mut missing,
            30_000,
            grace,
        );
        let after = plan(
            &members,
            &learners,
            &live(&[1]),
            &mut missing,
            70_000,
            grace,
        );
        assert!(after.remove.is_empty(), "its absence restarted at 70 s");
    }

    #[test]
    fn voters_are_never_removed_and_live_non_members_are_added() {
        let members = set(&[1, 2, 3]);
        let learners = set(&[]);
        let mut missing = BTreeMap::new();
        let p = plan(
            &members,
            &learners,
            &live(&[1, 6]),
            &mut missing,
            0,
            Duration::ZERO,
        );
        assert!(p.remove.is_empty(), "2 and 3 are voters");
        assert_eq!(p.add, live(&[6]));
    }
}
