//! The storage lifecycle end to end, with real processes and real clients: compaction of many
//! small objects into segments under load, retention and DeleteRecords, orphans and deleted
//! topics collected, and jobs that move on when their agent dies.
//!
//! The object store is the local filesystem (the embedded default), so the bucket's contents
//! are read straight from the disk, independently of floe; `s3_stores.rs` runs compaction
//! and collection over SeaweedFS's S3, with injected faults, and lists the bucket.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::RDKafkaErrorCode;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::kafka::{Seen, consume, flush, load_until_stopped, produce, producer};
use support::{Floe, free_addr, free_port, http_json, run_client, temp_dir, wait_for};

/// Jobs every second, short lags and grace periods: a lifecycle in seconds.
const FAST_JOBS: &[&str] = &[
    "--compaction-lag",
    "1s",
    "--compaction-interval",
    "500ms",
    "--collection-interval",
    "1s",
    "--dead-object-grace",
    "2s",
    "--orphan-sweep-interval",
    "1s",
    "--orphan-grace",
    "5s",
    "--segment-bytes",
    "262144",
];

/// The objects in the store, read from the disk.
fn objects_on_disk(objects: &Path) -> BTreeSet<String> {
    match std::fs::read_dir(objects.join("v1")) {
        Ok(dir) => dir
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect(),
        Err(_) => BTreeSet::new(),
    }
}

fn partitions_of(admin: std::net::SocketAddr, topic: &str) -> Vec<Value> {
    let topics = http_json(admin, "/v1/topics");
    topics["topics"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == topic))
        .and_then(|t| t["partitions"].as_array().cloned())
        .unwrap_or_default()
}

/// Whether every partition of `topic` holds segments only (no run left in a produce object),
/// and few of them: a binary counter of segments leaves O(log) per partition.
fn all_compacted(admin: std::net::SocketAddr, topic: &str) -> bool {
    let partitions = partitions_of(admin, topic);
    !partitions.is_empty()
        && partitions.iter().all(|p| {
            let entries = p["index_entries"].as_u64().unwrap_or(0);
            entries == p["segments"].as_u64().unwrap_or(u64::MAX) && entries <= 5
        })
}

fn max_entries(admin: std::net::SocketAddr, topic: &str) -> u64 {
    partitions_of(admin, topic)
        .iter()
        .map(|p| p["index_entries"].as_u64().unwrap_or(0))
        .max()
        .unwrap_or(0)
}

fn high_watermarks(admin: std::net::SocketAddr, topic: &str) -> BTreeMap<i32, usize> {
    partitions_of(admin, topic)
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().expect("partition") as i32,
                p["high_watermark"].as_u64().expect("high watermark") as usize,
            )
        })
        .collect()
}

/// Waits until the store holds exactly the objects the state refers to: no dead one left,
/// no orphan, nothing else.
fn wait_for_live_objects_only(floe: &Floe, objects: &Path) {
    wait_for(
        "the store to hold the live objects only",
        Duration::from_secs(90),
        || {
            let s = http_json(floe.admin, "/v1/storage");
            let live = s["objects_live"].as_u64()? as usize;
            (s["objects_dead"] == 0 && objects_on_disk(objects).len() == live).then_some(())
        },
    );
}

/// Every acknowledged record of `topic` is read back at its offset.
fn assert_acked_records_read_back(floe: &Floe, topic: &str, acked: &BTreeMap<i32, Vec<Seen>>) {
    let high = high_watermarks(floe.admin, topic);
    let got = consume(&floe.bootstrap(), topic, &high);
    for (partition, records) in acked {
        for a in records {
            let r = &got[partition][a.offset as usize];
            assert_eq!(
                (&r.key, &r.value),
                (&a.key, &a.value),
                "partition {partition}"
            );
        }
    }
}

/// Produces `rounds` rounds of `per_round` records, flushing after each, so every round lands
/// in objects of its own: many small objects per partition.
fn produce_rounds(bootstrap: &str, topic: &str, partitions: i32, rounds: usize, per_round: usize) {
    for (i, codec) in ["lz4", "zstd", "gzip", "none"]
        .iter()
        .cycle()
        .take(rounds)
        .enumerate()
    {
        let (p, acks) = producer(bootstrap, codec);
        produce(&p, topic, partitions, per_round, &format!("{topic}-{i}"));
        flush(&p);
        assert!(
            acks.errors.lock().expect("errors").is_empty(),
            "{:?}",
            acks.errors
        );
    }
}

