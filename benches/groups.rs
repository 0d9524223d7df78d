//! KIP-848 consumer groups: the cost of one steady-state heartbeat (subscription resolution
//! against the topics included), and of computing a whole target assignment.
//!
//! Run: `cargo bench --bench groups`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use floe::groups::assignor::{self, Assignor, MemberSpec, Partitions};
use floe::groups::consumer::{ConsumerGroup, ConsumerGroupSettings, topic_partitions};
use floe::metadata::MetadataState;
use floe::metadata::state::CreateTopic;
use floe::protocol::messages::ConsumerGroupHeartbeatRequest;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

const SETTINGS: ConsumerGroupSettings = ConsumerGroupSettings {
    heartbeat_interval_ms: 5_000,
    session_timeout_ms: 45_000,
    max_size: 10_000,
};

/// `topics` topics of `partitions` partitions each, named t0, t1, ...
fn state(topics: usize, partitions: i32) -> MetadataState {
    let mut state = MetadataState::default();
    for t in 0..topics {
        state.apply(CreateTopic {
            name: format!("t{t}"),
            id: Uuid::from_u128(t as u128 + 1),
            partitions,
            configs: BTreeMap::new(),
        });
    }
    state
}

fn request(member: usize, epoch: i32, owned: &Partitions) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "bench".into(),
        member_id: format!("member-{member}"),
        member_epoch: epoch,
        rebalance_timeout_ms: if epoch == 0 { 300_000 } else { -1 },
        topic_partitions: Some(topic_partitions(owned)),
        ..Default::default()
    }
}

/// A stable group of `members` members subscribed to every topic (by name, or by one regex).
fn stable_group(
    state: &MetadataState,
    topics: usize,
    members: usize,
    regex: bool,
) -> (ConsumerGroup, Vec<(i32, Partitions)>) {
    let mut group = ConsumerGroup::new("bench");
    let names: Vec<String> = (0..topics).map(|t| format!("t{t}")).collect();
    let mut clients = vec![(0, Partitions::new()); members];
    for (m, client) in clients.iter_mut().enumerate() {
        let mut join = request(m, 0, &Partitions::new());
        if regex {
            join.subscribed_topic_regex = Some("t[0-9]+".into());
        } else {
            join.subscribed_topic_names = Some(names.clone());
        }
        let reply = group
            .heartbeat(&join, "bench", "/127.0.0.1", state, &SETTINGS, 0)
            .expect("join");
        *client = (reply.member_epoch, reply.assignment.unwrap_or_default());
    }
    // Heartbeat until every member is reconciled.
    for round in 1..20 {
        for (m, client) in clients.iter_mut().enumerate() {
            let reply = group
                .heartbeat(
                    &request(m, client.0, &client.1),
                    "bench",
                    "/127.0.0.1",
                    state,
                    &SETTINGS,
                    round,
                )
                .expect("heartbeat");
            client.0 = reply.member_epoch;
            if let Some(a) = reply.assignment {
                client.1 = a;
            }
        }
    }
    assert_eq!(group.state_name(), "Stable");
    (group, clients)
}

fn heartbeat(c: &mut Criterion) {
    let mut bench = c.benchmark_group("steady heartbeat");
    for (topics, members, regex) in [
        (10, 10, false),
        (100, 100, false),
        (100, 100, true),
        (1000, 100, true),
    ] {
        let state = state(topics, 12);
        let (mut group, clients) = stable_group(&state, topics, members, regex);
        let label = format!(
            "{topics} topics, {members} members{}",
            if regex { ", regex" } else { "" }
        );
        bench.bench_function(BenchmarkId::from_parameter(label), |b| {
            let mut m = 0;
            b.iter(|| {
                let (epoch, owned) = &clients[m % members];
                let reply = group
                    .heartbeat(
                        &request(m % members, *epoch, owned),
                        "bench",
                        "/127.0.0.1",
                        &state,
                        &SETTINGS,
                        100,
                    )
                    .expect("heartbeat");
                m += 1;
                reply
            })
        });
    }
    bench.finish();
}

fn target(c: &mut Criterion) {
    let mut bench = c.benchmark_group("target assignment");
    for (assignor, members, partitions) in [
        (Assignor::Uniform, 100, 1_000),
        (Assignor::Uniform, 1_000, 10_000),
        (Assignor::Range, 1_000, 10_000),
    ] {
        let topics: BTreeMap<Uuid, i32> = (0..10)
            .map(|t| (Uuid::from_u128(t + 1), partitions / 10))
            .collect();
        let subscribed: BTreeSet<Uuid> = topics.keys().copied().collect();
        let none = Partitions::new();
        let ids: Vec<String> = (0..members).map(|m| format!("member-{m:05}")).collect();
        let specs: Vec<MemberSpec<'_>> = ids
            .iter()
            .map(|id| MemberSpec {
                id,
                subscribed: subscribed.clone(),
                current: &none,
            })
            .collect();
        // The sticky case: one member joins a group that had a target already.
        let previous = assignor::assign(assignor, &specs[1..], &topics);
        let sticky: Vec<MemberSpec<'_>> = ids
            .iter()
            .map(|id| MemberSpec {
                id,
                subscribed: subscribed.clone(),
                current: previous.get(id).unwrap_or(&none),
            })
            .collect();
        let label = format!(
            "{} {members} members {partitions} partitions, one joins",
            assignor.name()
        );
        bench.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| assignor::assign(assignor, &sticky, &topics))
        });
    }
    bench.finish();
}

criterion_group!(benches, heartbeat, target);
criterion_main!(benches);
