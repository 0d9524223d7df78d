//! Transactions through real clients against a real floe process: confluent-kafka
//! (librdkafka) commits and aborts, fences zombies, recovers a consume-transform-produce loop
//! killed mid-transaction; a hung transaction times out; kafka-python (an independent
//! implementation) runs transactions too.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use serde_json::Value;
use std::time::Duration;
use support::{Floe, metric, run_client, temp_dir, wait_for};

fn txn_client(mode: &str, floe: &Floe, topic: &str) -> Value {
    let out = run_client(
        "python3",
        &[
            "tests/clients/txn_confluent.py",
            mode,
            &floe.bootstrap(),
            topic,
        ],
    );
    serde_json::from_str(out.lines().last().expect("a JSON line")).expect("JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

#[test]
fn read_committed_sees_exactly_the_committed_records_and_no_markers() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let seen = txn_client("basic", &floe, "txn-basic");
    let committed = strings(&seen["committed"]);
    let mut expected: Vec<String> = Vec::new();
    for partition in 0..2 {
        for round in ["c1", "c2"] {
            expected.extend(
                (0..10)
                    .filter(|i| i % 2 == partition)
                    .map(|i| format!("{round}-{i}")),
            );
        }
    }
    assert_eq!(committed, expected, "{seen}");
    // read_uncommitted sees the aborted round too, never a marker (markers carry no value
    // an application sees; each round's markers take one offset per partition).
    let uncommitted = strings(&seen["uncommitted"]);
    assert_eq!(uncommitted.len(), 30, "{seen}");
    assert_eq!(
        uncommitted.iter().filter(|v| v.starts_with("a1-")).count(),
        10
    );
    // Offsets: per partition 5 records, a marker, 5, a marker, 5, a marker.
    let offsets: Vec<i64> = seen["committed_offsets"]["0"]
        .as_array()
        .expect("partition 0")
        .iter()
        .map(|pair| pair[0].as_i64().expect("offset"))
        .collect();
    assert_eq!(offsets, vec![0, 1, 2, 3, 4, 12, 13, 14, 15, 16], "{seen}");
    let admin = floe.admin;
    assert_eq!(
        metric(admin, "floe_transactions_committed_total"),
        Some(2.0)
    );
    assert_eq!(metric(admin, "floe_transactions_aborted_total"), Some(1.0));
    assert_eq!(metric(admin, "floe_transactions_open"), Some(0.0));
}

#[test]
fn a_second_producer_with_the_same_transactional_id_fences_the_first() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let seen = txn_client("fence", &floe, "txn-fence");
    assert_eq!(seen["fenced"]["fatal"], Value::Bool(true), "{seen}");
    assert_eq!(strings(&seen["committed"]), vec!["fresh"], "{seen}");
}

#[test]
fn a_hung_transaction_times_out_and_the_stable_offset_moves_on() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    txn_client("hung", &floe, "txn-hung");
    assert_eq!(metric(floe.admin, "floe_transactions_open"), Some(1.0));
    // A later transaction commits behind the hung one; read_committed readers see it only
    // once the coordinator has aborted the hung one (its 2 s timeout, checked every 10 s).
    let seen = txn_client("after", &floe, "txn-hung");
    assert_eq!(strings(&seen["committed"]), vec!["after"], "{seen}");
    assert_eq!(
        metric(floe.admin, "floe_transactions_timed_out_total"),
        Some(1.0)
    );
    assert_eq!(metric(floe.admin, "floe_transactions_open"), Some(0.0));
}

#[test]
fn a_processor_killed_mid_transaction_and_restarted_outputs_every_input_exactly_once() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let b = floe.bootstrap();
    let inputs = 300;
    run_client(
        "python3",
        &[
            "tests/clients/txn_eos_check.py",
            "seed",
            &b,
            "eos-in",
            "eos-out",
            &inputs.to_string(),
        ],
    );
    let spawn = || {
        std::process::Command::new("python3")
            .args([
                "tests/clients/txn_processor.py",
                &b,
                "eos-in",
                "eos-out",
                "eos-processor",
                "100",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("python3")
    };
    // The first life is killed (SIGKILL) once it has committed some transactions, inside the
    // next one: its records written, its offsets not committed.
    let mut first = spawn();
    let stdout = first.stdout.take().expect("stdout");
    let lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let mut committed = 0;
    for line in lines {
        let line = line.expect("line");
        if let Some(n) = line.strip_prefix("inside ") {
            committed = n.parse::<usize>().expect("count");
            if committed >= 60 {
                break;
            }
        }
    }
    assert!(
        committed >= 60 && committed < inputs,
        "the first life processed {committed}"
    );
    first.kill().expect("kill");
    first.wait().expect("reaped");
    // The second life, with the same transactional id, fences the first's open transaction
    // and drains the input.
    let second = spawn().wait_with_output().expect("second life");
    assert!(
        second.status.success(),
        "the second life failed (it gives up after 180 s)"
    );
    let out = run_client(
        "python3",
        &[
            "tests/clients/txn_eos_check.py",
            "check",
            &b,
            "eos-in",
            "eos-out",
            &inputs.to_string(),
        ],
    );
    let report: Value = serde_json::from_str(out.lines().last().expect("report")).expect("JSON");
    assert_eq!(report["missing"], Value::from(0), "{report}");
    assert_eq!(report["duplicates"], Value::from(0), "{report}");
    assert_eq!(report["offsets_match"], Value::Bool(true), "{report}");
    // The first life's unfinished transaction is there for read_uncommitted readers only
    // (aborted when the second life started).
    assert!(
        report["uncommitted_extra"].as_i64().expect("extra") > 0,
        "{report}"
    );
    wait_for("no open transaction", Duration::from_secs(5), || {
        (metric(floe.admin, "floe_transactions_open") == Some(0.0)).then_some(())
    });
}

#[test]
fn kafka_python_commits_and_aborts_transactions() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let out = run_client(
        "python3",
        &[
            "tests/clients/txn_kafka_python.py",
            &floe.bootstrap(),
            "txn-kp",
        ],
    );
    let seen: Value = serde_json::from_str(out.lines().last().expect("JSON")).expect("JSON");
    assert_eq!(
        strings(&seen["committed"]),
        (0..5).map(|i| format!("kept-{i}")).collect::<Vec<_>>(),
        "{seen}"
    );
}
