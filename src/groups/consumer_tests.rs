use super::*;
use proptest::prelude::*;

/// Topics with a version that grows with every change, as the state's `topics_version` does
/// (one counter for all images, so a newer image always has a higher version).
struct Topics(BTreeMap<String, (Uuid, i32)>, u64);

static VERSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_version() -> u64 {
    VERSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Topics {
    fn new(topics: BTreeMap<String, (Uuid, i32)>) -> Topics {
        Topics(topics, next_version())
    }

    fn insert(&mut self, name: &str, id: Uuid, partitions: i32) {
        self.0.insert(name.to_string(), (id, partitions));
        self.1 = next_version();
    }
}

impl TopicImage for Topics {
    fn by_name(&self, name: &str) -> Option<(Uuid, i32)> {
        self.0.get(name).copied()
    }
    fn name_of(&self, id: &Uuid) -> Option<String> {
        self.0
            .iter()
            .find(|(_, (i, _))| i == id)
            .map(|(n, _)| n.clone())
    }
    fn all(&self) -> Vec<(String, Uuid, i32)> {
        self.0
            .iter()
            .map(|(n, (i, p))| (n.clone(), *i, *p))
            .collect()
    }
    fn version(&self) -> u64 {
        self.1
    }
}

const T: Uuid = Uuid::from_u128(1);

fn topics(partitions: i32) -> Topics {
    Topics::new(BTreeMap::from([("t".to_string(), (T, partitions))]))
}

const SETTINGS: ConsumerGroupSettings = ConsumerGroupSettings {
    heartbeat_interval_ms: 1000,
    session_timeout_ms: 10_000,
    max_size: 100,
};

fn join(member: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        subscribed_topic_names: Some(vec!["t".into()]),
        topic_partitions: Some(vec![]),
        ..Default::default()
    }
}

fn beat(member: &str, epoch: i32, owned: &Partitions) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: epoch,
        rebalance_timeout_ms: -1,
        topic_partitions: Some(topic_partitions(owned)),
        ..Default::default()
    }
}

fn send(
    group: &mut ConsumerGroup,
    request: ConsumerGroupHeartbeatRequest,
    topics: &Topics,
    now: i64,
) -> Result<HeartbeatReply, GroupError> {
    send_with(group, request, topics, &SETTINGS, now)
}

fn send_with(
    group: &mut ConsumerGroup,
    request: ConsumerGroupHeartbeatRequest,
    topics: &Topics,
    settings: &ConsumerGroupSettings,
    now: i64,
) -> Result<HeartbeatReply, GroupError> {
    group.heartbeat(&request, "client", "/127.0.0.1", topics, settings, now)
}

/// `a` joins and gets every partition, b joins, a gives half up and confirms it: a is at
/// epoch 2 holding `kept`, b at epoch 2 waiting for it. Returns (what a had first, kept).
fn a_shares_with_b(
    g: &mut ConsumerGroup,
    t: &Topics,
    settings: &ConsumerGroupSettings,
    a: ConsumerGroupHeartbeatRequest,
) -> (Partitions, Partitions) {
    let id = a.member_id.clone();
    let owned = send_with(g, a, t, settings, 0).unwrap().assignment.unwrap();
    send_with(g, join("b"), t, settings, 0).unwrap();
    let kept = send_with(g, beat(&id, 1, &owned), t, settings, 1)
        .unwrap()
        .assignment
        .unwrap();
    send_with(g, beat(&id, 1, &kept), t, settings, 2).unwrap();
    (owned, kept)
}

fn count(p: &Partitions) -> usize {
    p.values().map(BTreeSet::len).sum()
}

#[test]
fn a_single_member_gets_every_partition_at_epoch_one() {
    let mut g = ConsumerGroup::new("g");
    let reply = send(&mut g, join("a"), &topics(4), 0).unwrap();
    assert_eq!(reply.member_epoch, 1);
    assert_eq!(count(reply.assignment.as_ref().unwrap()), 4);
    assert_eq!(g.state_name(), "Stable");
}

