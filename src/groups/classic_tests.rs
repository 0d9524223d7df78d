use super::*;

fn request(member_id: &str, protocols: &[&str]) -> JoinRequest {
    JoinRequest {
        member_id: member_id.into(),
        instance_id: None,
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 30_000,
        protocol_type: "consumer".into(),
        protocols: protocols
            .iter()
            .map(|p| (p.to_string(), Bytes::from_static(b"meta")))
            .collect(),
        require_known_member_id: true,
    }
}

/// Joins a new member the v4+ way (MEMBER_ID_REQUIRED, then again with the id).
fn join_new(group: &mut Group, name: &str, now: i64) -> (String, Deliveries) {
    let first = group
        .join(request("", &["range"]), || name.to_string(), now)
        .expect_err("a member id first");
    assert_eq!(first.error, ErrorCode::MemberIdRequired);
    group
        .join(
            request(&first.member_id, &["range"]),
            || unreachable!(),
            now,
        )
        .expect("join")
}

#[test]
fn a_full_group_refuses_new_members_and_takes_back_its_own() {
    let mut group = Group::new("g", 0);
    let mut last = String::new();
    for i in 0..super::super::limits::CLASSIC_MEMBERS_MAX {
        last = join_new(&mut group, &format!("m{i}"), 0).0;
    }
    let refused = group
        .join(request("", &["range"]), || "extra".to_string(), 0)
        .expect_err("full");
    assert_eq!(refused.error, ErrorCode::GroupMaxSizeReached);
    assert!(
        group
            .join(request(&last, &["range"]), || unreachable!(), 0)
            .is_ok()
    );
}

#[test]
fn a_single_member_joins_at_once_without_initial_delay() {
    let mut group = Group::new("g", 0);
    let (id, deliveries) = join_new(&mut group, "m1", 0);
    assert_eq!(deliveries.joins.len(), 1);
    let (to, result) = &deliveries.joins[0];
    assert_eq!((to, result.generation, &result.leader), (&id, 1, &id));
    assert_eq!(result.members.len(), 1, "the leader sees the members");
    let deliveries = group
        .sync(&id, 1, vec![(id.clone(), Bytes::from_static(b"a"))], 0)
        .expect("sync");
    assert_eq!(deliveries.syncs[0].1.assignment, Bytes::from_static(b"a"));
    assert_eq!(group.state, State::Stable);
    assert_eq!(group.heartbeat(&id, 1, 1), ErrorCode::None);
    assert!(!group.is_fenced(&id, None));
    assert_eq!(group.heartbeat(&id, 0, 1), ErrorCode::IllegalGeneration);
    assert_eq!(group.heartbeat("x", 1, 1), ErrorCode::UnknownMemberId);
}

#[test]
fn the_initial_delay_gathers_members_into_one_generation() {
    let mut group = Group::new("g", 3_000);
    let (a, d) = join_new(&mut group, "a", 0);
    assert!(d.is_empty(), "waits for the initial delay");
    let (b, d) = join_new(&mut group, "b", 1_000);
    assert!(d.is_empty());
    assert!(group.tick(2_000).is_empty());
    let d = group.tick(4_000);
    let ids: Vec<&String> = d.joins.iter().map(|(id, _)| id).collect();
    assert_eq!(ids, vec![&a, &b]);
    assert!(
        d.joins
            .iter()
            .all(|(_, r)| r.generation == 1 && r.leader == a)
    );
}

#[test]
fn only_a_new_member_extends_the_initial_delay() {
    let mut group = Group::new("g", 3_000);
    let (a, _) = join_new(&mut group, "a", 0);
    // The same member joins again, and again: the delay still ends 3 s after it began.
    for at in [1_000, 2_000, 2_900] {
        let (_, d) = group
            .join(request(&a, &["range"]), || unreachable!(), at)
            .expect("join again");
        assert!(d.is_empty());
    }
    let d = group.tick(3_000);
    assert_eq!(d.joins.len(), 1, "the rejoins did not extend the delay");
    assert_eq!(d.joins[0].1.generation, 1);
    // A new member arriving during the delay extends it.
    let mut group = Group::new("g", 3_000);
    join_new(&mut group, "a", 0);
    join_new(&mut group, "b", 2_000);
    assert!(group.tick(3_000).is_empty(), "b extended the delay");
    assert_eq!(group.tick(5_000).joins.len(), 2);
}

