//! A running 3-voter cluster, closed to outsiders: every internal route refuses requests not
//! signed with the cluster's secret (a forged AppendEntries with a far higher term among
//! them), the admin API's mutations and views refuse callers without the bearer token, and
//! a node given another cluster's secret cannot join — while one given the right secret
//! does. Leader, term, voters and state are the same afterwards.

// These tests drive real processes over real sockets, in real time.
#![allow(clippy::disallowed_methods)]

mod support;
use floe::metadata::quorum::types::{NodeId, TypeConfig};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use support::{Floe, free_addr, free_port, http_get, http_request, temp_dir, wait_for};

const TOKEN: &str = "the admin token of this test";

struct Cluster {
    nodes: Vec<Floe>,
    raft: Vec<SocketAddr>,
}

fn quorum(admin: SocketAddr) -> Value {
    let auth = format!("Bearer {TOKEN}");
    let (status, body) = http_request(admin, "GET", "/v1/quorum", &[("Authorization", &auth)], b"");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("quorum JSON")
}

fn node_flags(id: u64, peers: &str, objects: &str, secret: &str, token: &str) -> Vec<String> {
    [
        "--node-id",
        &id.to_string(),
        "--meta-peers",
        peers,
        "--object-store",
        objects,
        "--cluster-secret-file",
        secret,
        "--admin-token-file",
        token,
    ]
    .map(String::from)
    .to_vec()
}

fn start(dir: &std::path::Path) -> Cluster {
    let objects = format!("file://{}", dir.join("objects").display());
    std::fs::create_dir_all(dir.join("objects")).expect("objects");
    let secret = dir.join("cluster.secret");
    std::fs::write(&secret, "the secret of the cluster under test\n").expect("secret");
    let token = dir.join("admin.token");
    std::fs::write(&token, format!("{TOKEN}\n")).expect("token");
    let raft: Vec<SocketAddr> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()).parse().expect("addr"))
        .collect();
    let peers = raft
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}={a}", i + 1))
        .collect::<Vec<_>>()
        .join(",");
    let nodes = (1..=3u64)
        .map(|id| {
            let flags = node_flags(
                id,
                &peers,
                &objects,
                &secret.display().to_string(),
                &token.display().to_string(),
            );
            Floe::start(&dir.join(format!("node-{id}")), &flags)
        })
        .collect();
    Cluster { nodes, raft }
}

/// An AppendEntries from a "leader" claiming a term 1000 above the current one.
fn forged_append_entries(term: u64) -> Vec<u8> {
    let request = openraft::raft::AppendEntriesRequest::<TypeConfig> {
        vote: openraft::Vote::new_committed(term + 1000, NodeId(3)),
        prev_log_id: None,
        entries: Vec::new(),
        leader_commit: None,
    };
    postcard::to_stdvec(&request).expect("encode")
}

