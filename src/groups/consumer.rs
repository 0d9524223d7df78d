//! KIP-848 consumer groups (pure): the state machine behind `ConsumerGroupHeartbeat`, after
//! Kafka's `GroupMetadataManager` and `CurrentAssignmentBuilder`.
//!
//! - The **group epoch** rises whenever membership, a subscription or a subscribed topic's
//!   partition count changes. The server-side assignor then computes a **target assignment**
//!   at that epoch.
//! - Each member is reconciled toward its target on its own heartbeats: partitions it must give
//!   up are *pending revocation* (it stays at its epoch), and the revocation is confirmed by the
//!   partitions' **absence** from the owned list it sends — level-triggered, so a lost heartbeat
//!   costs a round trip, never correctness. Then it moves to the target epoch.
//! - A partition is handed to a new owner only once no other member holds it (`owners`): a
//!   member waiting for such a partition is in `UnreleasedPartitions` and gets it on a later
//!   heartbeat. No global barrier, no stop-the-world.
//! - Silent members are removed after the session timeout; a member that does not revoke within
//!   its rebalance timeout is removed too.
//! - While the group is settling (not stable, or its epoch moved in the last few seconds) the
//!   heartbeat interval handed to members drops to `SETTLING_HEARTBEAT_MS`: a member holding
//!   partitions that others wait for hears about it in a quarter second instead of a whole
//!   interval (5 s by default), so ten consumers started together are all assigned in well
//!   under a second. Clients take the interval from every response, as the protocol says.

use super::assignor::{self, Assignor, MemberSpec, Partitions};
use crate::protocol::ErrorCode;
use crate::protocol::messages::ConsumerGroupHeartbeatRequest;
use crate::protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use uuid::Uuid;

/// Member epoch of a heartbeat that leaves the group.
pub const LEAVE_EPOCH: i32 = -1;
/// Member epoch of a static member leaving for a while (it keeps its partitions).
pub const STATIC_LEAVE_EPOCH: i32 = -2;

/// The heartbeat interval while a group settles (at most the configured one).
pub const SETTLING_HEARTBEAT_MS: i32 = 250;
/// How long after its epoch last moved a group counts as settling: consumers started together
/// join over about this long.
pub const SETTLING_WINDOW_MS: i64 = 3_000;

/// The topics a group can subscribe to, as the metadata state knows them.
pub trait TopicImage {
    /// Id and partition count of a topic.
    fn by_name(&self, name: &str) -> Option<(Uuid, i32)>;
    /// Name of a topic.
    fn name_of(&self, id: &Uuid) -> Option<String>;
    /// Every topic, for regular-expression subscriptions.
    fn all(&self) -> Vec<(String, Uuid, i32)>;
    /// Changes whenever the topics or their partition counts do.
    fn version(&self) -> u64;
}

/// The coordinator's settings for consumer groups.
#[derive(Debug, Clone, Copy)]
pub struct ConsumerGroupSettings {
    pub heartbeat_interval_ms: i32,
    pub session_timeout_ms: i64,
    /// Largest number of members (Kafka's group.consumer.max.size).
    pub max_size: usize,
}

/// A heartbeat refused: the error code and message the response carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupError {
    pub code: ErrorCode,
    pub message: String,
}

fn refuse<T>(code: ErrorCode, message: impl Into<String>) -> Result<T, GroupError> {
    Err(GroupError {
        code,
        message: message.into(),
    })
}

/// A heartbeat answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatReply {
    pub member_id: String,
    pub member_epoch: i32,
    pub heartbeat_interval_ms: i32,
    /// The member's partitions, sent on a full request and whenever they changed.
    pub assignment: Option<Partitions>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// Reconciled with its target.
    Stable,
    /// Must give partitions up (confirmed by their absence) before it can advance.
    UnrevokedPartitions,
    /// At the target epoch, waiting for partitions other members still hold.
    UnreleasedPartitions,
}