#[test]
fn a_new_member_rebalances_everyone_and_the_follower_waits_for_the_leader() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    assert_eq!(group.state, State::Stable);
    let (b, d) = join_new(&mut group, "b", 10);
    assert!(d.is_empty(), "b waits for a to rejoin");
    assert_eq!(group.heartbeat(&a, 1, 20), ErrorCode::RebalanceInProgress);
    let (_, d) = group
        .join(request(&a, &["range"]), || unreachable!(), 30)
        .expect("rejoin");
    assert_eq!(d.joins.len(), 2);
    assert_eq!(group.generation, 2);
    // The follower's sync waits; the leader's releases both.
    let d = group.sync(&b, 2, vec![], 40).expect("sync");
    assert!(d.is_empty());
    let d = group
        .sync(
            &a,
            2,
            vec![
                (a.clone(), Bytes::from_static(b"A")),
                (b.clone(), Bytes::from_static(b"B")),
            ],
            50,
        )
        .expect("sync");
    let got: BTreeMap<&String, &Bytes> =
        d.syncs.iter().map(|(id, r)| (id, &r.assignment)).collect();
    assert_eq!(got[&b], &Bytes::from_static(b"B"));
    assert_eq!(got[&a], &Bytes::from_static(b"A"));
}

/// Kafka's `classicGroupJoinExistingMember` in CompletingRebalance: a member that joins
/// again with the same metadata gets the current generation back (the leader with the
/// members); only changed metadata starts a new rebalance.
#[test]
fn a_join_with_the_same_metadata_while_completing_gets_the_current_generation() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    let (b, _) = join_new(&mut group, "b", 10);
    group
        .join(request(&a, &["range"]), || unreachable!(), 20)
        .expect("rejoin");
    assert_eq!(
        (group.state, group.generation),
        (State::CompletingRebalance, 2)
    );
    for (id, members) in [(&b, 0), (&a, 2)] {
        let (_, d) = group
            .join(request(id, &["range"]), || unreachable!(), 30)
            .expect("join again");
        assert_eq!(d.joins.len(), 1, "answered at once");
        let (to, result) = &d.joins[0];
        assert_eq!((to, result.generation, &result.leader), (id, 2, &a));
        assert_eq!(result.members.len(), members, "the leader sees the members");
        assert_eq!(
            (group.state, group.generation),
            (State::CompletingRebalance, 2)
        );
    }
    let d = group
        .sync(&a, 2, vec![(b.clone(), Bytes::from_static(b"B"))], 40)
        .expect("sync");
    assert_eq!(d.syncs.len(), 1, "the leader's own answer");
    assert_eq!(group.sync(&b, 2, vec![], 50).expect("sync").syncs.len(), 1);
    assert_eq!(group.state, State::Stable);
    // Changed metadata rebalances.
    group.sync(&a, 2, vec![], 60).expect("sync");
    group
        .join(request(&b, &["roundrobin", "range"]), || unreachable!(), 70)
        .expect("join");
    assert_eq!(group.state, State::PreparingRebalance);
}

/// Kafka validates a heartbeat's generation before the group's state: a member of an
/// older generation is told ILLEGAL_GENERATION (its partitions are lost) even while the
/// group prepares a rebalance.
#[test]
fn a_heartbeat_of_an_older_generation_is_illegal_even_while_preparing() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    let (b, _) = join_new(&mut group, "b", 10);
    assert_eq!(group.state, State::PreparingRebalance);
    assert_eq!(group.heartbeat(&a, 1, 20), ErrorCode::RebalanceInProgress);
    assert_eq!(group.heartbeat(&a, 0, 20), ErrorCode::IllegalGeneration);
    assert_eq!(group.heartbeat(&b, 0, 20), ErrorCode::IllegalGeneration);
}

#[test]
fn silent_members_expire_and_leaving_members_trigger_a_rebalance() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    let (b, _) = join_new(&mut group, "b", 0);
    group
        .join(request(&a, &["range"]), || unreachable!(), 0)
        .expect("rejoin");
    assert_eq!(group.state, State::CompletingRebalance);
    group.sync(&a, group.generation, vec![], 0).expect("sync");
    group.sync(&b, group.generation, vec![], 0).expect("sync");
    let (codes, _) = group.leave(&[(b.clone(), None), ("zz".into(), None)], 100);
    assert_eq!(codes, vec![ErrorCode::None, ErrorCode::UnknownMemberId]);
    assert_eq!(group.state, State::PreparingRebalance);
    let (_, d) = group
        .join(request(&a, &["range"]), || unreachable!(), 200)
        .expect("rejoin");
    assert_eq!(d.joins.len(), 1);
    group.sync(&a, group.generation, vec![], 200).expect("sync");
    // a falls silent past its session timeout: the group empties.
    group.tick(200 + 10_001);
    assert_eq!(group.state, State::Empty);
    assert!(group.members.is_empty());
}