#[test]
fn outsiders_cannot_speak_for_the_cluster() {
    let dir = temp_dir();
    let cluster = start(dir.path());
    let admin = cluster.nodes[0].admin;
    let leader = wait_for("a leader", Duration::from_secs(30), || {
        quorum(admin)["leader"].as_u64()
    });
    let before = quorum(admin);
    let term = before["term"].as_u64().expect("term");

    // Every internal route of every node, unsigned and signed with another secret.
    let forged = forged_append_entries(term);
    let other = floe::security::cluster_auth::ClusterSecret::new(b"another cluster's secret!");
    for raft in &cluster.raft {
        for path in [
            "/raft/append",
            "/raft/vote",
            "/raft/snapshot",
            "/raft/write",
            "/raft/join",
            "/kafka/forward",
        ] {
            let (status, body) = http_request(*raft, "POST", path, &[], &forged);
            assert_eq!(status, 401, "unsigned POST {path} at {raft}: {body}");
            let time = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("time")
                .as_millis() as i64;
            let signature = floe::security::cluster_auth::signature(
                &other, "POST", path, None, time, "0123", &forged,
            );
            let time = time.to_string();
            let headers = [
                ("x-floe-cluster", "-"),
                ("x-floe-time", time.as_str()),
                ("x-floe-nonce", "0123"),
                ("x-floe-signature", signature.as_str()),
            ];
            let (status, body) = http_request(*raft, "POST", path, &headers, &forged);
            assert_eq!(status, 401, "foreign-signed POST {path} at {raft}: {body}");
        }
    }

    // The admin API: mutations and views need the token; health, readiness and metrics
    // stay open.
    for node in &cluster.nodes {
        let voters = br#"{"voters":[1]}"#;
        let learner = br#"{"id":9,"raft_addr":"127.0.0.1:1"}"#;
        let json = [("Content-Type", "application/json")];
        let (status, _) = http_request(node.admin, "PUT", "/v1/quorum/voters", &json, voters);
        assert_eq!(status, 401, "PUT /v1/quorum/voters without a token");
        let wrong = [
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer not the token"),
        ];
        let (status, _) = http_request(node.admin, "PUT", "/v1/quorum/voters", &wrong, voters);
        assert_eq!(status, 401, "PUT /v1/quorum/voters with a wrong token");
        let (status, _) = http_request(node.admin, "POST", "/v1/quorum/learners", &json, learner);
        assert_eq!(status, 401, "POST /v1/quorum/learners without a token");
        for view in [
            "/v1/cluster",
            "/v1/topics",
            "/v1/groups",
            "/v1/quorum",
            "/v1/storage",
        ] {
            assert_eq!(
                http_get(node.admin, view).0,
                401,
                "GET {view} without a token"
            );
        }
        support::wait_until_ready(node.admin);
        for open in ["/healthz", "/readyz", "/metrics"] {
            assert_eq!(http_get(node.admin, open).0, 200, "GET {open}");
        }
    }

    // Two agents ask to join: one with the cluster's secret, one with another's.
    let peers = cluster
        .raft
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}={a}", i + 1))
        .collect::<Vec<_>>()
        .join(",");
    let objects = format!("file://{}", dir.path().join("objects").display());
    let token = dir.path().join("admin.token").display().to_string();
    let foreign_secret = dir.path().join("foreign.secret");
    std::fs::write(&foreign_secret, "the secret of some other cluster").expect("secret");
    let agent = |id: u64, secret: &std::path::Path| {
        let mut flags = node_flags(id, &peers, &objects, &secret.display().to_string(), &token);
        flags.extend([
            "--roles".to_string(),
            "agent".to_string(),
            "--raft-addr".to_string(),
            free_addr().to_string(),
        ]);
        Floe::start(&dir.path().join(format!("node-{id}")), &flags)
    };
    let outsider = agent(4, &foreign_secret);
    let member = agent(5, &dir.path().join("cluster.secret"));
    wait_for("the member agent to join", Duration::from_secs(30), || {
        let learners = quorum(admin)["learners"].clone();
        learners
            .as_array()
            .is_some_and(|l| l.iter().any(|id| id == 5))
            .then_some(())
    });
    wait_for("the outsider to be told", Duration::from_secs(30), || {
        outsider
            .log()
            .contains("refused this node's credentials")
            .then_some(())
    });
    drop(member);

    // The forged "leader" term (+1000) was never adopted. A busy machine may still hold an
    // ordinary election meanwhile (term + 1, perhaps another leader): only an unchanged term
    // must keep the leader.
    let after = quorum(cluster.nodes[0].admin);
    let after_term = after["term"].as_u64().expect("term");
    assert!(
        after_term < term + 1000,
        "a forged term was adopted: {after}"
    );
    assert!(after["leader"].as_u64().is_some(), "no leader: {after}");
    if after_term == term {
        assert_eq!(after["leader"].as_u64(), Some(leader), "the leader changed");
    }
    assert_eq!(after["voters"], before["voters"], "the voters changed");
    let learners = after["learners"].as_array().cloned().unwrap_or_default();
    assert!(
        !learners.iter().any(|id| id == 4),
        "the outsider joined: {after}"
    );
    let refused: f64 = cluster
        .nodes
        .iter()
        .filter_map(|n| support::metric(n.admin, "floe_internal_refused_total"))
        .sum();
    assert!(refused >= 36.0, "refusals counted: {refused}");
    for node in &cluster.nodes {
        let log = node.log();
        assert!(
            log.contains("refused a request on the internal listener"),
            "refusals are logged"
        );
        assert!(
            !log.contains("secret of the cluster"),
            "the secret was logged"
        );
    }
    drop(outsider);
}