impl MemberState {
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Stable => "stable",
            MemberState::UnrevokedPartitions => "unrevoked_partitions",
            MemberState::UnreleasedPartitions => "unreleased_partitions",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub id: String,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub epoch: i32,
    pub previous_epoch: i32,
    pub state: MemberState,
    // Shared, not copied, when a heartbeat works on a copy of the member.
    pub subscribed_names: Arc<[String]>,
    pub subscribed_regex: Option<String>,
    pub server_assignor: Option<Assignor>,
    pub rebalance_timeout_ms: i32,
    /// Partitions the member may consume.
    pub assigned: Partitions,
    /// Partitions it must give up.
    pub pending_revocation: Partitions,
    /// Topics its subscription resolves to now, with their partition counts.
    resolved: Arc<BTreeMap<Uuid, i32>>,
    pub session_deadline_ms: i64,
    pub revocation_deadline_ms: Option<i64>,
}

impl Member {
    fn new(id: &str, client_id: &str, client_host: &str) -> Member {
        Member {
            id: id.to_string(),
            instance_id: None,
            rack_id: None,
            client_id: client_id.to_string(),
            client_host: client_host.to_string(),
            epoch: 0,
            previous_epoch: 0,
            state: MemberState::Stable,
            subscribed_names: Arc::new([]),
            subscribed_regex: None,
            server_assignor: None,
            rebalance_timeout_ms: 0,
            assigned: Partitions::new(),
            pending_revocation: Partitions::new(),
            resolved: Arc::default(),
            session_deadline_ms: 0,
            revocation_deadline_ms: None,
        }
    }