#[test]
fn a_second_member_gets_partitions_only_after_the_first_revokes_them() {
    let t = topics(4);
    let mut g = ConsumerGroup::new("g");
    let a1 = send(&mut g, join("a"), &t, 0).unwrap();
    let a_owned = a1.assignment.unwrap();
    let b1 = send(&mut g, join("b"), &t, 1).unwrap();
    assert_eq!(b1.member_epoch, 2, "b moves to the new epoch");
    assert_eq!(
        count(b1.assignment.as_ref().unwrap()),
        0,
        "a still holds them"
    );
    assert_eq!(g.state_name(), "Reconciling");

    // a is asked to give up two partitions and stays at epoch 1 while it still owns them.
    let a2 = send(&mut g, beat("a", 1, &a_owned), &t, 2).unwrap();
    assert_eq!(a2.member_epoch, 1);
    let a_kept = a2.assignment.unwrap();
    assert_eq!(count(&a_kept), 2);
    let again = send(&mut g, beat("a", 1, &a_owned), &t, 3).unwrap();
    assert_eq!(again.member_epoch, 1, "revocation not confirmed yet");

    // Their absence from the owned list confirms the revocation.
    let a3 = send(&mut g, beat("a", 1, &a_kept), &t, 4).unwrap();
    assert_eq!(a3.member_epoch, 2);
    let b2 = send(&mut g, beat("b", 2, &Partitions::new()), &t, 5).unwrap();
    let b_owned = b2.assignment.unwrap();
    assert_eq!(count(&b_owned), 2);
    assert!(b_owned[&T].is_disjoint(&a_kept[&T]));
    send(&mut g, beat("b", 2, &b_owned), &t, 6).unwrap();
    assert_eq!(g.state_name(), "Stable");
}

#[test]
fn a_leave_hands_the_partitions_to_the_others() {
    let t = topics(4);
    let mut g = ConsumerGroup::new("g");
    let owned = send(&mut g, join("a"), &t, 0).unwrap().assignment.unwrap();
    send(&mut g, join("b"), &t, 0).unwrap();
    let kept = send(&mut g, beat("a", 1, &owned), &t, 1)
        .unwrap()
        .assignment
        .unwrap();
    assert_eq!(count(&kept), 2);
    let left = send(&mut g, beat("b", LEAVE_EPOCH, &Partitions::new()), &t, 1).unwrap();
    assert_eq!(left.member_epoch, LEAVE_EPOCH);
    assert!(!g.members.contains_key("b"));
    let a = send(&mut g, beat("a", 1, &kept), &t, 2).unwrap();
    assert_eq!(a.member_epoch, 3);
    assert_eq!(count(a.assignment.as_ref().unwrap()), 4);
}

#[test]
fn silent_members_expire_after_the_session_timeout() {
    let t = topics(2);
    let mut g = ConsumerGroup::new("g");
    send(&mut g, join("a"), &t, 0).unwrap();
    assert!(g.expire(SETTINGS.session_timeout_ms - 1).is_empty());
    assert_eq!(g.expire(SETTINGS.session_timeout_ms), vec!["a".to_string()]);
    assert!(g.is_empty());
    assert_eq!(g.state_name(), "Empty");
}

#[test]
fn a_member_that_does_not_revoke_in_time_is_removed() {
    let t = topics(2);
    let mut g = ConsumerGroup::new("g");
    let a = send(&mut g, join("a"), &t, 0).unwrap().assignment.unwrap();
    let mut b_join = join("b");
    b_join.rebalance_timeout_ms = 5_000;
    send(&mut g, b_join, &t, 0).unwrap();
    let mut a_join = beat("a", 1, &a);
    a_join.rebalance_timeout_ms = 5_000;
    send(&mut g, a_join, &t, 100).unwrap();
    assert_eq!(g.members["a"].state, MemberState::UnrevokedPartitions);
    assert!(g.expire(5_099).is_empty());
    assert_eq!(g.expire(5_100), vec!["a".to_string()]);
}

