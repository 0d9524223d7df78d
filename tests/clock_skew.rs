//! Wrong wall clocks change nothing a client sees. Three nodes (each a voter and an agent)
//! run while an idempotent producer, a consumer group of two members committing after every
//! few records (reset `earliest`) and a group of one (reset `latest`) work through a schedule
//! of wall-clock skews (libfaketime): one node 3 s ahead, 30 s ahead, 30 s behind, then two
//! nodes 30 s ahead and 30 s behind at once. In each skew one more member joins each group,
//! bootstrapped from the skewed nodes alone (its first metadata comes from them), and leaves
//! when the skew ends, so both groups rebalance while the clocks are wrong.
//! `floe_history::check` then judges the whole history: no lost or duplicated record, no
//! read below an offset the group had committed, no committed offset going back, no skipped
//! record (a reset to `latest`).
//!
//! Run twice: with each agent advertising its own address (clients see brokers come and go
//! if liveness is misjudged), and with every agent behind one load-balanced address (groups
//! are forwarded to the agent a node believes coordinates them).

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::haproxy::behind_haproxy_routed;
use support::temp_dir;
use support::wall_clocks::WallClocks;
use support::workload::{self, Member, Recorder};

const TOPIC: &str = "skewed";
/// behind_haproxy creates topics with 6 partitions.
const PARTITIONS: i32 = 6;

/// The two runs share the machine's cores one at a time: each is six processes and five
/// clients, and a starved node would miss its heartbeats for reasons other than its clock.
static ONE_CLUSTER_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How the skews go: (node, wall-clock offset) pairs held for a while, then every clock true
/// again for a while.
const SCHEDULE: &[(&[(usize, &str)], u64)] = &[
    (&[(3, "+3")], 12),
    (&[(3, "+30")], 20),
    (&[(3, "-30")], 20),
    (&[(1, "+30"), (2, "-30")], 20),
];

/// The pause after each skew, with every clock true.
const SETTLE: Duration = Duration::from_secs(5);

fn run(behind_balancer: bool) {
    let _one = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = temp_dir();
    let clocks = WallClocks::new(dir.path(), 3);
    let listener = |_: SocketAddr, balancer: SocketAddr| {
        if behind_balancer {
            vec!["--advertised-addr".into(), balancer.to_string()]
        } else {
            Vec::new()
        }
    };
    let (nodes, balancer, _haproxy) = behind_haproxy_routed(
        dir.path(),
        3,
        &[],
        listener,
        |raft| raft,
        |id, command| clocks.configure(id, command),
    );
    let bootstrap = if behind_balancer {
        balancer.to_string()
    } else {
        nodes
            .iter()
            .map(|n| n.addr.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };

    let recorder = Recorder::new(TOPIC, PARTITIONS);
    let stop = Arc::new(AtomicBool::new(false));
    let producing = workload::produce_until(recorder.clone(), &bootstrap, stop.clone());
    let members = [
        (1, "skew-earliest", "earliest"),
        (2, "skew-earliest", "earliest"),
        (3, "skew-latest", "latest"),
    ];
    let consuming: Vec<_> = members
        .into_iter()
        .map(|(consumer, group, reset)| {
            let member = Member {
                consumer,
                group: group.into(),
                reset,
                commit_every: 10,
            };
            workload::consume_until(recorder.clone(), &bootstrap, member, stop.clone())
        })
        .collect();
    let watching = workload::watch_watermarks(recorder.clone(), &bootstrap, stop.clone());

    std::thread::sleep(SETTLE);
    let mut joiner = 10;
    let mut joined_errors = Vec::new();
    for (skews, seconds) in SCHEDULE {
        for (node, offset) in *skews {
            clocks.set(*node, offset);
        }
        // libfaketime reads the offset every second; then the members join, through the
        // skewed nodes unless every agent is behind the balancer.
        std::thread::sleep(Duration::from_secs(2));
        let through = if behind_balancer {
            balancer.to_string()
        } else {
            let skewed = skews
                .iter()
                .map(|(node, _)| nodes[node - 1].addr.to_string());
            skewed.collect::<Vec<_>>().join(",")
        };
        let leave = Arc::new(AtomicBool::new(false));
        let joined: Vec<_> = ["skew-earliest", "skew-latest"]
            .into_iter()
            .map(|group| {
                joiner += 1;
                let member = Member {
                    consumer: joiner,
                    group: group.into(),
                    reset: if group == "skew-latest" {
                        "latest"
                    } else {
                        "earliest"
                    },
                    commit_every: 10,
                };
                workload::consume_until(recorder.clone(), &through, member, leave.clone())
            })
            .collect();
        std::thread::sleep(Duration::from_secs(*seconds));
        leave.store(true, Ordering::Relaxed);
        joined_errors.extend(joined.into_iter().map(|j| j.join().expect("member")));
        for (node, _) in *skews {
            clocks.set(*node, "+0");
        }
        std::thread::sleep(SETTLE);
    }

    stop.store(true, Ordering::Relaxed);
    producing.join().expect("producer");
    let errors: Vec<usize> = consuming
        .into_iter()
        .map(|c| c.join().expect("consumer"))
        .collect();
    watching.join().expect("watermarks");
    workload::read_everything(&recorder, &bootstrap, 9);

    let report = workload::judge(&recorder.history());
    eprintln!(
        "errors the group members' clients reported (retried): {errors:?}, {joined_errors:?}"
    );
    workload::assert_clean(&report);
}

#[test]
fn skewed_wall_clocks_send_no_consumer_back_with_agents_at_their_own_addresses() {
    run(false);
}

#[test]
fn skewed_wall_clocks_send_no_consumer_back_behind_a_load_balancer() {
    run(true);
}