    fn set_epoch(&mut self, epoch: i32) {
        if epoch != self.epoch {
            self.previous_epoch = self.epoch;
            self.epoch = epoch;
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ConsumerGroup {
    pub id: String,
    /// Bumped on every change of membership, subscriptions or subscribed topics.
    pub epoch: i32,
    /// The group epoch the target assignment was computed at.
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, Member>,
    /// Member id → the partitions the assignor wants it to have.
    pub target: BTreeMap<String, Partitions>,
    /// The assignor the target was computed with.
    pub assignor: Option<Assignor>,
    /// Partition → epoch of the member holding it (assigned or pending revocation).
    owners: BTreeMap<(Uuid, i32), i32>,
    /// Subscribed topics and their partition counts when the epoch last moved.
    subscribed_topics: BTreeMap<Uuid, i32>,
    /// The topics version the members' subscriptions were resolved against.
    resolved_at: Option<u64>,
    /// When the group epoch last moved.
    epoch_changed_ms: i64,
}

impl ConsumerGroup {
    pub fn new(id: &str) -> ConsumerGroup {
        ConsumerGroup {
            id: id.to_string(),
            ..Default::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The topics the members' subscriptions resolved to at the last heartbeat.
    pub fn subscribed_topic_ids(&self) -> impl Iterator<Item = &Uuid> {
        self.subscribed_topics.keys()
    }

    /// Kafka's consumer group states.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.epoch != self.assignment_epoch {
            "Assigning"
        } else if self
            .members
            .values()
            .any(|m| m.state != MemberState::Stable || m.epoch != self.assignment_epoch)
        {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    /// Handles one `ConsumerGroupHeartbeat`.
    pub fn heartbeat(
        &mut self,
        request: &ConsumerGroupHeartbeatRequest,
        client_id: &str,
        client_host: &str,
        topics: &dyn TopicImage,
        settings: &ConsumerGroupSettings,
        now_ms: i64,
    ) -> Result<HeartbeatReply, GroupError> {
        validate(request)?;
        if request.member_epoch == LEAVE_EPOCH || request.member_epoch == STATIC_LEAVE_EPOCH {
            return self.leave(&request.member_id, request.member_epoch, settings, now_ms);
        }
        let owned = request.topic_partitions.as_deref().map(partitions_of);
        let mut changed = false;
        let mut member = if request.member_epoch == 0 {
            let (member, rebalance) =
                self.joining_member(request, client_id, client_host, settings)?;
            changed = rebalance;
            member
        } else {
            let Some(member) = self.members.get(&request.member_id) else {
                return refuse(
                    ErrorCode::UnknownMemberId,
                    format!("member {} is not in group {}", request.member_id, self.id),
                );
            };
            check_epoch(member, request.member_epoch, owned.as_ref())?;
            member.clone()
        };
        changed |= update_subscription(&mut member, request);
        if let Some(rack) = &request.rack_id {
            member.rack_id = Some(rack.clone());
        }
        if request.rebalance_timeout_ms >= 0 {
            member.rebalance_timeout_ms = request.rebalance_timeout_ms;
        }
        member.session_deadline_ms = now_ms + settings.session_timeout_ms;
        self.members.insert(member.id.clone(), member);

        let resolve = changed.then_some(request.member_id.as_str());
        if self.subscriptions_moved(topics, resolve) || changed {
            self.bump(now_ms);
        }
        if self.epoch > self.assignment_epoch {
            self.compute_target();
        }

        // Reconciled out of the map (its partitions released meanwhile), then put back.
        let Some(member) = self.members.remove(&request.member_id) else {
            return refuse(
                ErrorCode::UnknownMemberId,
                format!("member {} is not in group {}", request.member_id, self.id),
            );
        };
        self.release(&member);
        let assigned_before = member.assigned.clone();
        let empty = Partitions::new();
        let target = self.target.get(&member.id).unwrap_or(&empty);
        let mut updated = reconcile(
            member,
            self.assignment_epoch,
            target,
            owned.as_ref(),
            &self.owners,
        );
        self.hold(&updated);
        updated.revocation_deadline_ms = match updated.state {
            MemberState::UnrevokedPartitions => Some(
                updated
                    .revocation_deadline_ms
                    .unwrap_or(now_ms + i64::from(updated.rebalance_timeout_ms.max(0))),
            ),
            _ => None,
        };
        // A rejoin (epoch 0) is a full request, so only a known member's change matters here.
        let full = request.member_epoch == 0
            || (request.rebalance_timeout_ms != -1
                && request.subscribed_topic_names.is_some()
                && request.topic_partitions.is_some());
        let assignment_changed = assigned_before != updated.assigned;
        let mut reply = HeartbeatReply {
            member_id: updated.id.clone(),
            member_epoch: updated.epoch,
            heartbeat_interval_ms: 0,
            assignment: (full || assignment_changed).then(|| updated.assigned.clone()),
        };
        self.members.insert(updated.id.clone(), updated);
        reply.heartbeat_interval_ms = self.heartbeat_interval_ms(settings, now_ms);
        Ok(reply)
    }

    fn bump(&mut self, now_ms: i64) {
        self.epoch += 1;
        self.epoch_changed_ms = now_ms;
    }

    /// The interval members are told to heartbeat at: short while the group settles.
    pub fn heartbeat_interval_ms(&self, settings: &ConsumerGroupSettings, now_ms: i64) -> i32 {
        // A static member away (epoch -2) keeps the group from Kafka's Stable state but does
        // not need anyone to hurry.
        let reconciling = self.members.values().any(|m| {
            m.epoch != STATIC_LEAVE_EPOCH
                && (m.state != MemberState::Stable || m.epoch != self.assignment_epoch)
        });
        let settling = self.epoch != self.assignment_epoch
            || reconciling
            || now_ms - self.epoch_changed_ms < SETTLING_WINDOW_MS;
        if settling {
            settings.heartbeat_interval_ms.min(SETTLING_HEARTBEAT_MS)
        } else {
            settings.heartbeat_interval_ms
        }
    }

    /// The member a heartbeat with epoch 0 joins as: new, a static member taking its slot
    /// back, or a known member starting over (its partitions are freed); and whether that
    /// changes the membership (a returning static member does not).
    fn joining_member(
        &mut self,
        request: &ConsumerGroupHeartbeatRequest,
        client_id: &str,
        client_host: &str,
        settings: &ConsumerGroupSettings,
    ) -> Result<(Member, bool), GroupError> {
        if let Some(instance) = &request.instance_id {
            let existing = self
                .members
                .values()
                .find(|m| m.instance_id.as_deref() == Some(instance))
                .cloned();
            if let Some(old) = existing {
                if old.id == request.member_id {
                    self.remove(&old.id);
                } else if old.epoch != STATIC_LEAVE_EPOCH {
                    return refuse(
                        ErrorCode::UnreleasedInstanceId,
                        format!(
                            "static member {instance} of group {} is still held by member {}",
                            self.id, old.id
                        ),
                    );
                } else {
                    // The static member comes back: same partitions and epoch, new member id,
                    // no rebalance.
                    self.members.remove(&old.id);
                    if let Some(target) = self.target.remove(&old.id) {
                        self.target.insert(request.member_id.clone(), target);
                    }
                    let mut member = old;
                    member.id = request.member_id.clone();
                    member.epoch = member.previous_epoch;
                    member.client_id = client_id.to_string();
                    member.client_host = client_host.to_string();
                    self.members.insert(member.id.clone(), member.clone());
                    return Ok((member, false));
                }
            }
        } else if self.members.contains_key(&request.member_id) {
            self.remove(&request.member_id);
        }
        if self.members.len() >= settings.max_size {
            return refuse(
                ErrorCode::GroupMaxSizeReached,
                format!(
                    "group {} has reached its maximum size of {}",
                    self.id, settings.max_size
                ),
            );
        }
        let mut member = Member::new(&request.member_id, client_id, client_host);
        member.instance_id = request.instance_id.clone();
        Ok((member, true))
    }

    fn leave(
        &mut self,
        member_id: &str,
        epoch: i32,
        settings: &ConsumerGroupSettings,
        now_ms: i64,
    ) -> Result<HeartbeatReply, GroupError> {
        let Some(member) = self.members.get_mut(member_id) else {
            return refuse(
                ErrorCode::UnknownMemberId,
                format!("member {member_id} is not in group {}", self.id),
            );
        };
        if epoch == STATIC_LEAVE_EPOCH && member.instance_id.is_some() {
            // Leaving for a while: the partitions stay with the instance until it returns or
            // its session lapses; those being revoked are let go now.
            let mut left = member.clone();
            self.release(&left);
            left.pending_revocation.clear();
            left.set_epoch(STATIC_LEAVE_EPOCH);
            left.state = MemberState::Stable;
            left.revocation_deadline_ms = None;
            // Owned partitions stay held at the epoch they were assigned in.
            for (topic, partitions) in &left.assigned {
                for &p in partitions {
                    self.owners.insert((*topic, p), left.previous_epoch);
                }
            }
            self.members.insert(left.id.clone(), left);
        } else {
            self.remove(member_id);
            self.bump(now_ms);
        }
        Ok(HeartbeatReply {
            member_id: member_id.to_string(),
            member_epoch: epoch,
            heartbeat_interval_ms: self.heartbeat_interval_ms(settings, now_ms),
            assignment: None,
        })
    }

    /// Removes members whose session lapsed or who did not revoke in time; returns their ids.
    pub fn expire(&mut self, now_ms: i64) -> Vec<String> {
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| {
                m.session_deadline_ms <= now_ms
                    || m.revocation_deadline_ms.is_some_and(|d| d <= now_ms)
            })
            .map(|m| m.id.clone())
            .collect();
        for id in &expired {
            self.remove(id);
        }
        if !expired.is_empty() {
            self.bump(now_ms);
        }
        expired
    }

    /// Whether a fetch of committed offsets by this member and epoch may go on. A request with
    /// a negative epoch and no member comes from outside the group and is only accepted while
    /// the group is empty, as in Kafka.
    pub fn check_member(&self, member_id: &str, epoch: i32) -> ErrorCode {
        self.check_commit(member_id, epoch, &[])
    }

    /// Whether an offset commit of `partitions` by this member at this epoch may go on: at its
    /// epoch, as in Kafka; or at its previous one when it still holds every partition it
    /// commits — the commit crossed the heartbeat response that moved the member on, and no
    /// one else can have consumed those partitions since.
    pub fn check_commit(
        &self,
        member_id: &str,
        epoch: i32,
        partitions: &[(Uuid, i32)],
    ) -> ErrorCode {
        if epoch < 0 && member_id.is_empty() && self.members.is_empty() {
            return ErrorCode::None;
        }
        let Some(m) = self.members.get(member_id) else {
            return ErrorCode::UnknownMemberId;
        };
        let holds = |(topic, p): &(Uuid, i32)| {
            [&m.assigned, &m.pending_revocation]
                .iter()
                .any(|set| set.get(topic).is_some_and(|ps| ps.contains(p)))
        };
        let crossed = epoch >= 0
            && epoch == m.previous_epoch
            && !partitions.is_empty()
            && partitions.iter().all(holds);
        if epoch == m.epoch || crossed {
            ErrorCode::None
        } else {
            ErrorCode::StaleMemberEpoch
        }
    }

    fn remove(&mut self, member_id: &str) {
        if let Some(member) = self.members.remove(member_id) {
            self.release(&member);
            self.target.remove(member_id);
            self.subscribed_topics = self.union_of_subscriptions();
        }
    }

    /// Frees the partitions a member holds.
    fn release(&mut self, member: &Member) {
        for (topic, partitions) in member.assigned.iter().chain(&member.pending_revocation) {
            for &p in partitions {
                self.owners.remove(&(*topic, p));
            }
        }
    }

    fn hold(&mut self, member: &Member) {
        for (topic, partitions) in member.assigned.iter().chain(&member.pending_revocation) {
            for &p in partitions {
                self.owners.insert((*topic, p), member.epoch);
            }
        }
    }

    /// Brings the members' resolved subscriptions up to date; returns whether the subscribed
    /// topics (or their partition counts) changed. Everything is resolved again only when the
    /// topics changed; otherwise only `member`, whose subscription changed (or who is new).
    /// A steady heartbeat resolves nothing.
    fn subscriptions_moved(&mut self, topics: &dyn TopicImage, member: Option<&str>) -> bool {
        let version = topics.version();
        // Heartbeats copy the topics before they queue for the group, so one may arrive with
        // an older copy than the last: only a newer one resolves everything again (the
        // version only grows), or an older copy would undo what a newer one resolved.
        let all_again = self.resolved_at.is_none_or(|at| version > at);
        if !all_again && member.is_none() {
            return false;
        }
        let mut resolver = Resolver {
            topics,
            all: None,
            patterns: BTreeMap::new(),
        };
        if all_again {
            self.resolved_at = Some(version);
            for m in self.members.values_mut() {
                m.resolved = Arc::new(resolver.resolve(m));
            }
        } else if let Some(m) = member.and_then(|id| self.members.get_mut(id)) {
            m.resolved = Arc::new(resolver.resolve(m));
            // Resolved against an older copy than the rest: the next heartbeat with a newer
            // one resolves everything again, this member included.
            if self.resolved_at.is_some_and(|at| version < at) {
                self.resolved_at = Some(version);
            }
        }
        let subscribed = self.union_of_subscriptions();
        let moved = subscribed != self.subscribed_topics;
        self.subscribed_topics = subscribed;
        moved
    }

    /// Every topic some member's subscription resolves to, with its partition count.
    fn union_of_subscriptions(&self) -> BTreeMap<Uuid, i32> {
        self.members
            .values()
            .flat_map(|m| m.resolved.iter().map(|(id, n)| (*id, *n)))
            .collect()
    }

    /// The assignor most members ask for; the default when none does.
    fn chosen_assignor(&self) -> Assignor {
        let mut votes: BTreeMap<Assignor, usize> = BTreeMap::new();
        for m in self.members.values() {
            if let Some(a) = m.server_assignor {
                *votes.entry(a).or_default() += 1;
            }
        }
        votes
            .into_iter()
            .max_by_key(|(a, n)| (*n, std::cmp::Reverse(*a)))
            .map_or(Assignor::ALL[0], |(a, _)| a)
    }

    fn compute_target(&mut self) {
        let assignor = self.chosen_assignor();
        let empty = Partitions::new();
        let specs: Vec<MemberSpec<'_>> = self
            .members
            .values()
            .map(|m| MemberSpec {
                id: &m.id,
                subscribed: m.resolved.keys().copied().collect(),
                current: self.target.get(&m.id).unwrap_or(&empty),
            })
            .collect();
        let target = assignor::assign(assignor, &specs, &self.subscribed_topics);
        self.target = target;
        self.assignor = Some(assignor);
        self.assignment_epoch = self.epoch;
    }
}

/// Kafka's request checks (`throwIfConsumerGroupHeartbeatRequestIsInvalid`).
fn validate(r: &ConsumerGroupHeartbeatRequest) -> Result<(), GroupError> {
    let invalid = |message: &str| refuse(ErrorCode::InvalidRequest, message);
    if r.group_id.is_empty() {
        return invalid("GroupId can't be empty.");
    }
    if r.member_id.is_empty() {
        return invalid("MemberId can't be empty.");
    }
    if r.instance_id.as_deref() == Some("") {
        return invalid("InstanceId can't be empty.");
    }
    if r.rack_id.as_deref() == Some("") {
        return invalid("RackId can't be empty.");
    }
    match r.member_epoch {
        0 => {
            if r.rebalance_timeout_ms == -1 {
                return invalid("RebalanceTimeoutMs must be provided in first request.");
            }
            if r.topic_partitions.as_ref().is_none_or(|t| !t.is_empty()) {
                return invalid("TopicPartitions must be empty when (re-)joining.");
            }
            if r.subscribed_topic_names.is_none() && r.subscribed_topic_regex.is_none() {
                return invalid(
                    "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.",
                );
            }
        }
        STATIC_LEAVE_EPOCH if r.instance_id.is_none() => {
            return invalid("InstanceId can't be null.");
        }
        e if e < STATIC_LEAVE_EPOCH => return invalid("MemberEpoch is invalid."),
        _ => {}
    }
    if let Some(name) = &r.server_assignor
        && Assignor::from_name(name).is_none()
    {
        let known: Vec<&str> = Assignor::ALL.iter().map(|a| a.name()).collect();
        return refuse(
            ErrorCode::UnsupportedAssignor,
            format!(
                "ServerAssignor {name} is not supported. Supported assignors: {}.",
                known.join(", ")
            ),
        );
    }
    if let Some(pattern) = &r.subscribed_topic_regex
        && let Err(e) = compile(pattern)
    {
        return refuse(
            ErrorCode::InvalidRegularExpression,
            format!("SubscribedTopicRegex `{pattern}` is not a valid regular expression: {e}"),
        );
    }
    Ok(())
}

/// Resolves subscriptions against the topics, listing them and matching each pattern once.
struct Resolver<'a> {
    topics: &'a dyn TopicImage,
    all: Option<Vec<(String, Uuid, i32)>>,
    patterns: BTreeMap<String, BTreeMap<Uuid, i32>>,
}

impl Resolver<'_> {
    fn resolve(&mut self, member: &Member) -> BTreeMap<Uuid, i32> {
        let mut resolved: BTreeMap<Uuid, i32> = member
            .subscribed_names
            .iter()
            .filter_map(|name| self.topics.by_name(name))
            .collect();
        if let Some(pattern) = &member.subscribed_regex {
            if !self.patterns.contains_key(pattern) {
                let all = self.all.get_or_insert_with(|| self.topics.all());
                let matched = match compile(pattern) {
                    Ok(regex) => all
                        .iter()
                        .filter(|(name, _, _)| regex.is_match(name))
                        .map(|(_, id, n)| (*id, *n))
                        .collect(),
                    Err(_) => BTreeMap::new(),
                };
                self.patterns.insert(pattern.clone(), matched);
            }
            resolved.extend(&self.patterns[pattern]);
        }
        resolved
    }
}

/// A subscription pattern matches whole topic names, as Java's `Matcher.matches`.
fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&format!("^(?:{pattern})$"))
}