#[test]
fn epochs_fence_members_that_fell_behind() {
    let t = topics(2);
    let mut g = ConsumerGroup::new("g");
    let a = send(&mut g, join("a"), &t, 0).unwrap().assignment.unwrap();
    let ahead = send(&mut g, beat("a", 7, &a), &t, 1).unwrap_err();
    assert_eq!(ahead.code, ErrorCode::FencedMemberEpoch);
    let unknown = send(&mut g, beat("zz", 1, &a), &t, 1).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::UnknownMemberId);
}

#[test]
fn a_lost_response_is_tolerated_at_the_previous_epoch() {
    let t = topics(4);
    let mut g = ConsumerGroup::new("g");
    let (a, kept) = a_shares_with_b(&mut g, &t, &SETTINGS, join("a"));
    assert_eq!(g.members["a"].epoch, 2);
    // The response that moved a to epoch 2 was lost: it heartbeats at 1 with what it kept.
    let retry = send(&mut g, beat("a", 1, &kept), &t, 3).unwrap();
    assert_eq!(retry.member_epoch, 2);
    // At epoch 1 still claiming a revoked partition, it is fenced.
    let stale = send(&mut g, beat("a", 1, &a), &t, 4).unwrap_err();
    assert_eq!(stale.code, ErrorCode::FencedMemberEpoch);
}

#[test]
fn rejoining_with_epoch_zero_starts_the_member_over() {
    let t = topics(2);
    let mut g = ConsumerGroup::new("g");
    send(&mut g, join("a"), &t, 0).unwrap();
    let again = send(&mut g, join("a"), &t, 1).unwrap();
    assert_eq!(again.member_epoch, 2);
    assert_eq!(count(again.assignment.as_ref().unwrap()), 2);
    assert_eq!(g.members.len(), 1);
}

#[test]
fn a_static_member_comes_back_to_its_partitions_without_a_rebalance() {
    let t = topics(4);
    let mut g = ConsumerGroup::new("g");
    let mut a = join("a1");
    a.instance_id = Some("instance-a".into());
    let (_, kept) = a_shares_with_b(&mut g, &t, &SETTINGS, a);
    let settled_epoch = g.members["a1"].epoch;
    let epoch = g.epoch;

    let mut leave = beat("a1", STATIC_LEAVE_EPOCH, &kept);
    leave.instance_id = Some("instance-a".into());
    assert_eq!(
        send(&mut g, leave, &t, 3).unwrap().member_epoch,
        STATIC_LEAVE_EPOCH
    );

    // Someone else with the same instance id while it is active is refused; after the
    // static leave, a new process (new member id) takes the slot back.
    let mut back = join("a2");
    back.instance_id = Some("instance-a".into());
    let reply = send(&mut g, back, &t, 4).unwrap();
    assert_eq!(reply.member_epoch, settled_epoch);
    assert_eq!(reply.assignment.unwrap(), kept);
    assert_eq!(g.epoch, epoch, "no rebalance");
    assert!(!g.members.contains_key("a1"));

    let mut thief = join("a3");
    thief.instance_id = Some("instance-a".into());
    let refused = send(&mut g, thief, &t, 5).unwrap_err();
    assert_eq!(refused.code, ErrorCode::UnreleasedInstanceId);
}

#[test]
fn invalid_requests_get_kafkas_errors() {
    let t = topics(1);
    let mut g = ConsumerGroup::new("g");
    let mut no_id = join("");
    no_id.member_id.clear();
    assert_eq!(
        send(&mut g, no_id, &t, 0).unwrap_err().code,
        ErrorCode::InvalidRequest
    );
    let mut no_timeout = join("a");
    no_timeout.rebalance_timeout_ms = -1;
    assert_eq!(
        send(&mut g, no_timeout, &t, 0).unwrap_err().code,
        ErrorCode::InvalidRequest
    );
    let mut assignor = join("a");
    assignor.server_assignor = Some("sticky".into());
    let e = send(&mut g, assignor, &t, 0).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedAssignor);
    assert!(e.message.contains("uniform, range"), "{}", e.message);
    let mut regex = join("a");
    regex.subscribed_topic_regex = Some("(".into());
    let e = send(&mut g, regex, &t, 0).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidRegularExpression);
}

