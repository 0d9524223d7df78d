//! Compacted topics end to end (`cleanup.policy=compact`), with a real floe and real clients:
//! a table written as updates, deletes and transactions (one aborted) through confluent-kafka
//! is cleaned by the jobs until only the latest committed value of each live key is left, at
//! its own offset, and a consumer restoring it from offset 0 reads exactly that table across
//! the gaps; `/v1/topics` and `/metrics` show the cleaning. And on three nodes, cleaning goes
//! on while producers write, a consumer group reads and the agent running the cleaner dies.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{Floe, http_json, metric, run_client, temp_dir, wait_for};

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
    let floe = Floe::start(&dir.path().join("data"), support::FAST_CLEANING);
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
    cleaning_shown(&floe, &topic);
}

/// `/v1/topics` and `/metrics` show the cleaning of a table that is cleaned to its live keys.
fn cleaning_shown(floe: &Floe, topic: &str) {
    let topics = http_json(floe.admin, "/v1/topics");
    let partition = &topics["topics"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == topic))
        .expect("the topic in /v1/topics")["partitions"][0];
    let cleaner = &partition["cleaner"];
    println!("/v1/topics: {cleaner}");
    assert!(
        cleaner["last_cleaned_ms"].as_i64().is_some_and(|ms| ms > 0),
        "a cleaned segment was written: {cleaner}"
    );
    assert!(
        cleaner["clean_bytes"].as_u64().is_some_and(|b| b > 0),
        "{cleaner}"
    );
    // What a pass reads from the log start, it keeps in part: superseded values are gone.
    let read = metric(floe.admin, "floe_cleaner_read_records_total").expect("records read");
    let kept = metric(floe.admin, "floe_cleaner_kept_records_total").expect("records kept");
    assert!(kept < read, "kept {kept} of {read} records read");
    assert!(metric(floe.admin, "floe_cleaner_passes_total").is_some_and(|n| n >= 1.0));
    assert_eq!(
        metric(floe.admin, "floe_cleaner_compacted_partitions"),
        Some(1.0)
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

/// What a table's writes leave: the last write of each key (`None` for a delete).
type LastWrites = BTreeMap<String, Option<String>>;

fn write_updates(
    bootstrap: &str,
    topic: &str,
    updates: usize,
    seed: u64,
    create: bool,
) -> LastWrites {
    let (updates, seed) = (updates.to_string(), seed.to_string());
    let create = if create { "create" } else { "existing" };
    let out = run_client(
        "python3",
        &[
            "tests/clients/compacted_table.py",
            "updates",
            bootstrap,
            topic,
            "300",
            &updates,
            &seed,
            create,
        ],
    );
    serde_json::from_str(out.trim()).expect("the producer's JSON")
}

/// Cleaning goes on while producers write, a consumer group reads and the agent holding the
/// partitions' job dies: a group that read the topic through it holds the table the writes
/// left, and once the survivor has cleaned it, a restore from offset 0 finds exactly the last
/// write of each key (a delete as its tombstone, kept `delete.retention.ms`, an hour here).
#[test]
fn cleaning_survives_concurrent_writes_a_reading_group_and_its_job_holder_dying() {
    use std::collections::BTreeSet;
    use support::{free_addr, free_port};
    let dir = temp_dir();
    let objects = dir.path().join("objects");
    std::fs::create_dir_all(&objects).expect("objects");
    let raft: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let peers = format!("1=127.0.0.1:{}", raft[0]);
    let store = format!("file://{}", objects.display());
    // Node 1, the voter, serves the clients and runs no jobs; agents 2 and 3 share the jobs.
    let node = |id: usize| -> Vec<String> {
        let mut flags: Vec<String> = ["--node-id", &id.to_string(), "--meta-peers", &peers]
            .iter()
            .chain(&["--object-store", &store, "--default-partitions", "4"])
            .map(|s| s.to_string())
            .collect();
        flags.extend(support::FAST_CLEANING.iter().map(|s| s.to_string()));
        if id == 1 {
            flags.extend(["--jobs", "false"].map(String::from));
        } else {
            let raft_addr = format!("127.0.0.1:{}", raft[id - 1]);
            flags.extend(["--roles", "agent", "--raft-addr", &raft_addr].map(String::from));
        }
        flags
    };
    let addrs: Vec<_> = (0..3).map(|_| (free_addr(), free_addr())).collect();
    let mut nodes: BTreeMap<usize, Floe> = (1..=3)
        .map(|id| {
            let (kafka, admin) = addrs[id - 1];
            let data = dir.path().join(format!("node-{id}"));
            (id, Floe::start_at(&data, kafka, admin, &node(id)))
        })
        .collect();
    let voter_admin = addrs[0].1;
    let bootstrap = nodes[&1].bootstrap();
    let holders = || -> BTreeMap<String, i64> {
        let storage = http_json(voter_admin, "/v1/storage");
        storage["leases"]
            .as_array()
            .expect("leases")
            .iter()
            .map(|l| {
                let job = l["job"].as_str().expect("job").to_string();
                (job, l["holder"].as_i64().expect("holder"))
            })
            .collect()
    };
    wait_for("both agents' leases", Duration::from_secs(60), || {
        let held: BTreeSet<i64> = holders().into_values().collect();
        (held == BTreeSet::from([2, 3])).then_some(())
    });

    let topic = "churning-table";
    let mut last = write_updates(&bootstrap, topic, 4_000, 1, true);
    let follower = {
        let bootstrap = bootstrap.clone();
        std::thread::spawn(move || {
            let args = [
                "tests/clients/compacted_table.py",
                "follow",
                &bootstrap,
                topic,
                "readers",
            ];
            run_client("python3", &args)
        })
    };
    // Once the first passes have run, the agent holding partition 0's shard dies mid-work.
    let passes = |admin| metric(admin, "floe_cleaner_passes_total").unwrap_or(0.0);
    wait_for("a cleaning pass", Duration::from_secs(60), || {
        (passes(addrs[1].1) + passes(addrs[2].1) >= 1.0).then_some(())
    });
    let topic_id: uuid::Uuid = http_json(voter_admin, "/v1/topics")["topics"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == topic))
        .and_then(|t| t["id"].as_str()?.parse().ok())
        .expect("the topic's id");
    let shard = floe::metadata::state::shard_of(&topic_id, 0);
    let job = format!("Compaction {{ shard: {shard} }}");
    let holder = wait_for("partition 0's shard held", Duration::from_secs(60), || {
        holders().get(&job).copied()
    });
    let writer = {
        let bootstrap = bootstrap.clone();
        std::thread::spawn(move || write_updates(&bootstrap, topic, 4_000, 2, false))
    };
    nodes
        .get_mut(&(holder as usize))
        .expect("the holder")
        .kill();
    last.extend(writer.join().expect("the second writer"));
    run_client(
        "python3",
        &[
            "tests/clients/compacted_table.py",
            "ends",
            &bootstrap,
            topic,
        ],
    );

    // The group read the table the writes left.
    let live: BTreeMap<String, String> = last
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
        .collect();
    let followed: BTreeMap<String, String> =
        serde_json::from_str(follower.join().expect("the follower").trim()).expect("its JSON");
    assert_eq!(followed, live, "the group's table");

    // The survivor cleans every partition down to the last write of each key and the ends.
    let restored = wait_for(
        "every partition cleaned to the last write of each key",
        Duration::from_secs(120),
        || {
            let out = run_client(
                "python3",
                &[
                    "tests/clients/compacted_table.py",
                    "restore",
                    &bootstrap,
                    topic,
                ],
            );
            let records: Vec<(i32, i64, String, Option<String>)> =
                serde_json::from_str(out.trim()).expect("the restore's JSON");
            (records.len() == last.len() + 4).then_some(records)
        },
    );
    let mut found = LastWrites::new();
    for (partition, pair) in restored.chunk_by(|a, b| a.0 == b.0).map(|p| (p[0].0, p)) {
        assert!(
            pair.windows(2).all(|w| w[0].1 < w[1].1),
            "partition {partition}: offsets in order"
        );
    }
    for (_, _, key, value) in &restored {
        assert!(
            found.insert(key.clone(), value.clone()).is_none(),
            "one record of {key}"
        );
    }
    for partition in 0..4 {
        assert_eq!(
            found.remove(&format!("end-{partition}")),
            Some(Some("end".into()))
        );
    }
    assert_eq!(
        found, last,
        "the last write of each key, deletes as tombstones"
    );
    let survivor = addrs[if holder == 2 { 2 } else { 1 }].1;
    println!(
        "holder {holder} killed; {} keys, {} live; survivor's passes: {}",
        last.len(),
        live.len(),
        passes(survivor)
    );
}
