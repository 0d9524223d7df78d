//! Share groups (KIP-932), pure: the membership behind `ShareGroupHeartbeat`, after Kafka's
//! `GroupMetadataManager.shareGroupHeartbeat` and its `SimpleAssignor`.
//!
//! A share group's partitions are shared, not owned: records, not partitions, go to one
//! member at a time (the replicated state's `share` part decides that). So there is no
//! revocation: when membership, a subscription or a subscribed topic changes, the group epoch
//! moves, the assignor computes a new target, and each member gets its part of it on its next
//! heartbeat at once. The simple assignor gives every partition of a subscribed topic to at
//! least one member, and to `ceil(members / partitions)` of them when members outnumber
//! partitions, balanced across members.

use super::assignor::Partitions;
use super::consumer::{GroupError, TopicImage};
use crate::protocol::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Member epoch of a heartbeat that leaves the group.
pub const LEAVE_EPOCH: i32 = -1;
/// Kafka's bound on member ids in share groups (4.2).
pub const MEMBER_ID_BYTES_MAX: usize = 36;

/// The coordinator's settings for share groups.
#[derive(Debug, Clone, Copy)]
pub struct ShareGroupSettings {
    pub heartbeat_interval_ms: i32,
    pub session_timeout_ms: i64,
    /// Kafka's group.share.max.size.
    pub max_size: usize,
}

/// One heartbeat, as the group reads it.
#[derive(Debug, Clone, Default)]
pub struct ShareHeartbeat<'a> {
    pub member_id: &'a str,
    pub member_epoch: i32,
    pub rack_id: Option<&'a str>,
    /// `None`: unchanged since the last heartbeat.
    pub subscribed_topic_names: Option<&'a [String]>,
    pub client_id: &'a str,
    pub client_host: &'a str,
}

/// A heartbeat answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareReply {
    pub member_epoch: i32,
    pub heartbeat_interval_ms: i32,
    /// Sent on a join, a full request, or when it changed.
    pub assignment: Option<Partitions>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShareMember {
    pub id: String,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub epoch: i32,
    pub previous_epoch: i32,
    pub subscribed: Vec<String>,
    pub assigned: Partitions,
    pub session_deadline_ms: i64,
}

#[derive(Debug, Clone, Default)]
pub struct ShareGroup {
    pub id: String,
    /// Moves on every change of membership, subscriptions or subscribed topics.
    pub epoch: i32,
    /// The epoch the target was computed at.
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, ShareMember>,
    target: BTreeMap<String, Partitions>,
    /// Subscribed topics and their partition counts when the epoch last moved.
    subscribed_topics: BTreeMap<Uuid, i32>,
    resolved_at: Option<u64>,
}

fn refuse<T>(code: ErrorCode, message: impl Into<String>) -> Result<T, GroupError> {
    Err(GroupError {
        code,
        message: message.into(),
    })
}

