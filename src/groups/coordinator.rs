//! `Coordinator`: the groups this agent coordinates, in memory, with the requests that wait on
//! them. Membership is soft state (as in Kafka, members rejoin after a coordinator change);
//! committed offsets are durable in the metadata quorum.
//!
//! A JoinGroup or SyncGroup that must wait registers a responder under its member id; every
//! state change hands out the `Deliveries` it produced. A ticker expires silent members and
//! finishes rebalances whose time is up.

use super::classic::{Deliveries, Group, JoinRequest, JoinResult, State, SyncResult};
use crate::protocol::ErrorCode;
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::oneshot;

/// How often silent members and rebalance deadlines are checked.
const TICK: Duration = Duration::from_millis(100);

/// Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms defaults.
pub const SESSION_TIMEOUT_MIN_MS: i64 = 6_000;
pub const SESSION_TIMEOUT_MAX_MS: i64 = 1_800_000;

struct Slot {
    group: Group,
    joins: HashMap<String, oneshot::Sender<JoinResult>>,
    syncs: HashMap<String, oneshot::Sender<SyncResult>>,
}

impl Slot {
    fn deliver(&mut self, deliveries: Deliveries) {
        for (member, result) in deliveries.joins {
            if let Some(tx) = self.joins.remove(&member) {
                let _ = tx.send(result);
            }
        }
        for (member, result) in deliveries.syncs {
            if let Some(tx) = self.syncs.remove(&member) {
                let _ = tx.send(result);
            }
        }
    }
}

/// A group as DescribeGroups reports it.
#[derive(Debug, Clone)]
pub struct GroupView {
    pub state: State,
    pub protocol_type: String,
    pub protocol: String,
    pub generation: i32,
    pub members: Vec<MemberView>,
}

#[derive(Debug, Clone)]
pub struct MemberView {
    pub id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub metadata: Bytes,
    pub assignment: Bytes,
}

#[derive(Clone)]
pub struct Coordinator {
    groups: Arc<Mutex<HashMap<String, Slot>>>,
    initial_delay_ms: i64,
}