#[test]
fn compaction_rewrites_many_small_objects_into_segments_and_loses_nothing() {
    const PARTITIONS: i32 = 50;
    let dir = temp_dir();
    let data = dir.path().join("data");
    let objects = data.join("objects");
    // A file per object (file://), so the test can count them on disk.
    let store = format!("file://{}", objects.display());
    std::fs::create_dir_all(&objects).unwrap();
    let flags = ["--default-partitions", "50", "--object-store", &store];
    // First life: compaction waits ten minutes by default, so the objects stay small.
    let mut floe = Floe::start(&data, &flags);
    produce_rounds(&floe.bootstrap(), "many", PARTITIONS, 12, 2_000);
    let high = high_watermarks(floe.admin, "many");
    assert_eq!(high.values().sum::<usize>(), 24_000);
    let before = consume(&floe.bootstrap(), "many", &high);
    let entries_before = max_entries(floe.admin, "many");
    let files_before = objects_on_disk(&objects);
    assert!(
        entries_before >= 12,
        "one entry per round: {entries_before}"
    );
    floe.stop();

    // Second life with the jobs quick: compaction runs under produce, fetch and a group.
    let mut args: Vec<&str> = flags.to_vec();
    args.extend_from_slice(FAST_JOBS);
    let floe = Floe::start(&data, &args);
    let bootstrap = floe.bootstrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (p, acks) = producer(&bootstrap, "lz4");
    let load = load_until_stopped(p, "live", 10, 50, stop.clone(), Duration::from_secs(30));
    let group = {
        let (stop, bootstrap) = (stop.clone(), bootstrap.clone());
        std::thread::spawn(move || group_reads(&bootstrap, "live", &stop))
    };
    wait_for(
        "compaction of every partition",
        Duration::from_secs(120),
        || all_compacted(floe.admin, "many").then_some(()),
    );
    // Reads after compaction are the same records at the same offsets: keys, values, headers,
    // timestamps, whatever their codec.
    let after = consume(&bootstrap, "many", &high);
    for p in 0..PARTITIONS {
        assert_eq!(
            &after[&p][..high[&p]],
            &before[&p][..],
            "partition {p} reads back differently after compaction"
        );
    }
    stop.store(true, Ordering::Relaxed);
    load.join().expect("load").expect("the load's final flush");
    let seen = group.join().expect("group reader");
    // Every acknowledged record of the live topic was read by the group once, at its offset.
    let acked = acks.by_partition.lock().unwrap().clone();
    assert_acked_records_read_back(&floe, "live", &acked);
    let read_by_group: usize = seen.values().map(BTreeSet::len).sum();
    assert!(
        read_by_group >= acked.values().map(Vec::len).sum::<usize>(),
        "the group read {read_by_group} records"
    );
    // Once the jobs are done, the store holds exactly the live objects: the small ones went
    // when their grace period passed.
    wait_for_live_objects_only(&floe, &objects);
    // Every small object of the first life is gone: all its runs are in segments now.
    let left = objects_on_disk(&objects);
    let kept: Vec<_> = files_before.iter().filter(|f| left.contains(*f)).collect();
    assert!(kept.is_empty(), "small objects left: {kept:?}");
    let segments: u64 = partitions_of(floe.admin, "many")
        .iter()
        .map(|p| p["segments"].as_u64().unwrap())
        .sum();
    assert!(segments >= PARTITIONS as u64, "{segments} segments");
    assert!(
        support::metric(
            floe.admin,
            "floe_jobs_object_store_requests_total{op=\"put\"}"
        )
        .unwrap()
            > 0.0
    );
}

/// A produce object holds runs of every partition written in its flush interval: merging
/// them reads each object once, not once per partition (`jobs::sources`). A fresh process has
/// nothing in its memory tier, so every read is a GET the jobs' metrics count.
#[test]
fn merging_many_partitions_reads_each_object_once() {
    const PARTITIONS: i32 = 20;
    let dir = temp_dir();
    let data = dir.path().join("data");
    let objects = data.join("objects");
    let store = format!("file://{}", objects.display());
    std::fs::create_dir_all(&objects).unwrap();
    let flags = ["--default-partitions", "20", "--object-store", &store];
    let mut floe = Floe::start(&data, &flags);
    produce_rounds(&floe.bootstrap(), "wide", PARTITIONS, 6, 400);
    let high = high_watermarks(floe.admin, "wide");
    let before = consume(&floe.bootstrap(), "wide", &high);
    // The state's time (the leader's ticks, one a second) moves past every commit by more
    // than twice the lag below before this life ends, so the next one finds every run due in
    // its first round: one group per partition, all planned in one pass, each merged into one
    // segment (runs merged in two rounds would make two segments, whose merge reads them).
    std::thread::sleep(Duration::from_secs(4));
    floe.stop();
    let produced = objects_on_disk(&objects).len();
    assert!(produced >= 6, "{produced} objects");
    let mut args: Vec<&str> = flags.to_vec();
    args.extend_from_slice(&["--compaction-lag", "1s", "--compaction-interval", "500ms"]);
    let floe = Floe::start(&data, &args);
    wait_for(
        "compaction of every partition",
        Duration::from_secs(60),
        || all_compacted(floe.admin, "wide").then_some(()),
    );
    // Every attempt is counted: one retried after an error is not a second read.
    let jobs_gets = |family: &str| {
        support::metric(floe.admin, &format!("{family}{{op=\"get\"}}")).unwrap_or(0.0) as usize
    };
    let gets = jobs_gets("floe_jobs_object_store_requests_total")
        - jobs_gets("floe_jobs_object_store_errors_total");
    assert_eq!(
        gets, produced,
        "GETs to merge the runs of {PARTITIONS} partitions in {produced} objects: one per object"
    );
    let after = consume(&floe.bootstrap(), "wide", &high);
    for p in 0..PARTITIONS {
        assert_eq!(&after[&p][..high[&p]], &before[&p][..], "partition {p}");
    }
}