impl ShareGroup {
    pub fn new(id: &str) -> ShareGroup {
        ShareGroup {
            id: id.to_string(),
            ..Default::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Kafka's share group states: Empty or Stable.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    /// Handles one `ShareGroupHeartbeat`.
    pub fn heartbeat(
        &mut self,
        request: &ShareHeartbeat<'_>,
        topics: &dyn TopicImage,
        settings: &ShareGroupSettings,
        now_ms: i64,
    ) -> Result<ShareReply, GroupError> {
        let id = request.member_id;
        if id.is_empty() || id.len() > MEMBER_ID_BYTES_MAX {
            return refuse(ErrorCode::InvalidRequest, "Invalid member id");
        }
        if request.member_epoch == LEAVE_EPOCH {
            if self.members.remove(id).is_none() {
                return refuse(
                    ErrorCode::UnknownMemberId,
                    format!("member {id} is not in share group {}", self.id),
                );
            }
            self.epoch += 1;
            self.resolved_at = None;
            return Ok(ShareReply {
                member_epoch: LEAVE_EPOCH,
                heartbeat_interval_ms: 0,
                assignment: None,
            });
        }
        if request.member_epoch < LEAVE_EPOCH {
            return refuse(ErrorCode::InvalidRequest, "MemberEpoch is invalid");
        }
        let mut changed = false;
        let mut member = match (self.members.get(id), request.member_epoch) {
            (None, 0) => {
                let subscribed = request.subscribed_topic_names.unwrap_or_default();
                if subscribed.is_empty() {
                    return refuse(
                        ErrorCode::InvalidRequest,
                        "SubscribedTopicNames must be set in first request",
                    );
                }
                if self.members.len() >= settings.max_size {
                    return refuse(
                        ErrorCode::GroupMaxSizeReached,
                        format!(
                            "share group {} has its maximum of {} members",
                            self.id, settings.max_size
                        ),
                    );
                }
                changed = true;
                ShareMember {
                    id: id.to_string(),
                    rack_id: None,
                    client_id: request.client_id.to_string(),
                    client_host: request.client_host.to_string(),
                    epoch: 0,
                    previous_epoch: 0,
                    subscribed: Vec::new(),
                    assigned: Partitions::new(),
                    session_deadline_ms: 0,
                }
            }
            (None, _) => {
                return refuse(
                    ErrorCode::UnknownMemberId,
                    format!("member {id} is not in share group {}", self.id),
                );
            }
            (Some(member), epoch) => {
                if epoch != 0 && epoch != member.epoch && epoch != member.previous_epoch {
                    return refuse(
                        ErrorCode::FencedMemberEpoch,
                        format!(
                            "member {id} sent epoch {epoch}, the group knows {}",
                            member.epoch
                        ),
                    );
                }
                member.clone()
            }
        };
        if let Some(names) = request.subscribed_topic_names {
            let mut names = names.to_vec();
            names.sort();
            names.dedup();
            if names != member.subscribed {
                member.subscribed = names;
                changed = true;
            }
        }
        if let Some(rack) = request.rack_id {
            member.rack_id = Some(rack.to_string());
        }
        member.session_deadline_ms = now_ms + settings.session_timeout_ms;
        self.members.insert(member.id.clone(), member);
        if changed {
            // The subscriptions changed: resolve them again, whatever the topics did.
            self.resolved_at = None;
        }
        if self.topics_moved(topics) || changed {
            self.epoch += 1;
        }
        if self.epoch > self.assignment_epoch {
            self.target = assign(&self.members, &self.subscribed_topics, topics);
            self.assignment_epoch = self.epoch;
        }
        let target = self.target.get(id).cloned().unwrap_or_default();
        let member = self.members.get_mut(id).expect("inserted above");
        let assignment_changed = member.assigned != target;
        if member.epoch != self.assignment_epoch {
            member.previous_epoch = member.epoch;
            member.epoch = self.assignment_epoch;
        }
        member.assigned = target;
        let full = request.member_epoch == 0 || request.subscribed_topic_names.is_some();
        Ok(ShareReply {
            member_epoch: member.epoch,
            heartbeat_interval_ms: settings.heartbeat_interval_ms,
            assignment: (full || assignment_changed).then(|| member.assigned.clone()),
        })
    }

    /// Whether the subscribed topics (which exist, and their partition counts) changed since
    /// the epoch last moved; re-resolved only when the topics did.
    fn topics_moved(&mut self, topics: &dyn TopicImage) -> bool {
        if self.resolved_at == Some(topics.version()) {
            return false;
        }
        self.resolved_at = Some(topics.version());
        let names: BTreeSet<&String> = self.members.values().flat_map(|m| &m.subscribed).collect();
        let now: BTreeMap<Uuid, i32> = names
            .into_iter()
            .filter_map(|name| topics.by_name(name))
            .collect();
        let moved = now != self.subscribed_topics;
        self.subscribed_topics = now;
        moved
    }

    /// Removes members silent past their session; their ids, so their records go back.
    pub fn expire(&mut self, now_ms: i64) -> Vec<String> {
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| m.session_deadline_ms <= now_ms)
            .map(|m| m.id.clone())
            .collect();
        for id in &expired {
            self.members.remove(id);
        }
        if !expired.is_empty() {
            self.epoch += 1;
            self.resolved_at = None;
        }
        expired
    }
}

/// The simple assignor: each topic's partitions spread over the members subscribed to it,
/// every partition to at least one member; where members outnumber partitions, each member
/// gets one and partitions are shared. Topics start where the previous left off, so single-
/// partition topics do not all land on the same member.
fn assign(
    members: &BTreeMap<String, ShareMember>,
    subscribed: &BTreeMap<Uuid, i32>,
    topics: &dyn TopicImage,
) -> BTreeMap<String, Partitions> {
    let mut target: BTreeMap<String, Partitions> = BTreeMap::new();
    let mut next = 0usize;
    for (topic_id, count) in subscribed {
        let Some(name) = topics.name_of(topic_id) else {
            continue;
        };
        let takers: Vec<&String> = members
            .values()
            .filter(|m| m.subscribed.contains(&name))
            .map(|m| &m.id)
            .collect();
        let count = (*count).max(0) as usize;
        if takers.is_empty() || count == 0 {
            continue;
        }
        let slots = takers.len().max(count);
        for slot in 0..slots {
            let member = takers[(next + slot) % takers.len()];
            let partition = (slot % count) as i32;
            target
                .entry(member.clone())
                .or_default()
                .entry(*topic_id)
                .or_default()
                .insert(partition);
        }
        next = (next + slots) % takers.len().max(1);
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Topics(Vec<(String, Uuid, i32)>);

    impl TopicImage for Topics {
        fn by_name(&self, name: &str) -> Option<(Uuid, i32)> {
            self.0.iter().find(|t| t.0 == name).map(|t| (t.1, t.2))
        }
        fn name_of(&self, id: &Uuid) -> Option<String> {
            self.0.iter().find(|t| t.1 == *id).map(|t| t.0.clone())
        }
        fn all(&self) -> Vec<(String, Uuid, i32)> {
            self.0.clone()
        }
        fn version(&self) -> u64 {
            self.0.len() as u64
        }
    }

    const SETTINGS: ShareGroupSettings = ShareGroupSettings {
        heartbeat_interval_ms: 5_000,
        session_timeout_ms: 45_000,
        max_size: 200,
    };

    fn join<'a>(id: &'a str, names: &'a [String]) -> ShareHeartbeat<'a> {
        ShareHeartbeat {
            member_id: id,
            member_epoch: 0,
            subscribed_topic_names: Some(names),
            ..Default::default()
        }
    }

    fn count(p: &Partitions) -> usize {
        p.values().map(BTreeSet::len).sum()
    }

    #[test]
    fn partitions_are_shared_out_and_every_one_is_read() {
        let t = Uuid::from_u128(1);
        let topics = Topics(vec![("t".into(), t, 4)]);
        let names = vec!["t".to_string()];
        let mut group = ShareGroup::new("g");
        let a = group
            .heartbeat(&join("a", &names), &topics, &SETTINGS, 0)
            .unwrap();
        assert_eq!(count(a.assignment.as_ref().unwrap()), 4);
        group
            .heartbeat(&join("b", &names), &topics, &SETTINGS, 0)
            .unwrap();
        let sizes: Vec<usize> = group.target.values().map(count).collect();
        assert_eq!(sizes, vec![2, 2]);
        // More members than partitions: each member gets one, partitions shared.
        for id in ["c", "d", "e", "f"] {
            group
                .heartbeat(&join(id, &names), &topics, &SETTINGS, 0)
                .unwrap();
        }
        assert!(group.target.values().all(|p| count(p) == 1));
        let read: BTreeSet<i32> = group.target.values().flat_map(|p| p[&t].clone()).collect();
        assert_eq!(read.len(), 4);
    }

    #[test]
    fn a_member_gets_its_new_assignment_at_once() {
        let t = Uuid::from_u128(1);
        let topics = Topics(vec![("t".into(), t, 2)]);
        let names = vec!["t".to_string()];
        let mut group = ShareGroup::new("g");
        let a = group
            .heartbeat(&join("a", &names), &topics, &SETTINGS, 0)
            .unwrap();
        group
            .heartbeat(&join("b", &names), &topics, &SETTINGS, 0)
            .unwrap();
        let beat = ShareHeartbeat {
            member_id: "a",
            member_epoch: a.member_epoch,
            ..Default::default()
        };
        let a2 = group.heartbeat(&beat, &topics, &SETTINGS, 0).unwrap();
        assert_eq!(a2.member_epoch, group.epoch);
        assert_eq!(count(a2.assignment.as_ref().unwrap()), 1);
    }

    #[test]
    fn leaving_and_expiring_move_the_epoch_and_give_partitions_to_the_rest() {
        let t = Uuid::from_u128(1);
        let topics = Topics(vec![("t".into(), t, 2)]);
        let names = vec!["t".to_string()];
        let mut group = ShareGroup::new("g");
        group
            .heartbeat(&join("a", &names), &topics, &SETTINGS, 0)
            .unwrap();
        group
            .heartbeat(&join("b", &names), &topics, &SETTINGS, 10_000)
            .unwrap();
        assert_eq!(group.expire(45_000), vec!["a".to_string()]);
        let beat = ShareHeartbeat {
            member_id: "b",
            member_epoch: group.members["b"].epoch,
            ..Default::default()
        };
        let b = group.heartbeat(&beat, &topics, &SETTINGS, 46_000).unwrap();
        assert_eq!(count(b.assignment.as_ref().unwrap()), 2);
        let leave = ShareHeartbeat {
            member_id: "b",
            member_epoch: LEAVE_EPOCH,
            ..Default::default()
        };
        assert_eq!(
            group
                .heartbeat(&leave, &topics, &SETTINGS, 0)
                .unwrap()
                .member_epoch,
            LEAVE_EPOCH
        );
        assert!(group.is_empty());
    }

    #[test]
    fn a_changed_subscription_is_assigned_at_once() {
        let (t1, t2) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let topics = Topics(vec![("t1".into(), t1, 1), ("t2".into(), t2, 1)]);
        let mut group = ShareGroup::new("g");
        let first = vec!["t1".to_string()];
        let joined = group
            .heartbeat(&join("a", &first), &topics, &SETTINGS, 0)
            .unwrap();
        assert_eq!(
            joined.assignment.unwrap().keys().collect::<Vec<_>>(),
            vec![&t1]
        );
        let second = vec!["t2".to_string()];
        let beat = ShareHeartbeat {
            member_id: "a",
            member_epoch: joined.member_epoch,
            subscribed_topic_names: Some(&second),
            ..Default::default()
        };
        let moved = group.heartbeat(&beat, &topics, &SETTINGS, 0).unwrap();
        assert_eq!(
            moved.assignment.unwrap().keys().collect::<Vec<_>>(),
            vec![&t2]
        );
    }

    #[test]
    fn a_stale_or_unknown_member_is_told_so() {
        let topics = Topics(vec![]);
        let names = vec!["t".to_string()];
        let mut group = ShareGroup::new("g");
        let beat = ShareHeartbeat {
            member_id: "x",
            member_epoch: 3,
            ..Default::default()
        };
        let err = group.heartbeat(&beat, &topics, &SETTINGS, 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnknownMemberId);
        group
            .heartbeat(&join("x", &names), &topics, &SETTINGS, 0)
            .unwrap();
        let err = group.heartbeat(&beat, &topics, &SETTINGS, 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::FencedMemberEpoch);
    }
}