impl Coordinator {
    /// Starts the coordinator and its ticker (which stops when the coordinator is dropped).
    pub fn start(initial_delay: Duration) -> Coordinator {
        let coordinator = Coordinator {
            groups: Arc::new(Mutex::new(HashMap::new())),
            initial_delay_ms: initial_delay.as_millis() as i64,
        };
        let weak = Arc::downgrade(&coordinator.groups);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(TICK);
            loop {
                ticker.tick().await;
                let Some(groups) = weak.upgrade() else { return };
                let now = crate::clock::now_ms();
                let mut groups = groups.lock().unwrap_or_else(|p| p.into_inner());
                for slot in groups.values_mut() {
                    let deliveries = slot.group.tick(now);
                    slot.deliver(deliveries);
                }
                groups.retain(|_, slot| {
                    !(slot.group.is_empty() && slot.joins.is_empty() && slot.syncs.is_empty())
                });
            }
        });
        coordinator
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn slot<'a>(&self, groups: &'a mut HashMap<String, Slot>, id: &str) -> &'a mut Slot {
        groups.entry(id.to_string()).or_insert_with(|| Slot {
            group: Group::new(id, self.initial_delay_ms),
            joins: HashMap::new(),
            syncs: HashMap::new(),
        })
    }

    /// A JoinGroup: waits until the rebalance it joins completes (or the member is removed).
    pub async fn join(&self, group_id: &str, request: JoinRequest) -> JoinResult {
        if !(SESSION_TIMEOUT_MIN_MS..=SESSION_TIMEOUT_MAX_MS).contains(&request.session_timeout_ms)
        {
            return JoinResult::error(ErrorCode::InvalidSessionTimeout, &request.member_id);
        }
        let wait_limit = Duration::from_millis(request.rebalance_timeout_ms.max(0) as u64)
            + Duration::from_secs(5);
        let client_id = request.client_id.clone();
        let rx = {
            let mut groups = self.lock();
            let slot = self.slot(&mut groups, group_id);
            let now = crate::clock::now_ms();
            let new_id = || format!("{client_id}-{}", uuid::Uuid::new_v4());
            match slot.group.join(request, new_id, now) {
                Err(result) => return *result,
                Ok((member, deliveries)) => {
                    let (tx, rx) = oneshot::channel();
                    // A member has one JoinGroup in flight; a newer one replaces the older.
                    if let Some(old) = slot.joins.insert(member.clone(), tx) {
                        let _ =
                            old.send(JoinResult::error(ErrorCode::RebalanceInProgress, &member));
                    }
                    slot.deliver(deliveries);
                    (member, rx)
                }
            }
        };
        let (member, rx) = rx;
        match tokio::time::timeout(wait_limit, rx).await {
            Ok(Ok(result)) => result,
            _ => JoinResult::error(ErrorCode::RebalanceInProgress, &member),
        }
    }

    /// A SyncGroup: a follower waits for the leader's assignment.
    pub async fn sync(
        &self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        assignments: Vec<(String, Bytes)>,
    ) -> SyncResult {
        let rx = {
            let mut groups = self.lock();
            let Some(slot) = groups.get_mut(group_id) else {
                return SyncResult::error(ErrorCode::UnknownMemberId);
            };
            let now = crate::clock::now_ms();
            match slot.group.sync(member_id, generation, assignments, now) {
                Err(result) => return result,
                Ok(deliveries) => {
                    let (tx, rx) = oneshot::channel();
                    slot.syncs.insert(member_id.to_string(), tx);
                    slot.deliver(deliveries);
                    rx
                }
            }
        };
        match tokio::time::timeout(Duration::from_secs(300), rx).await {
            Ok(Ok(result)) => result,
            _ => SyncResult::error(ErrorCode::RebalanceInProgress),
        }
    }

    pub fn heartbeat(&self, group_id: &str, member_id: &str, generation: i32) -> ErrorCode {
        let mut groups = self.lock();
        match groups.get_mut(group_id) {
            Some(slot) => slot
                .group
                .heartbeat(member_id, generation, crate::clock::now_ms()),
            None => ErrorCode::UnknownMemberId,
        }
    }

    pub fn leave(&self, group_id: &str, members: &[(String, Option<String>)]) -> Vec<ErrorCode> {
        let mut groups = self.lock();
        match groups.get_mut(group_id) {
            Some(slot) => {
                let (codes, deliveries) = slot.group.leave(members, crate::clock::now_ms());
                slot.deliver(deliveries);
                codes
            }
            None => vec![ErrorCode::UnknownMemberId; members.len()],
        }
    }

    /// Whether an offset commit by this member at this generation may proceed.
    /// Generation -1 with no member is a commit by a consumer that does not use the group.
    pub fn check_commit(&self, group_id: &str, member_id: &str, generation: i32) -> ErrorCode {
        if generation < 0 && member_id.is_empty() {
            return ErrorCode::None;
        }
        let groups = self.lock();
        let Some(slot) = groups.get(group_id) else {
            // Not a live group here (e.g. after a coordinator change): members must rejoin.
            return ErrorCode::UnknownMemberId;
        };
        let group = &slot.group;
        if !group.members.contains_key(member_id) {
            ErrorCode::UnknownMemberId
        } else if group.state == State::PreparingRebalance {
            ErrorCode::RebalanceInProgress
        } else if generation != group.generation {
            ErrorCode::IllegalGeneration
        } else {
            ErrorCode::None
        }
    }

    pub fn describe(&self, group_id: &str) -> Option<GroupView> {
        let groups = self.lock();
        let group = &groups.get(group_id)?.group;
        let protocol = group.protocol.clone().unwrap_or_default();
        Some(GroupView {
            state: group.state,
            protocol_type: group.protocol_type.clone().unwrap_or_default(),
            protocol: protocol.clone(),
            generation: group.generation,
            members: group
                .members
                .values()
                .map(|m| MemberView {
                    id: m.id.clone(),
                    instance_id: m.instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    metadata: m
                        .protocols
                        .iter()
                        .find(|(p, _)| *p == protocol)
                        .map(|(_, meta)| meta.clone())
                        .unwrap_or_default(),
                    assignment: m.assignment.clone(),
                })
                .collect(),
        })
    }

    /// Live groups here: (id, protocol type, state).
    pub fn list(&self) -> Vec<(String, String, State)> {
        let groups = self.lock();
        let mut list: Vec<_> = groups
            .iter()
            .filter(|(_, s)| !s.group.members.is_empty())
            .map(|(id, s)| {
                (
                    id.clone(),
                    s.group.protocol_type.clone().unwrap_or_default(),
                    s.group.state,
                )
            })
            .collect();
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list
    }
}