/// Fencing: a member must present its epoch, or its previous one while the owned partitions
/// show it did not receive the response that moved it on.
fn check_epoch(member: &Member, epoch: i32, owned: Option<&Partitions>) -> Result<(), GroupError> {
    let fenced = if epoch > member.epoch {
        true
    } else if epoch < member.epoch {
        epoch != member.previous_epoch || owned.is_none_or(|o| !is_subset(o, &member.assigned))
    } else {
        false
    };
    if fenced {
        return refuse(
            ErrorCode::FencedMemberEpoch,
            format!(
                "member {} sent epoch {epoch}; its epoch is {}. It must rejoin.",
                member.id, member.epoch
            ),
        );
    }
    Ok(())
}

/// Applies the subscription fields a heartbeat carries; returns whether they changed.
fn update_subscription(member: &mut Member, request: &ConsumerGroupHeartbeatRequest) -> bool {
    let mut changed = false;
    if let Some(names) = &request.subscribed_topic_names {
        let mut names = names.clone();
        names.sort();
        names.dedup();
        changed |= *names != *member.subscribed_names;
        member.subscribed_names = names.into();
    }
    if let Some(pattern) = &request.subscribed_topic_regex {
        let pattern = (!pattern.is_empty()).then(|| pattern.clone());
        changed |= pattern != member.subscribed_regex;
        member.subscribed_regex = pattern;
    }
    if let Some(name) = &request.server_assignor {
        let assignor = Assignor::from_name(name);
        changed |= assignor != member.server_assignor;
        member.server_assignor = assignor;
    }
    changed
}

