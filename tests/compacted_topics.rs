//! Compacted topics end to end (`cleanup.policy=compact`), with a real floe and real clients:
//! a table written as updates, deletes and transactions (one aborted) through confluent-kafka
//! is cleaned by the jobs until only the latest committed value of each live key is left, at
//! its own offset, and a consumer restoring it from offset 0 reads exactly that table across
//! the gaps.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{Floe, run_client, temp_dir, wait_for};

/// Jobs twice a second and small segments: cleaning passes in seconds.
const FAST_JOBS: &[&str] = &[
    "--compaction-lag",
    "1s",
    "--compaction-interval",
    "500ms",
    "--segment-bytes",
    "65536",
];

/// What a consumer reading the partition from offset 0 finds: (offset, key, value) in order.
fn restore(bootstrap: &str, topic: &str, isolation: &str) -> Vec<(i64, String, Option<String>)> {
    let out = run_client(
        "python3",
        &[
            "tests/clients/compacted_table.py",
            "read",
            bootstrap,
            topic,
            isolation,
        ],
    );
    let read: Value = serde_json::from_str(out.trim()).expect("the reader's JSON");
    read["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                r[0].as_i64().expect("offset"),
                r[1].as_str().expect("key").to_string(),
                r[2].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn table_cleaned_to_its_live_keys(codec: &str) {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), FAST_JOBS);
    let topic = format!("table-{codec}");
    let out = run_client(
        "python3",
        &[
            "tests/clients/compacted_table.py",
            "produce",
            &floe.bootstrap(),
            &topic,
            "300",
            "6000",
            codec,
        ],
    );
    let expected: BTreeMap<String, String> =
        serde_json::from_str(out.trim()).expect("the producer's JSON");
    // Cleaned when a restore that reads aborted records too finds one record per live key:
    // every older value, every tombstone (kept a second after the pass that first saw it) and
    // every aborted record gone.
    let records = wait_for(
        "the table to be cleaned to its live keys",
        Duration::from_secs(120),
        || {
            let records = restore(&floe.bootstrap(), &topic, "read_uncommitted");
            (records.len() == expected.len()).then_some(records)
        },
    );
    assert_eq!(
        restore(&floe.bootstrap(), &topic, "read_committed"),
        records,
        "a read_committed restore reads the same"
    );
    let restored: BTreeMap<String, String> = records
        .iter()
        .map(|(_, k, v)| (k.clone(), v.clone().expect("no tombstone is left")))
        .collect();
    assert_eq!(restored, expected, "the latest value of each live key");
    let offsets: Vec<i64> = records.iter().map(|(o, _, _)| *o).collect();
    println!(
        "{codec}: {} live keys of 300 after 6,203 offsets; offsets {:?} ... {:?}",
        records.len(),
        &offsets[..5.min(offsets.len())],
        offsets.last()
    );
    assert!(
        offsets.windows(2).all(|w| w[0] < w[1]),
        "offsets in order: {offsets:?}"
    );
    // 6,000 updates, two transactions of 100 with their markers, and the last record: offsets
    // keep their places, with gaps between them.
    assert_eq!(
        offsets.last(),
        Some(&6_202),
        "the last record keeps its offset"
    );
}

#[test]
fn a_table_in_a_compacted_topic_is_cleaned_to_the_latest_value_of_each_key() {
    table_cleaned_to_its_live_keys("lz4");
}

#[test]
fn a_table_compressed_with_zstd_is_cleaned_alike() {
    table_cleaned_to_its_live_keys("zstd");
}