/// A member that waited in JoinGroup longer than its session timeout (the others took
/// their time to rejoin) gets a fresh session with its answer, as in Kafka: the ticker
/// must not expire it before its SyncGroup arrives. Nor does a follower expire while its
/// SyncGroup waits for the leader's.
#[test]
fn a_long_rebalance_leaves_waiting_members_a_whole_session() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    let (b, _) = join_new(&mut group, "b", 1_000);
    // a keeps heartbeating and rejoins 12 s later (its application was busy).
    for t in (2_000..13_000).step_by(3_000) {
        assert_eq!(group.heartbeat(&a, 1, t), ErrorCode::RebalanceInProgress);
        assert!(group.tick(t).is_empty());
    }
    let (_, d) = group
        .join(request(&a, &["range"]), || unreachable!(), 13_000)
        .expect("rejoin");
    assert_eq!(d.joins.len(), 2, "both answered");
    // b has not sent its SyncGroup yet when the ticker runs.
    assert!(group.tick(13_050).is_empty(), "b keeps its session");
    assert!(group.sync(&b, 2, vec![], 13_100).expect("sync").is_empty());
    // The leader is slow with its assignment (it heartbeats meanwhile): b waits in
    // SyncGroup past its session.
    assert_eq!(group.heartbeat(&a, 2, 20_000), ErrorCode::None);
    assert!(
        group.tick(13_100 + 10_001).is_empty(),
        "b waits in SyncGroup"
    );
    assert_eq!(group.state, State::CompletingRebalance);
    let d = group.sync(&a, 2, vec![], 23_200).expect("sync");
    assert_eq!(d.syncs.len(), 2);
    assert!(group.tick(23_300).is_empty());
    assert_eq!(group.members.len(), 2);
}

/// A follower told to rejoin (REBALANCE_IN_PROGRESS) after waiting in SyncGroup past
/// its session timeout has a whole session to send its JoinGroup.
#[test]
fn a_follower_sent_back_from_sync_keeps_its_session() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    let (b, _) = join_new(&mut group, "b", 0);
    group
        .join(request(&a, &["range"]), || unreachable!(), 0)
        .expect("rejoin");
    assert!(group.sync(&b, 2, vec![], 100).expect("sync").is_empty());
    // The leader heartbeats but is slow with its assignment; then a third member joins.
    assert_eq!(group.heartbeat(&a, 2, 9_000), ErrorCode::None);
    let (_, d) = join_new(&mut group, "c", 12_000);
    assert_eq!(d.syncs.len(), 1, "b is sent back to rejoin");
    assert!(group.tick(12_100).is_empty(), "b keeps its session");
    assert!(group.members.contains_key(&b));
}

/// Two consumers start together: the one that comes back with its id first does not
/// form a generation of its own while the other still has to send its JoinGroup.
#[test]
fn a_member_handed_an_id_holds_back_the_join_until_it_joins_or_lapses() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    let b = group
        .join(request("", &["range"]), || "b".into(), 1_000)
        .expect_err("an id first")
        .member_id;
    let (c, d) = join_new(&mut group, "c", 1_000);
    assert!(d.joins.is_empty(), "c waits for a");
    let (_, d) = group
        .join(request(&a, &["range"]), || unreachable!(), 1_100)
        .expect("rejoin");
    assert!(d.joins.is_empty(), "a and c wait for b, which has its id");
    let (_, d) = group
        .join(request(&b, &["range"]), || unreachable!(), 1_200)
        .expect("join");
    assert_eq!(d.joins.len(), 3, "one generation for all three");
    assert_eq!(group.generation, 2);
    assert!(group.members.contains_key(&c));

    // An id never used lapses with its session timeout, and the join goes on without it.
    group.sync(&a, 2, vec![], 1_300).expect("sync");
    group
        .join(request("", &["range"]), || "d".into(), 2_000)
        .expect_err("an id first");
    let (_, d) = group
        .join(request(&a, &["other", "range"]), || unreachable!(), 2_100)
        .expect("rejoin with new metadata");
    assert!(d.joins.is_empty());
    for id in [&b, &c] {
        group
            .join(request(id, &["range"]), || unreachable!(), 2_200)
            .expect("rejoin");
    }
    assert!(
        group.tick(2_000 + 9_999).joins.is_empty(),
        "d's id still holds"
    );
    let d = group.tick(2_000 + 10_001);
    assert_eq!(d.joins.len(), 3, "d's id lapsed");
    assert_eq!(group.generation, 3);
}