/// A consumer group member reading `topic` and committing, until `stop` and caught up; the
/// offsets it read, by partition. Panics on a record read twice.
fn group_reads(bootstrap: &str, topic: &str, stop: &AtomicBool) -> BTreeMap<i32, BTreeSet<i64>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "lifecycle-group")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    consumer.subscribe(&[topic]).expect("subscribe");
    let mut seen: BTreeMap<i32, BTreeSet<i64>> = BTreeMap::new();
    let mut idle_since = None::<Instant>;
    loop {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                idle_since = None;
                let fresh = seen.entry(m.partition()).or_default().insert(m.offset());
                assert!(
                    fresh,
                    "offset {} of {} read twice",
                    m.offset(),
                    m.partition()
                );
                if m.offset() % 100 == 0 {
                    let _ = consumer.commit_message(&m, CommitMode::Async);
                }
            }
            // Subscribed before the producer's first request created the topic: librdkafka
            // reports it once and goes on.
            Some(Err(e))
                if e.rdkafka_error_code() == Some(RDKafkaErrorCode::UnknownTopicOrPartition) => {}
            Some(Err(e)) => panic!("group consumer: {e}"),
            None if stop.load(Ordering::Relaxed) => {
                let since = *idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(5) {
                    break;
                }
            }
            None => {}
        }
    }
    seen
}

#[test]
fn retention_and_delete_records_advance_the_log_start_and_consumers_reset() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let floe = Floe::start(&data, FAST_JOBS);
    let out = run_client(
        "python3",
        &[
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/clients/lifecycle_admin.py"
            ),
            &floe.bootstrap(),
        ],
    );
    assert!(out.contains("lifecycle admin: ok"), "{out}");
}

#[test]
fn orphans_and_deleted_topics_are_removed_after_their_grace_period() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let objects = data.join("objects");
    // A file per object (file://), so the test can plant and count them on disk.
    let store = format!("file://{}", objects.display());
    std::fs::create_dir_all(&objects).unwrap();
    // No compaction here: every object committed stays the one it was.
    let mut args = vec![
        "--default-partitions",
        "3",
        "--compaction-lag",
        "1h",
        "--object-store",
        &store,
    ];
    args.extend(
        FAST_JOBS
            .chunks(2)
            .filter(|f| f[0] != "--compaction-lag")
            .flatten(),
    );
    let floe = Floe::start(&data, &args);
    let bootstrap = floe.bootstrap();
    produce_rounds(&bootstrap, "doomed", 3, 4, 300);
    let doomed_files = objects_on_disk(&objects);
    assert!(doomed_files.len() >= 4);

    // What an agent leaves when it dies between its PUT and its commit: an object no commit
    // names. One is old, one is new (within the grace period); a file that is not floe's is
    // never touched.
    let hour_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 3_600_000;
    let now = hour_ago + 3_600_000;
    let old = format!("{hour_ago:013}-0f8fad5b-d9cb-469f-a165-70867728950e.floe");
    let fresh = format!("{now:013}-1f8fad5b-d9cb-469f-a165-70867728950e.floe");
    for name in [&old, &fresh, &"notes.txt".to_string()] {
        std::fs::write(objects.join("v1").join(name), b"not committed").unwrap();
    }
    wait_for("the old orphan deleted", Duration::from_secs(30), || {
        (!objects_on_disk(&objects).contains(&old)).then_some(())
    });
    assert!(
        objects_on_disk(&objects).contains(&fresh),
        "within its grace"
    );
    wait_for("the young orphan deleted", Duration::from_secs(30), || {
        (!objects_on_disk(&objects).contains(&fresh)).then_some(())
    });
    assert!(objects_on_disk(&objects).contains("notes.txt"));
    // No committed record was lost with the orphans.
    let high = high_watermarks(floe.admin, "doomed");
    assert_eq!(high.values().sum::<usize>(), 1_200);
    let got = consume(&bootstrap, "doomed", &high);
    assert_eq!(got.values().map(Vec::len).sum::<usize>(), 1_200);

    run_client("kcat", &["-b", &bootstrap, "-L", "-t", "doomed"]);
    let deleted = run_client(
        "python3",
        &[
            "-c",
            "import sys; from confluent_kafka.admin import AdminClient; \
             a = AdminClient({'bootstrap.servers': sys.argv[1]}); \
             [f.result() for f in a.delete_topics(['doomed']).values()]; print('deleted')",
            &bootstrap,
        ],
    );
    assert!(deleted.contains("deleted"));
    wait_for(
        "the topic's objects deleted",
        Duration::from_secs(60),
        || {
            let left = objects_on_disk(&objects);
            doomed_files.iter().all(|f| !left.contains(f)).then_some(())
        },
    );
    // A new topic of the same name starts empty.
    let (p, _) = producer(&bootstrap, "none");
    produce(&p, "doomed", 1, 1, "new");
    flush(&p);
    let high = high_watermarks(floe.admin, "doomed");
    assert_eq!(high.values().sum::<usize>(), 1, "{high:?}");
    let got = consume(&bootstrap, "doomed", &BTreeMap::from([(0, 1)]));
    assert_eq!(got[&0].len(), 1);
    assert_eq!(got[&0][0].key, b"key-new-0".to_vec());
}

