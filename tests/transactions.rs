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
    python_json(&[
        "tests/clients/txn_confluent.py",
        mode,
        &floe.bootstrap(),
        topic,
    ])
}

/// Runs a client script and reads the JSON line it ends with.
fn python_json(args: &[&str]) -> Value {
    let out = run_client("python3", args);
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
fn compaction_copies_markers_into_segments_and_read_committed_reads_the_same() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &["--compaction-lag", "1s", "--compaction-interval", "500ms"],
    );
    let before = txn_client("basic", &floe, "txn-compacted");
    // Wait until both partitions are one segment each: runs and markers rewritten together.
    wait_for("compaction", Duration::from_secs(60), || {
        let topics = support::http_json(floe.admin, "/v1/topics");
        let partitions = topics["topics"]
            .as_array()?
            .iter()
            .find(|t| t["name"] == "txn-compacted")?["partitions"]
            .as_array()?
            .clone();
        partitions
            .iter()
            .all(|p| p["index_entries"] == 1 && p["segments"] == 1)
            .then_some(())
    });
    let after = txn_client("read", &floe, "txn-compacted");
    assert_eq!(after["committed"], before["committed"], "{after}");
    assert_eq!(after["committed_offsets"], before["committed_offsets"]);
    assert_eq!(
        after["uncommitted"].as_array().map(Vec::len),
        Some(30),
        "{after}"
    );
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
    let report = python_json(&[
        "tests/clients/txn_eos_check.py",
        "check",
        &b,
        "eos-in",
        "eos-out",
        &inputs.to_string(),
    ]);
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
    let seen = python_json(&[
        "tests/clients/txn_kafka_python.py",
        &floe.bootstrap(),
        "txn-kp",
    ]);
    assert_eq!(
        strings(&seen["committed"]),
        (0..5).map(|i| format!("kept-{i}")).collect::<Vec<_>>(),
        "{seen}"
    );
}

/// A batch with the transactional attribute set (the CRC recomputed).
fn transactional_batch(producer: (i64, i16), sequence: i32, records: i32) -> bytes::Bytes {
    let mut b = floe::protocol::record_batch::build_test_batch(
        producer.0, producer.1, sequence, records, 8,
    )
    .to_vec();
    let attributes = i16::from_be_bytes([b[21], b[22]]) | 0x10;
    b[21..23].copy_from_slice(&attributes.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b.into()
}

#[test]
fn transaction_version_2_joins_partitions_by_produce_and_moves_the_epoch_per_transaction() {
    use floe::protocol::messages::{
        ApiVersionsRequest, CreateTopicsRequest, EndTxnRequest, InitProducerIdRequest,
        ProduceRequest, RequestBody, ResponseBody, create_topics_request, produce_request,
    };
    use support::kafka_call;
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &["--transaction-version", "2"]);
    let addr = floe.addr.to_string();
    let call = |version: i16, body: RequestBody| kafka_call(&addr, version, body);
    // Kafka 4 clients read the finalized feature and switch to transaction version 2.
    let ResponseBody::ApiVersions(versions) = call(
        3,
        RequestBody::ApiVersions(ApiVersionsRequest {
            client_software_name: "tv2".into(),
            client_software_version: "1".into(),
            ..Default::default()
        }),
    ) else {
        panic!("ApiVersions")
    };
    let level: Vec<(String, i16)> = versions
        .finalized_features
        .iter()
        .filter(|f| f.name == "transaction.version")
        .map(|f| (f.name.clone(), f.max_version_level))
        .collect();
    assert_eq!(level, vec![("transaction.version".to_string(), 2)]);
    call(
        7,
        RequestBody::CreateTopics(CreateTopicsRequest {
            topics: vec![create_topics_request::CreatableTopic {
                name: "tv2".into(),
                num_partitions: 1,
                replication_factor: 1,
                ..Default::default()
            }],
            timeout_ms: 10_000,
            ..Default::default()
        }),
    );
    let ResponseBody::InitProducerId(init) = call(
        4,
        RequestBody::InitProducerId(InitProducerIdRequest {
            transactional_id: Some("tv2-txn".into()),
            transaction_timeout_ms: 60_000,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        }),
    ) else {
        panic!("InitProducerId")
    };
    assert_eq!(init.error_code, 0);
    let produce = |producer: (i64, i16), sequence: i32, records: i32| -> i16 {
        let ResponseBody::Produce(r) = call(
            12,
            RequestBody::Produce(ProduceRequest {
                transactional_id: Some("tv2-txn".into()),
                acks: -1,
                timeout_ms: 10_000,
                topic_data: vec![produce_request::TopicProduceData {
                    name: "tv2".into(),
                    partition_data: vec![produce_request::PartitionProduceData {
                        index: 0,
                        records: Some(transactional_batch(producer, sequence, records).into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }),
        ) else {
            panic!("Produce")
        };
        r.responses[0].partition_responses[0].error_code
    };
    let end = |producer: (i64, i16), commit: bool| -> (i16, i64, i16) {
        let ResponseBody::EndTxn(r) = call(
            5,
            RequestBody::EndTxn(EndTxnRequest {
                transactional_id: "tv2-txn".into(),
                producer_id: producer.0,
                producer_epoch: producer.1,
                committed: commit,
                ..Default::default()
            }),
        ) else {
            panic!("EndTxn")
        };
        (r.error_code, r.producer_id, r.producer_epoch)
    };
    // No AddPartitionsToTxn: the produce joins the partition to the transaction.
    let first = (init.producer_id, init.producer_epoch);
    assert_eq!(produce(first, 0, 3), 0);
    let (code, id, epoch) = end(first, true);
    assert_eq!(
        (code, id, epoch),
        (0, first.0, first.1 + 1),
        "a new epoch per transaction"
    );
    // A retried end gets the same answer; the old epoch is fenced for produce.
    assert_eq!(end(first, true), (0, id, epoch));
    assert_eq!(produce(first, 3, 1), 47, "INVALID_PRODUCER_EPOCH");
    // The next transaction, aborted.
    let second = (id, epoch);
    assert_eq!(produce(second, 0, 2), 0);
    assert_eq!(end(second, false).0, 0);
    // librdkafka reads back the committed records only, and skips both markers.
    let seen = txn_client("read", &floe, "tv2");
    assert_eq!(
        seen["committed"].as_array().map(Vec::len),
        Some(3),
        "{seen}"
    );
    assert_eq!(
        seen["uncommitted"].as_array().map(Vec::len),
        Some(5),
        "{seen}"
    );
}