/// Members that never send their SyncGroup are removed at the rebalance deadline, and the
/// rest rebalance at once without them (Kafka's pending sync expiry); the leader among
/// them, when the assignment never comes.
#[test]
fn members_that_never_sync_are_removed_at_the_deadline() {
    let mut group = Group::new("g", 0);
    let (a, _) = join_new(&mut group, "a", 0);
    group.sync(&a, 1, vec![], 0).expect("sync");
    let (b, _) = join_new(&mut group, "b", 1_000);
    let (_, d) = group
        .join(request(&a, &["range"]), || unreachable!(), 1_000)
        .expect("rejoin");
    assert_eq!(d.joins.len(), 2);
    // b syncs and waits; the leader a heartbeats (its session never lapses) but never
    // sends the assignment.
    assert!(group.sync(&b, 2, vec![], 1_100).expect("sync").is_empty());
    for t in (5_000..31_000).step_by(5_000) {
        assert_eq!(group.heartbeat(&a, 2, t), ErrorCode::None);
    }
    assert!(group.tick(1_000 + 29_999).syncs.is_empty());
    let d = group.tick(1_000 + 30_000);
    assert_eq!(d.removed, vec![a.clone()]);
    assert_eq!(d.syncs.len(), 1, "b is sent back to rejoin");
    assert_eq!(group.state, State::PreparingRebalance);
    let (_, d) = group
        .join(request(&b, &["range"]), || unreachable!(), 31_000)
        .expect("rejoin");
    assert_eq!(d.joins.len(), 1, "b alone, without waiting for a");
    assert_eq!(group.leader.as_deref(), Some(b.as_str()));

    // A follower that never syncs after the leader did is removed too.
    let (c, _) = join_new(&mut group, "c", 32_000);
    group
        .join(request(&b, &["range"]), || unreachable!(), 32_000)
        .expect("rejoin");
    assert_eq!(
        group.sync(&b, 4, vec![], 32_100).expect("sync").syncs.len(),
        1
    );
    assert_eq!(group.state, State::Stable);
    // It heartbeats (its session never lapses) but never asks for its assignment.
    for t in (35_000..62_000).step_by(5_000) {
        assert_eq!(group.heartbeat(&b, 4, t), ErrorCode::None);
        assert_eq!(group.heartbeat(&c, 4, t), ErrorCode::None);
    }
    let d = group.tick(32_000 + 30_000);
    assert_eq!(d.removed, vec![c.clone()]);
    assert_eq!(group.state, State::PreparingRebalance);
}

#[test]
fn protocols_are_chosen_by_vote_among_the_common_ones() {
    let mut group = Group::new("g", 0);
    let r = |id: &str, p: &[&str]| JoinRequest {
        require_known_member_id: false,
        ..request(id, p)
    };
    group
        .join(r("", &["roundrobin", "range"]), || "a".into(), 0)
        .expect("a");
    group
        .join(r("", &["range", "roundrobin"]), || "b".into(), 0)
        .expect("b");
    group
        .join(r("", &["range", "sticky"]), || "c".into(), 0)
        .expect("c");
    group
        .join(r("a", &["roundrobin", "range"]), || unreachable!(), 0)
        .expect("a");
    group
        .join(r("b", &["range", "roundrobin"]), || unreachable!(), 0)
        .expect("b");
    assert_eq!(group.protocol.as_deref(), Some("range"));
    let refused = group
        .join(r("", &["cooperative-sticky"]), || "d".into(), 0)
        .expect_err("no common protocol");
    assert_eq!(refused.error, ErrorCode::InconsistentGroupProtocol);
}

#[test]
fn a_static_member_rejoins_a_stable_group_without_a_rebalance() {
    let mut group = Group::new("g", 0);
    let stat = |id: &str| JoinRequest {
        instance_id: Some("host-1".into()),
        ..request(id, &["range"])
    };
    let (a, _) = group.join(stat(""), || "a1".into(), 0).expect("join");
    group
        .sync(&a, 1, vec![(a.clone(), Bytes::from_static(b"P"))], 0)
        .expect("sync");
    // Restarted: no member id, same instance id.
    let (a2, d) = group.join(stat(""), || "a2".into(), 100).expect("rejoin");
    assert_eq!(a2, "a2");
    assert_eq!(group.generation, 1, "no new generation");
    assert_eq!(d.joins[0].1.generation, 1);
    let d = group.sync(&a2, 1, vec![], 100).expect("sync");
    assert_eq!(d.syncs[0].1.assignment, Bytes::from_static(b"P"));
    // The old id is fenced out.
    assert_eq!(group.heartbeat(&a, 1, 100), ErrorCode::UnknownMemberId);
}