/// Moves a member toward its target (Kafka's `CurrentAssignmentBuilder.build`). `owners` holds
/// the partitions other members hold.
fn reconcile(
    member: Member,
    target_epoch: i32,
    target: &Partitions,
    owned: Option<&Partitions>,
    owners: &BTreeMap<(Uuid, i32), i32>,
) -> Member {
    match member.state {
        MemberState::Stable if member.epoch == target_epoch => member,
        MemberState::UnrevokedPartitions if owns_any(owned, &member.pending_revocation) => member,
        _ => next_assignment(member, target_epoch, target, owned, owners),
    }
}

/// Kafka's `computeNextAssignment`: keep what stays, revoke what goes (staying at the current
/// epoch until the member confirms), then take what is free and move to the target epoch.
fn next_assignment(
    mut member: Member,
    target_epoch: i32,
    target: &Partitions,
    owned: Option<&Partitions>,
    owners: &BTreeMap<(Uuid, i32), i32>,
) -> Member {
    let mut kept = Partitions::new();
    let mut revoking = Partitions::new();
    let mut adding = Partitions::new();
    let mut unreleased = false;
    let empty = BTreeSet::new();
    let topics: BTreeSet<&Uuid> = target.keys().chain(member.assigned.keys()).collect();
    for topic in topics {
        let wanted = target.get(topic).unwrap_or(&empty);
        let current = member.assigned.get(topic).unwrap_or(&empty);
        let keep: BTreeSet<i32> = current.intersection(wanted).copied().collect();
        let revoke: BTreeSet<i32> = current.difference(&keep).copied().collect();
        let mut add: BTreeSet<i32> = wanted.difference(&keep).copied().collect();
        let before = add.len();
        add.retain(|p| !owners.contains_key(&(*topic, *p)));
        unreleased |= add.len() != before;
        for (set, out) in [
            (keep, &mut kept),
            (revoke, &mut revoking),
            (add, &mut adding),
        ] {
            if !set.is_empty() {
                out.insert(*topic, set);
            }
        }
    }
    if !revoking.is_empty() && owns_any(owned, &revoking) {
        member.state = MemberState::UnrevokedPartitions;
        member.assigned = kept;
        member.pending_revocation = revoking;
        return member;
    }
    for (topic, partitions) in adding {
        kept.entry(topic).or_default().extend(partitions);
    }
    member.state = if unreleased {
        MemberState::UnreleasedPartitions
    } else {
        MemberState::Stable
    };
    member.set_epoch(target_epoch);
    member.assigned = kept;
    member.pending_revocation = Partitions::new();
    member
}

