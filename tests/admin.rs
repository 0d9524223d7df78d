//! The admin HTTP API of a real floe process: metrics parse as Prometheus text with the
//! documented names, readiness follows the object store, and the JSON views add up.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::kafka::{commit_offset, flush, produce, producer};
use support::s3::S3Server;
use support::{Floe, http_get, http_json, temp_dir};

/// A plain HTTP/1.0 GET; returns the status code and the body.
/// Parses the exposition with the Prometheus project's own Python parser; returns family names.
fn prometheus_families(text: &str) -> Vec<String> {
    let script = "import sys\nfrom prometheus_client.parser import text_string_to_metric_families as parse\nfor f in parse(sys.stdin.read()):\n    print(f.name, f.type)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with prometheus-client (the README test command installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("parser");
    assert!(
        output.status.success(),
        "not Prometheus text: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn metrics_views_and_cost_reflect_traffic() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &["--default-partitions", "2"]);
    assert_eq!(http_get(floe.admin, "/healthz").0, 200);
    let (p, acks) = producer(&floe.bootstrap(), "none");
    produce(&p, "watched", 2, 1000, "a");
    flush(&p);
    assert!(acks.errors.lock().unwrap().is_empty());

    // Commit offset 400 of partition 0 for group "g": its lag is the rest of that partition.
    commit_offset(&floe.bootstrap(), "g", "watched", 0, 400);

    let (status, text) = http_get(floe.admin, "/metrics");
    assert_eq!(status, 200);
    let families = prometheus_families(&text);
    for (name, kind) in [
        ("floe_produce_request_latency_seconds", "histogram"),
        ("floe_fetch_request_latency_seconds", "histogram"),
        ("floe_commit_latency_seconds", "histogram"),
        ("floe_object_size_bytes", "histogram"),
        ("floe_objects_sealed", "counter"),
        ("floe_produce_bytes", "counter"),
        ("floe_produce_records", "counter"),
        ("floe_fetch_bytes", "counter"),
        ("floe_connections", "gauge"),
        ("floe_fetches_waiting", "gauge"),
        ("floe_request_bytes_in_flight", "gauge"),
        ("floe_read_tier_reads", "counter"),
        ("floe_read_gets", "counter"),
        ("floe_fetch_wake_latency_seconds", "histogram"),
        ("floe_object_store_requests", "counter"),
        ("floe_object_store_request_latency_seconds", "histogram"),
    ] {
        assert!(
            families.contains(&format!("{name} {kind}")),
            "{name} {kind} missing from {families:?}"
        );
    }
    assert!(text.contains("floe_produce_records_total 1000"), "{text}");
    // The leader's ticks bring its clock into the state (`metadata/ticks.rs`).
    let state_time = || {
        let (_, text) = http_get(floe.admin, "/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix("floe_state_time_seconds "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .expect("floe_state_time_seconds")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while state_time() == 0.0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        state_time() > 1.0e9,
        "the state's time is the leader's wall clock"
    );
    assert!(text.contains("floe_state_producer_ids "), "{text}");

    let topics = http_json(floe.admin, "/v1/topics");
    let watched = &topics["topics"][0];
    assert_eq!(watched["name"], "watched");
    let hw0 = watched["partitions"][0]["high_watermark"]
        .as_i64()
        .expect("hw");
    assert_eq!(
        hw0 + watched["partitions"][1]["high_watermark"]
            .as_i64()
            .expect("hw"),
        1000
    );

    let groups = http_json(floe.admin, "/v1/groups");
    let group = &groups["groups"][0];
    assert_eq!(group["group"], "g");
    assert_eq!(group["offsets"][0]["lag"].as_i64(), Some(hw0 - 400));

    let cost = http_json(floe.admin, "/v1/cost?profile=s3-express&retention_hours=24");
    assert_eq!(cost["profile"]["name"], "s3-express");
    assert!(cost["requests"]["put"].as_u64().expect("puts") >= 1);
    assert!(
        cost["projected_monthly_usd"]["total"]
            .as_f64()
            .expect("total")
            > 0.0
    );
    assert!(
        cost["classic_kafka_cross_zone_monthly_usd"]
            .as_f64()
            .expect("kafka")
            > 0.0
    );
    assert_eq!(http_get(floe.admin, "/v1/cost?profile=/etc/passwd").0, 400);

    let cluster = http_json(floe.admin, "/v1/cluster");
    assert_eq!(cluster["partitions"], 2);
}

#[test]
fn readiness_follows_the_object_store() {
    let dir = temp_dir();
    let server = S3Server::seaweedfs(&dir.path().join("seaweedfs"));
    let mut flags = server.floe_flags("floe-ready");
    flags.extend([
        "--object-store-attempts".into(),
        "2".into(),
        "--object-store-request-timeout".into(),
        "1s".into(),
        // A probe at most this often; in between the last answer is repeated.
        "--ready-probe-interval".into(),
        "500ms".into(),
    ]);
    let floe = Floe::start(&dir.path().join("data"), &flags);
    support::wait_until_ready(floe.admin);
    drop(server);
    let body = support::wait_for("readiness to fail", Duration::from_secs(20), || {
        let (status, body) = http_get(floe.admin, "/readyz");
        (status == 503).then_some(body)
    });
    assert!(body.contains("object store unavailable"), "{body}");
    assert_eq!(
        http_get(floe.admin, "/healthz").0,
        200,
        "alive while not ready"
    );
}
