//! Apache Kafka's Java client (3.9.1), what Kafka Streams, Connect, Spring and Flink reach a
//! broker through, against a real floe process: the scenarios of `tests/java/` (admin calls
//! with their values checked, idempotent and transactional producers, classic and KIP-848
//! consumers, a secured cluster), and a harness that sends every API floe advertises at every
//! version and parses each answer with the client's own message classes. The README test
//! command installs the client (`scripts/java_client.sh`).

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use support::{Floe, free_addr, run_client, temp_dir};

/// Runs one scenario; it fails the test with the scenario's PASS/FAIL lines if any check failed.
fn scenario(name: &str, bootstrap: &str, args: &[&str]) {
    let mut all = vec!["run", name, bootstrap];
    all.extend_from_slice(args);
    let out = run_client("scripts/java_client.sh", &all);
    println!("{out}");
}

fn plain_floe(dir: &std::path::Path) -> Floe {
    Floe::start(
        &dir.join("data"),
        &["--group-initial-rebalance-delay", "0s"],
    )
}

#[test]
fn admin_calls_of_spring_streams_and_connect() {
    let dir = temp_dir();
    let floe = plain_floe(dir.path());
    scenario("admin", &floe.bootstrap(), &[]);
}

#[test]
fn idempotent_producer_with_every_codec() {
    let dir = temp_dir();
    let floe = plain_floe(dir.path());
    scenario("producer", &floe.bootstrap(), &[]);
}

#[test]
fn transactions_commit_abort_fence_and_send_offsets() {
    let dir = temp_dir();
    let floe = plain_floe(dir.path());
    scenario("transactions", &floe.bootstrap(), &[]);
}

#[test]
fn consumers_classic_and_kip_848() {
    let dir = temp_dir();
    let floe = plain_floe(dir.path());
    scenario("consumer", &floe.bootstrap(), &[]);
}

#[test]
fn every_answer_parses_with_the_clients_own_classes() {
    let dir = temp_dir();
    let floe = plain_floe(dir.path());
    scenario("responses", &floe.bootstrap(), &[]);
}

#[test]
fn acls_scram_users_and_refusals_on_a_secured_floe() {
    let dir = temp_dir();
    let users = dir.path().join("plain-users");
    std::fs::write(&users, "admin:admin-secret\n").expect("users");
    let (plaintext, sasl) = (free_addr(), free_addr());
    let listeners = format!("PLAINTEXT://{plaintext},SASL_PLAINTEXT://{sasl}");
    let flags = [
        "--listeners",
        &listeners,
        "--sasl-enabled-mechanisms",
        "PLAIN,SCRAM-SHA-512",
        "--sasl-plain-users-file",
        &users.display().to_string(),
        "--authorizer",
        "acl",
        "--super-users",
        "User:admin",
        "--group-initial-rebalance-delay",
        "0s",
    ];
    let _floe = Floe::start_at(&dir.path().join("data"), plaintext, free_addr(), &flags);
    scenario("secured", &sasl.to_string(), &["admin", "admin-secret"]);
}