#[test]
fn regex_subscriptions_follow_new_topics() {
    let mut t = Topics::new(BTreeMap::from([
        ("orders-eu".to_string(), (Uuid::from_u128(1), 2)),
        ("payments".to_string(), (Uuid::from_u128(2), 2)),
    ]));
    let mut g = ConsumerGroup::new("g");
    let mut r = join("a");
    r.subscribed_topic_names = None;
    r.subscribed_topic_regex = Some("orders-.*".into());
    let first = send(&mut g, r, &t, 0).unwrap().assignment.unwrap();
    assert_eq!(
        first.keys().copied().collect::<Vec<_>>(),
        vec![Uuid::from_u128(1)]
    );
    t.insert("orders-us", Uuid::from_u128(3), 3);
    let next = send(&mut g, beat("a", 1, &first), &t, 1).unwrap();
    assert_eq!(next.member_epoch, 2);
    assert_eq!(count(next.assignment.as_ref().unwrap()), 5);
}

#[test]
fn commits_are_checked_against_the_member_epoch() {
    let t = topics(1);
    let mut g = ConsumerGroup::new("g");
    assert_eq!(
        g.check_member("", -1),
        ErrorCode::None,
        "empty group: anyone"
    );
    send(&mut g, join("a"), &t, 0).unwrap();
    assert_eq!(g.check_member("a", 1), ErrorCode::None);
    assert_eq!(g.check_member("a", 0), ErrorCode::StaleMemberEpoch);
    assert_eq!(g.check_member("b", 1), ErrorCode::UnknownMemberId);
    assert_eq!(g.check_member("", -1), ErrorCode::UnknownMemberId);
}

#[test]
fn the_group_assignor_is_the_one_members_ask_for() {
    let t = topics(4);
    let mut g = ConsumerGroup::new("g");
    let mut a = join("a");
    a.server_assignor = Some("range".into());
    send(&mut g, a, &t, 0).unwrap();
    assert_eq!(g.assignor, Some(Assignor::Range));
}

/// One client's view: what it consumes, the epoch it knows.
#[derive(Clone, Default)]
struct Client {
    epoch: i32,
    owned: Partitions,
    joined: bool,
}

proptest! {
    /// Whatever order members heartbeat in, no two clients ever consume the same partition,
    /// and once everyone has heartbeated enough, every partition is consumed.
    #[test]
    fn clients_never_share_a_partition(
        order in proptest::collection::vec(0usize..4, 1..120),
        partitions in 1i32..9,
        leaver in proptest::option::of(0usize..4),
    ) {
        let t = topics(partitions);
        let mut g = ConsumerGroup::new("g");
        let mut clients = vec![Client::default(); 4];
        let ids = ["m0", "m1", "m2", "m3"];
        let mut now = 0;
        let step = |g: &mut ConsumerGroup, clients: &mut Vec<Client>, i: usize, now: i64| {
            let c = &clients[i];
            let request = if c.joined { beat(ids[i], c.epoch, &c.owned) } else { join(ids[i]) };
            let reply = send(g, request, &t, now).expect("heartbeat");
            let c = &mut clients[i];
            c.joined = true;
            c.epoch = reply.member_epoch;
            if let Some(a) = reply.assignment {
                c.owned = a;
            }
            let mut seen = BTreeSet::new();
            for c in clients.iter() {
                for (topic, ps) in &c.owned {
                    for p in ps {
                        prop_assert!(seen.insert((*topic, *p)), "partition {p} consumed twice");
                    }
                }
            }
            Ok(())
        };
        for (n, &i) in order.iter().enumerate() {
            now += 1;
            step(&mut g, &mut clients, i, now)?;
            if leaver == Some(i) && n == order.len() / 2 {
                send(&mut g, beat(ids[i], LEAVE_EPOCH, &Partitions::new()), &t, now).expect("leave");
                clients[i] = Client::default();
            }
        }
        // Everyone who joined heartbeats a few more rounds: the group converges.
        let joined: Vec<usize> = (0..4).filter(|&i| clients[i].joined).collect();
        for _ in 0..4 {
            for &i in &joined {
                now += 1;
                step(&mut g, &mut clients, i, now)?;
            }
        }
        let total: usize = clients.iter().map(|c| count(&c.owned)).sum();
        if joined.is_empty() {
            // The only member left.
            prop_assert_eq!(total, 0);
            prop_assert!(g.is_empty());
        } else {
            prop_assert_eq!(total, partitions as usize);
            prop_assert_eq!(g.state_name(), "Stable");
        }
    }
}