#[test]
fn jobs_move_to_another_agent_when_their_holder_dies() {
    let dir = temp_dir();
    let objects = dir.path().join("objects");
    std::fs::create_dir_all(&objects).unwrap();
    let raft: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let peers = format!("1=127.0.0.1:{}", raft[0]);
    let node = |id: usize| -> Vec<String> {
        let mut flags: Vec<String> = [
            "--node-id",
            &id.to_string(),
            "--meta-peers",
            &peers,
            "--object-store",
            &format!("file://{}", objects.display()),
            "--default-partitions",
            "8",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        flags.extend(FAST_JOBS.iter().map(|s| s.to_string()));
        if id == 1 {
            flags.extend(["--jobs".to_string(), "false".to_string()]);
        } else {
            flags.extend(
                [
                    "--roles",
                    "agent",
                    "--raft-addr",
                    &format!("127.0.0.1:{}", raft[id - 1]),
                ]
                .map(String::from),
            );
        }
        flags
    };
    let addrs: Vec<_> = (0..3).map(|_| (free_addr(), free_addr())).collect();
    let mut nodes: BTreeMap<usize, Floe> = (1..=3)
        .map(|id| {
            let (kafka, admin) = addrs[id - 1];
            let floe = Floe::start_at(
                &dir.path().join(format!("node-{id}")),
                kafka,
                admin,
                &node(id),
            );
            (id, floe)
        })
        .collect();
    let voter_admin = addrs[0].1;
    let bootstrap = nodes[&1].bootstrap();
    // Both agents' jobs are under way: every lease is held by 2 or 3.
    let holders = |admin| -> BTreeMap<String, i64> {
        let s = http_json(admin, "/v1/storage");
        s["leases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["job"].as_str().unwrap().to_string(),
                    l["holder"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let collector = wait_for("the collector's lease", Duration::from_secs(60), || {
        let h = holders(voter_admin);
        (h.len() == 17).then(|| h["Collection"])
    });
    assert!(collector == 2 || collector == 3, "holder {collector}");
    produce_rounds(&bootstrap, "moving", 8, 4, 400);
    // The holder dies; the survivor takes every lease and compacts what comes next.
    nodes.get_mut(&(collector as usize)).unwrap().kill();
    let survivor = 5 - collector;
    wait_for(
        "every lease with the survivor",
        Duration::from_secs(60),
        || {
            let h = holders(voter_admin);
            (h.len() == 17 && h.values().all(|holder| *holder == survivor)).then_some(())
        },
    );
    produce_rounds(&bootstrap, "moving", 8, 4, 400);
    let high = high_watermarks(voter_admin, "moving");
    wait_for(
        "compaction of every partition",
        Duration::from_secs(90),
        || all_compacted(voter_admin, "moving").then_some(()),
    );
    let got = consume(&bootstrap, "moving", &high);
    assert_eq!(
        got.values().map(Vec::len).sum::<usize>(),
        high.values().sum::<usize>()
    );
    for records in got.values() {
        let offsets: Vec<i64> = records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, (0..records.len() as i64).collect::<Vec<_>>());
    }
}
