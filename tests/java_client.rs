//! Apache Kafka's Java client (3.9.1), what Kafka Streams, Connect, Spring and Flink reach a
//! broker through, against a real floe process: the scenarios of `tests/java/` (admin calls
//! with their values checked, idempotent and transactional producers, classic and KIP-848
//! consumers, a secured cluster), and a harness that sends every API floe advertises at every
//! version and parses each answer with the client's own message classes, a table in a
//! compacted topic cleaned and restored, and batches the cleaner rewrote read with its record
//! classes. The README test command installs the client
//! (`scripts/java_client.sh`).

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

/// A table in a compacted topic, written by the Java producer in snappy and gzip with headers
/// and timestamps, cleaned by floe's jobs (every half second here), and restored from offset 0
/// by the Java consumer: the latest value of each live key, at its own offset, across the gaps.
#[test]
fn a_table_in_a_compacted_topic_restores_to_its_live_keys() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::FAST_CLEANING);
    scenario("table", &floe.bootstrap(), &[]);
}

/// Batches the cleaner rewrote for a compacted topic, in every codec, with gaps where records
/// went, a delete horizon, tombstones, and a batch left empty: read back with the client's
/// own record classes (CRC, offsets, codec, horizon, each record).
#[test]
fn batches_the_cleaner_rewrote_read_back_with_the_clients_own_classes() {
    use bytes::Bytes;
    use floe::cleaner::rewrite::rebuild;
    use floe::protocol::record_batch::{BatchSpec, RecordBatch, build_batch, set_base_offset};
    use floe::protocol::records::Record;
    let dir = temp_dir();
    let codecs = [
        (0i16, "none"),
        (1, "gzip"),
        (2, "snappy"),
        (3, "lz4"),
        (4, "zstd"),
    ];
    for (code, name) in codecs {
        for (case, horizon, keep) in [
            (
                "some",
                Some(5_000i64),
                (|i: i32| i % 3 == 0) as fn(i32) -> bool,
            ),
            ("none-left", None, |_| false),
        ] {
            let template = build_batch(BatchSpec {
                producer_id: 7,
                producer_epoch: 1,
                base_sequence: 3,
                records: 40,
                value_bytes: 0,
                base_timestamp_ms: 1_000,
            });
            let mut raw = template.to_vec();
            raw[21..23].copy_from_slice(&code.to_be_bytes());
            let template = RecordBatch::new(Bytes::from(raw)).expect("a batch");
            // Every fifth record a tombstone; values long enough for the codecs to work.
            let records: Vec<Record> = (0..40)
                .filter(|&i| keep(i))
                .map(|i| Record {
                    index: i,
                    attributes: 0,
                    timestamp: 1_000 + i64::from(i),
                    offset_delta: i,
                    key: Some(Bytes::from(format!("k{i}"))),
                    value: (i % 5 != 0).then(|| Bytes::from(format!("v{i}-").repeat(50))),
                    headers: Bytes::from_static(&[0]),
                })
                .collect();
            let mut batch = rebuild(&template, &records, horizon)
                .expect("a codec Kafka defines")
                .to_vec();
            set_base_offset(&mut batch, 100);
            let file = dir.path().join(format!("{name}-{case}"));
            std::fs::write(file.with_extension("bin"), &batch).expect("write");
            let kept: Vec<String> = records
                .iter()
                .map(|r| {
                    let value = r
                        .value
                        .as_ref()
                        .map_or("null".into(), |v| String::from_utf8_lossy(v).into_owned());
                    format!(
                        "{}:k{}:{value}",
                        100 + i64::from(r.offset_delta),
                        r.offset_delta
                    )
                })
                .collect();
            // Kafka writes a batch left empty uncompressed.
            let codec = if records.is_empty() { "none" } else { name };
            let horizon = horizon.map_or("none".to_string(), |h| h.to_string());
            let expect = format!(
                "codec={codec}\nbase=100\nlast=139\nhorizon={horizon}\nrecords={}\n",
                kept.join(",")
            );
            std::fs::write(file.with_extension("expect"), expect).expect("write");
        }
    }
    scenario("batches", &dir.path().display().to_string(), &[]);
}