#[test]
fn members_heartbeat_faster_while_the_group_settles() {
    let t = topics(4);
    let settings = ConsumerGroupSettings {
        heartbeat_interval_ms: 5_000,
        ..SETTINGS
    };
    let mut g = ConsumerGroup::new("g");
    let first = send_with(&mut g, join("a"), &t, &settings, 0).unwrap();
    assert_eq!(
        first.heartbeat_interval_ms, SETTLING_HEARTBEAT_MS,
        "just joined"
    );
    let owned = first.assignment.unwrap();
    let steady = send_with(
        &mut g,
        beat("a", 1, &owned),
        &t,
        &settings,
        SETTLING_WINDOW_MS,
    )
    .unwrap();
    assert_eq!(steady.heartbeat_interval_ms, 5_000, "stable for a while");
    send_with(&mut g, join("b"), &t, &settings, 10_000).unwrap();
    let reconciling = send_with(&mut g, beat("a", 1, &owned), &t, &settings, 20_000).unwrap();
    assert_eq!(
        reconciling.heartbeat_interval_ms, SETTLING_HEARTBEAT_MS,
        "a must revoke: the group is not stable"
    );
}

#[test]
fn a_static_member_away_does_not_keep_the_others_hurrying() {
    let t = topics(2);
    let settings = ConsumerGroupSettings {
        heartbeat_interval_ms: 5_000,
        ..SETTINGS
    };
    let mut g = ConsumerGroup::new("g");
    let mut a = join("a");
    a.instance_id = Some("instance-a".into());
    let (_, kept) = a_shares_with_b(&mut g, &t, &settings, a);
    let owned_b = send_with(&mut g, beat("b", 2, &Partitions::new()), &t, &settings, 3)
        .unwrap()
        .assignment
        .unwrap();
    let mut leave = beat("a", STATIC_LEAVE_EPOCH, &kept);
    leave.instance_id = Some("instance-a".into());
    send_with(&mut g, leave, &t, &settings, 4).unwrap();
    assert_eq!(g.state_name(), "Reconciling", "as Kafka reports it");
    let later = send_with(
        &mut g,
        beat("b", 2, &owned_b),
        &t,
        &settings,
        4 + SETTLING_WINDOW_MS,
    )
    .unwrap();
    assert_eq!(later.heartbeat_interval_ms, 5_000);
}

#[test]
fn a_commit_crossing_an_epoch_change_is_accepted_for_partitions_still_held() {
    let t = topics(4);
    let mut g = ConsumerGroup::new("g");
    let (owned, kept) = a_shares_with_b(&mut g, &t, &SETTINGS, join("a"));
    assert_eq!(g.members["a"].epoch, 2);
    let held: Vec<(Uuid, i32)> = kept[&T].iter().map(|&p| (T, p)).collect();
    let given_up: Vec<(Uuid, i32)> = owned[&T].difference(&kept[&T]).map(|&p| (T, p)).collect();
    assert_eq!(
        g.check_commit("a", 2, &given_up),
        ErrorCode::None,
        "current epoch"
    );
    assert_eq!(g.check_commit("a", 1, &held), ErrorCode::None, "still held");
    assert_eq!(
        g.check_commit("a", 1, &given_up),
        ErrorCode::StaleMemberEpoch
    );
    assert_eq!(g.check_commit("a", 0, &held), ErrorCode::StaleMemberEpoch);
}
