//! `Coordinator`: the groups this agent coordinates, in memory, with the requests that wait on
//! them. Membership is soft state (as in Kafka, members rejoin after a coordinator change);
//! committed offsets are durable in the metadata quorum.
//!
//! Classic groups: a JoinGroup or SyncGroup that must wait registers a responder under its
//! member id; every state change hands out the `Deliveries` it produced. Consumer (KIP-848)
//! groups answer every heartbeat at once. A ticker expires silent members and finishes
//! rebalances whose time is up.

use super::classic::{Deliveries, Group, JoinRequest, JoinResult, State, SyncResult};
use super::consumer::{
    ConsumerGroup, ConsumerGroupSettings, GroupError, HeartbeatReply, TopicImage,
};
use super::share::{ShareGroup, ShareGroupSettings, ShareHeartbeat, ShareReply};
use crate::clock::Clock;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ConsumerGroupHeartbeatRequest;
use crate::random::Rng;
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

/// A classic group's state and generation, to log when they change.
type Seen = (State, i32);

impl Slot {
    fn seen(&self) -> Seen {
        (self.group.state, self.group.generation)
    }

    /// Logs a change of state or generation since `before`, as Kafka's coordinator logs each
    /// rebalance.
    fn log_changes(&self, before: Seen) {
        let group = &self.group;
        if before != (group.state, group.generation) {
            tracing::info!(
                group = %group.id,
                state = group.state.name(),
                generation = group.generation,
                members = group.members.len(),
                leader = group.leader.as_deref().unwrap_or("-"),
                "group changed"
            );
        }
    }

    /// Answers every parked JoinGroup and SyncGroup with NOT_COORDINATOR.
    fn not_coordinator(&mut self) {
        for (member, tx) in self.joins.drain() {
            let _ = tx.send(JoinResult::error(ErrorCode::NotCoordinator, &member));
        }
        for (_, tx) in self.syncs.drain() {
            let _ = tx.send(SyncResult::error(ErrorCode::NotCoordinator));
        }
    }

    /// Answers the waiting requests, and logs the members removed (as Kafka logs each).
    fn deliver(&mut self, deliveries: Deliveries) {
        if !deliveries.removed.is_empty() {
            let removed = &deliveries.removed;
            tracing::info!(group = %self.group.id, ?removed, "group members removed");
        }
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

/// A live group as ListGroups reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    pub id: String,
    pub protocol_type: String,
    pub state: &'static str,
    /// "classic" or "consumer".
    pub group_type: &'static str,
    pub members: usize,
}

/// The coordinator's settings.
#[derive(Debug, Clone, Copy)]
pub struct CoordinatorSettings {
    /// Kafka's group.initial.rebalance.delay.ms (classic groups).
    pub initial_delay: Duration,
    /// Consumer (KIP-848) groups.
    pub consumer: ConsumerGroupSettings,
}

/// Both kinds of group share one namespace of group ids, so they live under one lock.
#[derive(Default)]
struct Groups {
    classic: HashMap<String, Slot>,
    consumer: HashMap<String, ConsumerGroup>,
    share: HashMap<String, ShareGroup>,
    /// The protocol type of classic groups whose members all left (their offsets stay in the
    /// state): ListGroups shows it, as Kafka keeps an Empty group's. At most `GROUPS_MAX`
    /// (then it is forgotten, and such a group lists with an empty protocol type).
    emptied_protocol_types: HashMap<String, String>,
}

impl Groups {
    /// A new group refused because this agent coordinates `limits::GROUPS_MAX` already.
    fn full() -> GroupError {
        GroupError {
            code: ErrorCode::CoordinatorNotAvailable,
            message: format!(
                "this agent coordinates its maximum of {} groups",
                super::limits::GROUPS_MAX
            ),
        }
    }