/// Whether the owned list still contains any of `partitions` (an unknown list is assumed to).
fn owns_any(owned: Option<&Partitions>, partitions: &Partitions) -> bool {
    let Some(owned) = owned else { return true };
    partitions
        .iter()
        .any(|(t, ps)| owned.get(t).is_some_and(|o| !o.is_disjoint(ps)))
}

fn is_subset(small: &Partitions, big: &Partitions) -> bool {
    small
        .iter()
        .all(|(t, ps)| ps.is_empty() || big.get(t).is_some_and(|b| ps.is_subset(b)))
}

/// Partitions as a member reports them, by topic.
pub fn partitions_of(list: &[TopicPartitions]) -> Partitions {
    let mut out = Partitions::new();
    for t in list {
        if !t.partitions.is_empty() {
            out.entry(t.topic_id).or_default().extend(&t.partitions);
        }
    }
    out
}

/// The wire form of `partitions` (the inverse of `partitions_of`), as a member reports them.
pub fn topic_partitions(partitions: &Partitions) -> Vec<TopicPartitions> {
    partitions
        .iter()
        .map(|(topic, ps)| TopicPartitions {
            topic_id: *topic,
            partitions: ps.iter().copied().collect(),
            ..Default::default()
        })
        .collect()
}

impl TopicImage for crate::metadata::state::MetadataState {
    fn by_name(&self, name: &str) -> Option<(Uuid, i32)> {
        self.topic(name).map(|t| (t.id, t.partitions.len() as i32))
    }

    fn name_of(&self, id: &Uuid) -> Option<String> {
        self.topic_by_id(id).map(|t| t.name.clone())
    }

    fn all(&self) -> Vec<(String, Uuid, i32)> {
        self.topics()
            .map(|t| (t.name.clone(), t.id, t.partitions.len() as i32))
            .collect()
    }

    fn version(&self) -> u64 {
        self.topics_version()
    }
}

#[cfg(test)]
#[path = "consumer_tests.rs"]
mod tests;
