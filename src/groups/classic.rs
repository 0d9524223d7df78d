//! One consumer group under the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup):
//! pure state transitions with time passed in, after Kafka's group coordinator.
//!
//! ```text
//! Empty ──join──► PreparingRebalance ──all joined / timeout──► CompletingRebalance
//!   ▲                 ▲   ▲                                          │ leader's SyncGroup
//!   └──last leaves────┘   └── join with new metadata, leave, expiry ◄┴─► Stable
//! ```
//! Requests that must wait (a JoinGroup until the rebalance completes, a follower's SyncGroup
//! until the leader's) are answered later through `Deliveries`: the caller keeps one responder
//! per member and hands each delivery to it.

use crate::protocol::ErrorCode;
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl State {
    /// Kafka's names, as DescribeGroups and ListGroups report them.
    pub fn name(self) -> &'static str {
        match self {
            State::Empty => "Empty",
            State::PreparingRebalance => "PreparingRebalance",
            State::CompletingRebalance => "CompletingRebalance",
            State::Stable => "Stable",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Member {
    pub id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout_ms: i64,
    pub rebalance_timeout_ms: i64,
    /// (protocol name, metadata) in the member's order of preference.
    pub protocols: Vec<(String, Bytes)>,
    pub assignment: Bytes,
    pub last_seen_ms: i64,
    /// Has joined the rebalance in progress (or the last one).
    joined: bool,
    /// Order of first join: the first member leads when the leader is gone.
    order: u64,
}

/// A JoinGroup as the group sees it.
#[derive(Debug, Clone)]
pub struct JoinRequest {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout_ms: i64,
    pub rebalance_timeout_ms: i64,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    /// JoinGroup v4+: a new member first gets an id back (MEMBER_ID_REQUIRED).
    pub require_known_member_id: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct JoinResult {
    pub error: ErrorCode,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub leader: String,
    pub member_id: String,
    /// Filled for the leader only: every member and its metadata for the chosen protocol.
    pub members: Vec<(String, Option<String>, Bytes)>,
}

impl JoinResult {
    pub fn error(error: ErrorCode, member_id: &str) -> JoinResult {
        JoinResult {
            error,
            generation: -1,
            protocol_type: None,
            protocol_name: None,
            leader: String::new(),
            member_id: member_id.to_string(),
            members: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SyncResult {
    pub error: ErrorCode,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub assignment: Bytes,
}

impl SyncResult {
    pub fn error(error: ErrorCode) -> SyncResult {
        SyncResult {
            error,
            protocol_type: None,
            protocol_name: None,
            assignment: Bytes::new(),
        }
    }
}

/// Answers owed to waiting members, by member id.
#[derive(Debug, Default)]
pub struct Deliveries {
    pub joins: Vec<(String, JoinResult)>,
    pub syncs: Vec<(String, SyncResult)>,
    /// Members this step removed (expired, left, or late for a rebalance), to be logged.
    pub removed: Vec<String>,
}

impl Deliveries {
    pub fn is_empty(&self) -> bool {
        self.joins.is_empty() && self.syncs.is_empty()
    }
}

#[derive(Debug, Clone)]
pub struct Group {
    pub id: String,
    pub state: State,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub members: BTreeMap<String, Member>,
    /// Ids handed out with MEMBER_ID_REQUIRED, not yet joined, and when they lapse.
    pending: BTreeMap<String, i64>,
    /// Members whose SyncGroup waits for the leader's.
    awaiting_sync: BTreeSet<String>,
    /// Members of the generation that have not sent its SyncGroup yet (Kafka's pending sync
    /// members): removed when the rebalance deadline passes without it.
    unsynced: BTreeSet<String>,
    /// Members whose JoinGroup waits for the rebalance to complete.
    awaiting_join: BTreeSet<String>,
    /// When the rebalance in progress gives up on members that have not rejoined.
    rebalance_deadline_ms: i64,
    /// A new group waits this long for more members before its first generation.
    initial_delay_until_ms: Option<i64>,
    initial_delay_ms: i64,
    joins: u64,
}

impl Group {
    pub fn new(id: &str, initial_delay_ms: i64) -> Group {
        Group {
            id: id.to_string(),
            state: State::Empty,
            generation: 0,
            protocol_type: None,
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            pending: BTreeMap::new(),
            awaiting_sync: BTreeSet::new(),
            unsynced: BTreeSet::new(),
            awaiting_join: BTreeSet::new(),
            rebalance_deadline_ms: 0,
            initial_delay_until_ms: None,
            initial_delay_ms,
            joins: 0,
        }
    }

    /// A JoinGroup. `Err` is an immediate error answer (boxed: it is large); otherwise the member's own answer
    /// arrives in `Deliveries` (now or later) under the returned member id.
    pub fn join(
        &mut self,
        request: JoinRequest,
        new_member_id: impl FnOnce() -> String,
        now_ms: i64,
    ) -> Result<(String, Deliveries), Box<JoinResult>> {
        let refuse = |e| Err(Box::new(JoinResult::error(e, &request.member_id)));
        if request.protocols.is_empty() || request.protocol_type.is_empty() {
            return refuse(ErrorCode::InconsistentGroupProtocol);
        }
        if !self.members.is_empty() && self.protocol_type.as_deref() != Some(&request.protocol_type)
        {
            return refuse(ErrorCode::InconsistentGroupProtocol);
        }
        let others_share_a_protocol = self
            .members
            .values()
            .filter(|m| m.id != request.member_id)
            .all(|m| {
                m.protocols
                    .iter()
                    .any(|(p, _)| request.protocols.iter().any(|(q, _)| p == q))
            });
        if !others_share_a_protocol {
            return refuse(ErrorCode::InconsistentGroupProtocol);
        }
        let static_id = request
            .instance_id
            .as_ref()
            .and_then(|i| self.member_by_instance(i));
        // Kafka's `group.max.size`: a full group takes back its own members only.
        let known = self.members.contains_key(&request.member_id)
            || self.pending.contains_key(&request.member_id)
            || static_id.is_some();
        if !known && self.members.len() + self.pending.len() >= super::limits::CLASSIC_MEMBERS_MAX {
            return refuse(ErrorCode::GroupMaxSizeReached);
        }
        let member_id = if request.member_id.is_empty() {
            let id = new_member_id();
            let replaced = static_id.and_then(|old| self.members.remove(&old).map(|m| (old, m)));
            match replaced {
                Some((old, mut member)) => {
                    // A static member restarted: it takes over its old slot under a new id.
                    member.id = id.clone();
                    if self.leader.as_ref() == Some(&old) {
                        self.leader = Some(id.clone());
                    }
                    self.awaiting_join.remove(&old);
                    self.awaiting_sync.remove(&old);
                    if self.unsynced.remove(&old) {
                        self.unsynced.insert(id.clone());
                    }
                    let unchanged = member.protocols == request.protocols;
                    let stays_stable = unchanged && self.state == State::Stable;
                    if stays_stable {
                        member.last_seen_ms = now_ms;
                    }
                    self.members.insert(id.clone(), member);
                    if stays_stable {
                        let mut deliveries = Deliveries::default();
                        deliveries
                            .joins
                            .push((id.clone(), self.join_result(&id, false)));
                        return Ok((id, deliveries));
                    }
                }
                None if request.require_known_member_id && request.instance_id.is_none() => {
                    self.pending
                        .insert(id.clone(), now_ms + request.session_timeout_ms);
                    return refuse(ErrorCode::MemberIdRequired).map_err(|mut r| {
                        r.member_id = id;
                        r
                    });
                }
                None => {}
            }
            id
        } else {
            if !self.members.contains_key(&request.member_id)
                && self.pending.remove(&request.member_id).is_none()
            {
                return refuse(ErrorCode::UnknownMemberId);
            }
            if let Some(m) = self.members.get(&request.member_id)
                && request.instance_id.is_some()
                && m.instance_id != request.instance_id
            {
                return refuse(ErrorCode::FencedInstanceId);
            }
            request.member_id.clone()
        };

        let existing = self.members.get(&member_id).cloned();
        let is_new = existing.is_none();
        let changed = existing
            .as_ref()
            .is_none_or(|m| m.protocols != request.protocols);
        self.joins += 1;
        let order = existing.as_ref().map_or(self.joins, |m| m.order);
        let assignment = existing.map(|m| m.assignment).unwrap_or_default();
        self.members.insert(
            member_id.clone(),
            Member {
                id: member_id.clone(),
                instance_id: request.instance_id,
                client_id: request.client_id,
                client_host: request.client_host,
                session_timeout_ms: request.session_timeout_ms,
                rebalance_timeout_ms: request.rebalance_timeout_ms,
                protocols: request.protocols,
                assignment,
                last_seen_ms: now_ms,
                joined: true,
                order,
            },
        );
        self.protocol_type = Some(request.protocol_type);
        self.awaiting_join.insert(member_id.clone());

        let mut deliveries = Deliveries::default();
        let is_leader = self.leader.as_ref() == Some(&member_id);
        match self.state {
            State::Stable if !changed && !is_leader => {
                // Nothing changed: answer with the current generation, no rebalance.
                self.awaiting_join.remove(&member_id);
                deliveries
                    .joins
                    .push((member_id.clone(), self.join_result(&member_id, false)));
                return Ok((member_id, deliveries));
            }
            State::CompletingRebalance if !changed => {
                // The same metadata again (the member may have missed its JoinGroup answer):
                // the current generation, with the members for the leader, as Kafka answers;
                // a new rebalance here would form a generation nobody asked for.
                self.awaiting_join.remove(&member_id);
                deliveries
                    .joins
                    .push((member_id.clone(), self.join_result(&member_id, is_leader)));
                return Ok((member_id, deliveries));
            }
            State::PreparingRebalance => {
                // More members keep arriving: wait a little longer, within the deadline. Only a
                // new member extends the wait, as in Kafka (`newMemberAdded`): a member that
                // sends its JoinGroup again would otherwise hold the group back every time.
                if let Some(until) = self.initial_delay_until_ms.filter(|_| is_new) {
                    self.initial_delay_until_ms = Some(
                        (until.max(now_ms + self.initial_delay_ms)).min(self.rebalance_deadline_ms),
                    );
                }
            }
            _ => self.prepare_rebalance(now_ms, &mut deliveries),
        }
        self.maybe_complete_join(now_ms, &mut deliveries);
        Ok((member_id, deliveries))
    }

    /// A SyncGroup. `Ok(None)`: the member waits for the leader's assignment (it arrives in a
    /// later `Deliveries`).
    pub fn sync(
        &mut self,
        member_id: &str,
        generation: i32,
        assignments: Vec<(String, Bytes)>,
        now_ms: i64,
    ) -> Result<Deliveries, SyncResult> {
        let Some(member) = self.members.get_mut(member_id) else {
            return Err(SyncResult::error(ErrorCode::UnknownMemberId));
        };
        member.last_seen_ms = now_ms;
        if generation != self.generation {
            return Err(SyncResult::error(ErrorCode::IllegalGeneration));
        }
        let mut deliveries = Deliveries::default();
        self.unsynced.remove(member_id);
        match self.state {
            State::Empty | State::PreparingRebalance => {
                Err(SyncResult::error(ErrorCode::RebalanceInProgress))
            }
            State::Stable => {
                deliveries
                    .syncs
                    .push((member_id.to_string(), self.sync_result(member_id)));
                Ok(deliveries)
            }
            State::CompletingRebalance => {
                self.awaiting_sync.insert(member_id.to_string());
                if self.leader.as_deref() == Some(member_id) {
                    let mut given: BTreeMap<String, Bytes> = assignments.into_iter().collect();
                    for (id, member) in &mut self.members {
                        member.assignment = given.remove(id).unwrap_or_default();
                    }
                    self.state = State::Stable;
                    for id in std::mem::take(&mut self.awaiting_sync) {
                        self.touch(&id, now_ms);
                        let result = self.sync_result(&id);
                        deliveries.syncs.push((id, result));
                    }
                }
                Ok(deliveries)
            }
        }
    }

    pub fn heartbeat(&mut self, member_id: &str, generation: i32, now_ms: i64) -> ErrorCode {
        let Some(member) = self.members.get_mut(member_id) else {
            return ErrorCode::UnknownMemberId;
        };
        member.last_seen_ms = now_ms;
        // The generation first, as Kafka validates a heartbeat: a member a whole generation
        // behind has lost its partitions (ILLEGAL_GENERATION), where one of the current
        // generation is only asked to rejoin (REBALANCE_IN_PROGRESS) and keeps them.
        if generation != self.generation {
            return ErrorCode::IllegalGeneration;
        }
        match self.state {
            State::PreparingRebalance => ErrorCode::RebalanceInProgress,
            _ => ErrorCode::None,
        }
    }

    /// Removes members (LeaveGroup); per member: NONE or UNKNOWN_MEMBER_ID.
    pub fn leave(
        &mut self,
        leaving: &[(String, Option<String>)],
        now_ms: i64,
    ) -> (Vec<ErrorCode>, Deliveries) {
        let mut deliveries = Deliveries::default();
        let mut codes = Vec::new();
        let mut removed = false;
        for (member_id, instance_id) in leaving {
            let id = if member_id.is_empty() {
                instance_id
                    .as_ref()
                    .and_then(|i| self.member_by_instance(i))
            } else {
                Some(member_id.clone())
            };
            match id.filter(|id| self.members.contains_key(id)) {
                Some(id) => {
                    let member = &self.members[&id];
                    if instance_id.is_some() && member.instance_id != *instance_id {
                        codes.push(ErrorCode::FencedInstanceId);
                        continue;
                    }
                    self.remove_member(&id, &mut deliveries);
                    removed = true;
                    codes.push(ErrorCode::None);
                }
                None => codes.push(ErrorCode::UnknownMemberId),
            }
        }
        if removed {
            self.after_removal(now_ms, &mut deliveries);
        }
        (codes, deliveries)
    }

    /// Time passes: expire silent members, finish or restart a rebalance that timed out.
    pub fn tick(&mut self, now_ms: i64) -> Deliveries {
        let mut deliveries = Deliveries::default();
        self.pending.retain(|_, until| *until > now_ms);
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| {
                // A member waiting in JoinGroup or SyncGroup is alive (Kafka's keep-alive);
                // the rebalance deadline covers it.
                !self.awaiting_join.contains(&m.id)
                    && !self.awaiting_sync.contains(&m.id)
                    && m.last_seen_ms + m.session_timeout_ms < now_ms
            })
            .map(|m| m.id.clone())
            .collect();
        for id in &expired {
            self.remove_member(id, &mut deliveries);
        }
        if !expired.is_empty() {
            self.after_removal(now_ms, &mut deliveries);
        }
        match self.state {
            State::PreparingRebalance => self.maybe_complete_join(now_ms, &mut deliveries),
            State::CompletingRebalance | State::Stable
                if !self.unsynced.is_empty() && now_ms >= self.rebalance_deadline_ms =>
            {
                // Members that never sent their SyncGroup (the leader among them, if the
                // assignment never came) are out, and the rest rebalance without them, as
                // Kafka's `expirePendingSync` does: kept, they would hold the next rebalance
                // until its deadline too.
                for id in std::mem::take(&mut self.unsynced) {
                    self.remove_member(&id, &mut deliveries);
                }
                self.after_removal(now_ms, &mut deliveries);
            }
            _ => {}
        }
        deliveries
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.pending.is_empty()
    }

    /// Kafka's static membership fencing: a request naming `instance` from a member id that
    /// is no longer the instance's (a newer member took its place) is FENCED_INSTANCE_ID.
    pub fn is_fenced(&self, member_id: &str, instance: Option<&str>) -> bool {
        instance
            .and_then(|i| self.member_by_instance(i))
            .is_some_and(|current| current != member_id)
    }

    /// A member was heard from (or answered) now: its session timeout counts from here.
    fn touch(&mut self, id: &str, now_ms: i64) {
        if let Some(member) = self.members.get_mut(id) {
            member.last_seen_ms = now_ms;
        }
    }

    fn member_by_instance(&self, instance: &str) -> Option<String> {
        self.members
            .values()
            .find(|m| m.instance_id.as_deref() == Some(instance))
            .map(|m| m.id.clone())
    }

    fn remove_member(&mut self, id: &str, deliveries: &mut Deliveries) {
        self.unsynced.remove(id);
        if self.members.remove(id).is_some() {
            deliveries.removed.push(id.to_string());
        }
        if self.awaiting_join.remove(id) {
            deliveries.joins.push((
                id.to_string(),
                JoinResult::error(ErrorCode::UnknownMemberId, id),
            ));
        }
        if self.awaiting_sync.remove(id) {
            deliveries.syncs.push((
                id.to_string(),
                SyncResult::error(ErrorCode::UnknownMemberId),
            ));
        }
        if self.leader.as_deref() == Some(id) {
            self.leader = None;
        }
    }

    fn after_removal(&mut self, now_ms: i64, deliveries: &mut Deliveries) {
        if self.members.is_empty() {
            self.state = State::Empty;
            self.generation += 1;
            // The protocol type stays, as in Kafka: an Empty group is still a consumer group.
            self.protocol = None;
            self.leader = None;
            self.initial_delay_until_ms = None;
        } else if self.state == State::PreparingRebalance {
            self.maybe_complete_join(now_ms, deliveries);
        } else {
            self.prepare_rebalance(now_ms, deliveries);
        }
    }

    fn prepare_rebalance(&mut self, now_ms: i64, deliveries: &mut Deliveries) {
        // Followers waiting on an assignment must rejoin instead; their sessions start again
        // with the answer (they did not heartbeat while they waited).
        for id in std::mem::take(&mut self.awaiting_sync) {
            self.touch(&id, now_ms);
            deliveries
                .syncs
                .push((id, SyncResult::error(ErrorCode::RebalanceInProgress)));
        }
        let first_generation = self.state == State::Empty;
        self.state = State::PreparingRebalance;
        self.unsynced.clear();
        for member in self.members.values_mut() {
            member.joined = self.awaiting_join.contains(&member.id);
        }
        let timeout = self
            .members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0);
        self.rebalance_deadline_ms = now_ms + timeout;
        self.initial_delay_until_ms = (first_generation && self.initial_delay_ms > 0)
            .then(|| (now_ms + self.initial_delay_ms).min(self.rebalance_deadline_ms));
    }

    fn maybe_complete_join(&mut self, now_ms: i64, deliveries: &mut Deliveries) {
        if self.state != State::PreparingRebalance {
            return;
        }
        // A member handed an id (MEMBER_ID_REQUIRED) is expected back, as in Kafka
        // (`hasAllMembersJoined`): members starting together form one generation, not one
        // each. An id that lapses unused stops holding the group back.
        let all_joined = self.members.values().all(|m| m.joined) && self.pending.is_empty();
        let delay_over = self.initial_delay_until_ms.is_none_or(|t| now_ms >= t);
        let timed_out = now_ms >= self.rebalance_deadline_ms;
        if !(all_joined && delay_over || timed_out) {
            return;
        }
        // Members that did not rejoin in time are out.
        let late: Vec<String> = self
            .members
            .values()
            .filter(|m| !m.joined)
            .map(|m| m.id.clone())
            .collect();
        for id in &late {
            self.remove_member(id, deliveries);
        }
        self.initial_delay_until_ms = None;
        self.generation += 1;
        if self.members.is_empty() {
            self.state = State::Empty;
            self.protocol = None;
            return;
        }
        self.protocol = self.select_protocol();
        if self
            .leader
            .as_ref()
            .is_none_or(|l| !self.members.contains_key(l))
        {
            self.leader = self
                .members
                .values()
                .min_by_key(|m| m.order)
                .map(|m| m.id.clone());
        }
        self.state = State::CompletingRebalance;
        self.unsynced = self.members.keys().cloned().collect();
        self.rebalance_deadline_ms = now_ms
            + self
                .members
                .values()
                .map(|m| m.rebalance_timeout_ms)
                .max()
                .unwrap_or(0);
        for id in std::mem::take(&mut self.awaiting_join) {
            // Its session starts again with its answer, as Kafka's does: a member that waited
            // in JoinGroup longer than its session timeout must not expire before its
            // SyncGroup arrives.
            self.touch(&id, now_ms);
            let leader = self.leader.as_deref() == Some(id.as_str());
            let result = self.join_result(&id, leader);
            deliveries.joins.push((id, result));
        }
    }

    /// The protocol every member supports that most members prefer (Kafka's vote).
    fn select_protocol(&self) -> Option<String> {
        let first = self.members.values().next()?;
        let candidates: Vec<&String> = first
            .protocols
            .iter()
            .map(|(p, _)| p)
            .filter(|p| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(q, _)| q == *p))
            })
            .collect();
        let mut votes: BTreeMap<&String, usize> = BTreeMap::new();
        for member in self.members.values() {
            if let Some((p, _)) = member
                .protocols
                .iter()
                .find(|(p, _)| candidates.contains(&p))
            {
                *votes.entry(p).or_default() += 1;
            }
        }
        candidates
            .iter()
            .max_by_key(|p| {
                (
                    votes.get(*p).copied().unwrap_or(0),
                    std::cmp::Reverse(candidates.iter().position(|c| c == *p)),
                )
            })
            .map(|p| (*p).clone())
    }

    fn join_result(&self, member_id: &str, leader: bool) -> JoinResult {
        let protocol = self.protocol.clone();
        let members = if leader {
            self.members
                .values()
                .map(|m| {
                    let metadata = m
                        .protocols
                        .iter()
                        .find(|(p, _)| Some(p) == protocol.as_ref())
                        .map(|(_, meta)| meta.clone())
                        .unwrap_or_default();
                    (m.id.clone(), m.instance_id.clone(), metadata)
                })
                .collect()
        } else {
            Vec::new()
        };
        JoinResult {
            error: ErrorCode::None,
            generation: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol_name: protocol,
            leader: self.leader.clone().unwrap_or_default(),
            member_id: member_id.to_string(),
            members,
        }
    }

    fn sync_result(&self, member_id: &str) -> SyncResult {
        SyncResult {
            error: ErrorCode::None,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol.clone(),
            assignment: self
                .members
                .get(member_id)
                .map(|m| m.assignment.clone())
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
#[path = "classic_tests.rs"]
mod tests;