    /// Whether a new group would exceed `limits::GROUPS_MAX`.
    fn is_full(&self) -> bool {
        self.classic.len() + self.consumer.len() + self.share.len() >= super::limits::GROUPS_MAX
    }
}

#[derive(Clone)]
pub struct Coordinator {
    groups: Arc<Mutex<Groups>>,
    initial_delay_ms: i64,
    consumer_settings: ConsumerGroupSettings,
    clock: Clock,
    /// Member ids for classic groups come from here.
    rng: Rng,
    /// The topics consumer-group heartbeats resolve subscriptions against (`topics_copy`).
    pub topics: super::topics_copy::CachedTopics,
}

impl Coordinator {
    /// Starts the coordinator and its ticker (which stops when the coordinator is dropped).
    pub fn start(settings: CoordinatorSettings, clock: Clock, rng: Rng) -> Coordinator {
        let coordinator = Coordinator {
            groups: Arc::new(Mutex::new(Groups::default())),
            initial_delay_ms: settings.initial_delay.as_millis() as i64,
            topics: Default::default(),
            consumer_settings: settings.consumer,
            clock: clock.clone(),
            rng,
        };
        let weak = Arc::downgrade(&coordinator.groups);
        tokio::spawn(async move {
            loop {
                clock.sleep(TICK).await;
                let Some(groups) = weak.upgrade() else { return };
                let now = clock.monotonic_ms();
                let mut groups = groups.lock().unwrap_or_else(|p| p.into_inner());
                for slot in groups.classic.values_mut() {
                    let before = slot.seen();
                    let deliveries = slot.group.tick(now);
                    slot.log_changes(before);
                    slot.deliver(deliveries);
                }
                let emptied: Vec<(String, String)> = groups
                    .classic
                    .iter()
                    .filter(|(_, s)| s.group.is_empty() && s.joins.is_empty() && s.syncs.is_empty())
                    .filter_map(|(id, s)| Some((id.clone(), s.group.protocol_type.clone()?)))
                    .collect();
                groups.classic.retain(|_, slot| {
                    !(slot.group.is_empty() && slot.joins.is_empty() && slot.syncs.is_empty())
                });
                for (id, protocol_type) in emptied {
                    let remembered = &mut groups.emptied_protocol_types;
                    if remembered.len() >= super::limits::GROUPS_MAX
                        && let Some(any) = remembered.keys().next().cloned()
                    {
                        // Full: one (arbitrary) older entry makes room.
                        remembered.remove(&any);
                    }
                    remembered.insert(id, protocol_type);
                }
                for (id, group) in groups.consumer.iter_mut() {
                    for member in group.expire(now) {
                        tracing::info!(group = %id, %member, "consumer group member expired");
                    }
                }
                groups.consumer.retain(|_, group| !group.is_empty());
                for (id, group) in groups.share.iter_mut() {
                    for member in group.expire(now) {
                        tracing::info!(group = %id, %member, "share group member expired");
                    }
                }
                groups.share.retain(|_, group| !group.is_empty());
            }
        });
        coordinator
    }

    fn lock(&self) -> MutexGuard<'_, Groups> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn slot<'a>(&self, groups: &'a mut Groups, id: &str) -> &'a mut Slot {
        if !groups.classic.contains_key(id) {
            groups.emptied_protocol_types.remove(id);
        }
        groups
            .classic
            .entry(id.to_string())
            .or_insert_with(|| Slot {
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
            if groups.consumer.get(group_id).is_some_and(|g| !g.is_empty())
                || groups.share.contains_key(group_id)
            {
                // Kafka's answer to a classic member joining a consumer or share group.
                return JoinResult::error(ErrorCode::InconsistentGroupProtocol, &request.member_id);
            }
            if !groups.classic.contains_key(group_id) && groups.is_full() {
                return JoinResult::error(ErrorCode::CoordinatorNotAvailable, &request.member_id);
            }
            let slot = self.slot(&mut groups, group_id);
            let now = self.clock.monotonic_ms();
            let new_id = || format!("{client_id}-{}", self.rng.uuid());
            let before = slot.seen();
            let asked_as = request.member_id.clone();
            let joined = slot.group.join(request, new_id, now);
            slot.log_changes(before);
            match joined {
                Err(result) => {
                    tracing::debug!(group = group_id, member = %asked_as, error = ?result.error, "JoinGroup refused");
                    return *result;
                }
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
        match self.clock.timeout(wait_limit, rx).await {
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
            let Some(slot) = groups.classic.get_mut(group_id) else {
                tracing::debug!(
                    group = group_id,
                    member = member_id,
                    "SyncGroup for a group this agent does not hold"
                );
                return SyncResult::error(ErrorCode::UnknownMemberId);
            };
            let now = self.clock.monotonic_ms();
            let before = slot.seen();
            let synced = slot.group.sync(member_id, generation, assignments, now);
            slot.log_changes(before);
            match synced {
                Err(result) => {
                    tracing::debug!(group = group_id, member = member_id, generation, error = ?result.error, "SyncGroup refused");
                    return result;
                }
                Ok(deliveries) => {
                    let (tx, rx) = oneshot::channel();
                    slot.syncs.insert(member_id.to_string(), tx);
                    slot.deliver(deliveries);
                    rx
                }
            }
        };
        match self.clock.timeout(Duration::from_secs(300), rx).await {
            Ok(Ok(result)) => result,
            _ => SyncResult::error(ErrorCode::RebalanceInProgress),
        }
    }

    /// Answers every parked JoinGroup and SyncGroup with NOT_COORDINATOR: this agent drains,
    /// and its members find the group's new coordinator now instead of waiting out a
    /// rebalance here.
    pub fn release_waiters(&self) {
        let mut groups = self.lock();
        for slot in groups.classic.values_mut() {
            slot.not_coordinator();
        }
    }

    /// Forgets every group, answering their parked JoinGroup and SyncGroup requests with
    /// NOT_COORDINATOR: this agent's registration lapsed, so other agents may have coordinated
    /// its groups meanwhile and what it remembers of them is stale. Members rejoin wherever
    /// the group is coordinated now; committed offsets are in the replicated state.
    pub fn let_go(&self) {
        let mut groups = self.lock();
        let held = groups.classic.len() + groups.consumer.len();
        if held > 0 {
            tracing::info!(
                groups = held,
                "this agent's registration lapsed: it lets go of the groups it coordinated"
            );
        }
        for (_, mut slot) in groups.classic.drain() {
            slot.not_coordinator();
        }
        groups.consumer.clear();
    }

    /// Whether a classic group's static member `instance` now has another member id.
    pub fn is_fenced(&self, group_id: &str, member_id: &str, instance: Option<&str>) -> bool {
        self.lock()
            .classic
            .get(group_id)
            .is_some_and(|slot| slot.group.is_fenced(member_id, instance))
    }

    pub fn heartbeat(&self, group_id: &str, member_id: &str, generation: i32) -> ErrorCode {
        let mut groups = self.lock();
        match groups.classic.get_mut(group_id) {
            Some(slot) => {
                let now = self.clock.monotonic_ms();
                let answer = slot.group.heartbeat(member_id, generation, now);
                if answer != ErrorCode::None {
                    tracing::debug!(
                        group = group_id,
                        member = member_id,
                        generation,
                        ?answer,
                        "Heartbeat refused"
                    );
                }
                answer
            }
            None => {
                tracing::debug!(
                    group = group_id,
                    member = member_id,
                    "Heartbeat for a group this agent does not hold"
                );
                ErrorCode::UnknownMemberId
            }
        }
    }

    pub fn leave(&self, group_id: &str, members: &[(String, Option<String>)]) -> Vec<ErrorCode> {
        let mut groups = self.lock();
        match groups.classic.get_mut(group_id) {
            Some(slot) => {
                let before = slot.seen();
                let (codes, deliveries) = slot.group.leave(members, self.clock.monotonic_ms());
                slot.log_changes(before);
                slot.deliver(deliveries);
                codes
            }
            None => vec![ErrorCode::UnknownMemberId; members.len()],
        }
    }

    /// Whether an offset commit by this member at this generation (member epoch, for a
    /// consumer group) may proceed. Generation -1 with no member is a commit by a consumer that
    /// does not use the group. Consumer group members must commit with OffsetCommit v9+.
    pub fn check_commit(
        &self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        version: i16,
        partitions: &[(uuid::Uuid, i32)],
    ) -> ErrorCode {
        let groups = self.lock();
        if let Some(group) = groups.consumer.get(group_id) {
            return match group.check_commit(member_id, generation, partitions) {
                ErrorCode::None if version < 9 && !member_id.is_empty() => {
                    ErrorCode::UnsupportedVersion
                }
                code => code,
            };
        }
        let live = groups
            .classic
            .get(group_id)
            .is_some_and(|slot| !slot.group.members.is_empty());
        if generation < 0 && member_id.is_empty() {
            // A consumer outside the group (or an admin client) may commit only while the
            // group has no members, as in Kafka.
            return if live {
                ErrorCode::UnknownMemberId
            } else {
                ErrorCode::None
            };
        }
        let Some(slot) = groups.classic.get(group_id) else {
            // Not a live group here (e.g. after a coordinator change): members must rejoin.
            return ErrorCode::UnknownMemberId;
        };
        let group = &slot.group;
        // As Kafka 4's classic groups: a member commits with its generation while a rebalance
        // is prepared (eager consumers do so as they give up their partitions), not while
        // the new assignment is handed out.
        if !group.members.contains_key(member_id) {
            ErrorCode::UnknownMemberId
        } else if generation != group.generation {
            ErrorCode::IllegalGeneration
        } else if group.state == State::CompletingRebalance {
            // Its assignment is being handed out: it commits after its SyncGroup.
            ErrorCode::RebalanceInProgress
        } else {
            ErrorCode::None
        }
    }

    /// Whether a member id and epoch are current in a consumer group (OffsetFetch v9 checks
    /// them); `None` when the group is not a live consumer group here.
    pub fn check_consumer_member(
        &self,
        group_id: &str,
        member_id: &str,
        epoch: i32,
    ) -> Option<ErrorCode> {
        let groups = self.lock();
        Some(
            groups
                .consumer
                .get(group_id)?
                .check_member(member_id, epoch),
        )
    }

    /// A `ConsumerGroupHeartbeat`. A group id held by a live classic group is refused.
    pub fn consumer_heartbeat(
        &self,
        request: &ConsumerGroupHeartbeatRequest,
        client_id: &str,
        client_host: &str,
        topics: &dyn TopicImage,
    ) -> Result<HeartbeatReply, GroupError> {
        let mut groups = self.lock();
        if groups
            .classic
            .get(&request.group_id)
            .is_some_and(|s| !s.group.is_empty())
            || groups.share.contains_key(&request.group_id)
        {
            return Err(GroupError {
                code: ErrorCode::GroupIdNotFound,
                message: format!("Group {} is not a consumer group.", request.group_id),
            });
        }
        if !groups.consumer.contains_key(&request.group_id) && groups.is_full() {
            return Err(Groups::full());
        }
        let group = groups
            .consumer
            .entry(request.group_id.clone())
            .or_insert_with(|| ConsumerGroup::new(&request.group_id));
        let now = self.clock.monotonic_ms();
        let reply = group.heartbeat(
            request,
            client_id,
            client_host,
            topics,
            &self.consumer_settings,
            now,
        );
        if group.is_empty() {
            groups.consumer.remove(&request.group_id);
        }
        reply
    }

    /// A `ShareGroupHeartbeat`. A group id held by a live group of another kind is refused
    /// with GROUP_ID_NOT_FOUND, as Kafka does.
    pub fn share_heartbeat(
        &self,
        group_id: &str,
        request: &ShareHeartbeat<'_>,
        topics: &dyn TopicImage,
        settings: &ShareGroupSettings,
    ) -> Result<ShareReply, GroupError> {
        let mut groups = self.lock();
        let other_kind = groups.consumer.contains_key(group_id)
            || groups
                .classic
                .get(group_id)
                .is_some_and(|s| !s.group.is_empty());
        if other_kind {
            return Err(GroupError {
                code: ErrorCode::GroupIdNotFound,
                message: format!("Group {group_id} is not a share group."),
            });
        }
        if !groups.share.contains_key(group_id) {
            if request.member_epoch != 0 {
                return Err(GroupError {
                    code: ErrorCode::UnknownMemberId,
                    message: format!(
                        "member {} is not in share group {group_id}",
                        request.member_id
                    ),
                });
            }
            if groups.is_full() {
                return Err(Groups::full());
            }
        }
        let group = groups
            .share
            .entry(group_id.to_string())
            .or_insert_with(|| ShareGroup::new(group_id));
        let now = self.clock.monotonic_ms();
        let reply = group.heartbeat(request, topics, settings, now);
        if group.is_empty() {
            groups.share.remove(group_id);
        }
        reply
    }

    /// A live share group, as it is now.
    pub fn share_group(&self, group_id: &str) -> Option<ShareGroup> {
        self.lock().share.get(group_id).cloned()
    }

    pub fn is_share_group(&self, group_id: &str) -> bool {
        self.lock().share.contains_key(group_id)
    }

    /// A live consumer group, as it is now.
    pub fn consumer_group(&self, group_id: &str) -> Option<ConsumerGroup> {
        self.lock().consumer.get(group_id).cloned()
    }

    pub fn is_consumer_group(&self, group_id: &str) -> bool {
        self.lock().consumer.contains_key(group_id)
    }

    pub fn is_classic_group(&self, group_id: &str) -> bool {
        self.lock().classic.contains_key(group_id)
    }

    /// The topics a live consumer group subscribes to (none for any other group).
    pub fn subscribed_topic_ids(&self, group_id: &str) -> Vec<uuid::Uuid> {
        let groups = self.lock();
        let group = groups.consumer.get(group_id);
        group
            .into_iter()
            .flat_map(|g| g.subscribed_topic_ids().copied())
            .collect()
    }

    /// What a live classic group's members subscribe to, read from their consumer protocol
    /// metadata (OffsetDelete keeps those topics' offsets).
    pub fn classic_subscriptions(&self, group_id: &str) -> ClassicSubscriptions {
        let groups = self.lock();
        let Some(slot) = groups.classic.get(group_id) else {
            return ClassicSubscriptions::NotLive;
        };
        let group = &slot.group;
        if group.members.is_empty() {
            return ClassicSubscriptions::NotLive;
        }
        if group.protocol_type.as_deref() != Some("consumer") {
            return ClassicSubscriptions::NotConsumer;
        }
        let mut topics = std::collections::BTreeSet::new();
        for member in group.members.values() {
            for (_, metadata) in &member.protocols {
                match subscribed_topics(metadata) {
                    Some(named) => topics.extend(named),
                    // Unreadable: as Kafka, counted as subscribed to every topic.
                    None => return ClassicSubscriptions::Everything,
                }
            }
        }
        ClassicSubscriptions::Topics(topics)
    }

    /// The protocol type a classic group had before its members all left, if remembered.
    pub fn emptied_protocol_type(&self, group_id: &str) -> Option<String> {
        self.lock().emptied_protocol_types.get(group_id).cloned()
    }

    /// Forgets what is remembered of a deleted group.
    pub fn forget_emptied(&self, group_id: &str) {
        self.lock().emptied_protocol_types.remove(group_id);
    }

    /// Whether the group has members, of either kind.
    pub fn has_members(&self, group_id: &str) -> bool {
        let groups = self.lock();
        groups
            .classic
            .get(group_id)
            .is_some_and(|s| !s.group.members.is_empty())
            || groups.consumer.get(group_id).is_some_and(|g| !g.is_empty())
            || groups.share.get(group_id).is_some_and(|g| !g.is_empty())
    }

    pub fn describe(&self, group_id: &str) -> Option<GroupView> {
        let groups = self.lock();
        let group = &groups.classic.get(group_id)?.group;
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

    /// The groups held here, of both kinds (also those whose members all left), by id.
    pub fn list(&self) -> Vec<ListedGroup> {
        let groups = self.lock();
        let classic = groups.classic.iter().map(|(id, s)| ListedGroup {
            id: id.clone(),
            protocol_type: s.group.protocol_type.clone().unwrap_or_default(),
            state: s.group.state.name(),
            group_type: "classic",
            members: s.group.members.len(),
        });
        let consumer = groups.consumer.iter().map(|(id, g)| ListedGroup {
            id: id.clone(),
            protocol_type: "consumer".into(),
            state: g.state_name(),
            group_type: "consumer",
            members: g.members.len(),
        });
        let share = groups.share.iter().map(|(id, g)| ListedGroup {
            id: id.clone(),
            protocol_type: "share".into(),
            state: g.state_name(),
            group_type: "share",
            members: g.members.len(),
        });
        let mut list: Vec<ListedGroup> = classic.chain(consumer).chain(share).collect();
        list.sort_by(|a, b| a.id.cmp(&b.id));
        list
    }
}

/// What a classic group's live members subscribe to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassicSubscriptions {
    /// No live classic group of that id here.
    NotLive,
    /// Members that do not speak the consumer protocol.
    NotConsumer,
    /// A member's subscription could not be read.
    Everything,
    Topics(std::collections::BTreeSet<String>),
}

/// The topics in a consumer protocol subscription (its version first, read at the newest
/// version this codec knows when it is newer, as Kafka's `ConsumerProtocol` does).
fn subscribed_topics(metadata: &Bytes) -> Option<Vec<String>> {
    use crate::protocol::messages::ConsumerProtocolSubscription;
    use crate::protocol::wire::Message;
    let mut rest = metadata.clone();
    if rest.len() < 2 {
        return None;
    }
    let version = i16::from_be_bytes([rest[0], rest[1]]);
    let _ = bytes::Buf::get_i16(&mut rest);
    let version = version.clamp(0, ConsumerProtocolSubscription::VALID_VERSIONS.1);
    ConsumerProtocolSubscription::decode(&mut rest, version)
        .ok()
        .map(|s| s.topics)
}
