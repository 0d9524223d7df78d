//! The read tiers through real clients: the same records whatever the tiers hold, after
//! restarts over a damaged hot tier, and on a real S3 server no GET for data this agent wrote
//! and one GET per block however many consumers read it cold.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use support::kafka::{Seen, assert_read_back, flush, produce, producer};
use support::s3::S3Server;
use support::{Floe, metric, temp_dir, wait_for};

const PARTITIONS: i32 = 8;

fn produce_acked(floe: &Floe, topic: &str, count: usize) -> BTreeMap<i32, Vec<Seen>> {
    let (p, acks) = producer(&floe.bootstrap(), "none");
    produce(&p, topic, PARTITIONS, count, topic);
    flush(&p);
    let errors = acks.errors.lock().expect("errors").clone();
    assert!(errors.is_empty(), "{errors:?}");
    let acked = acks.by_partition.lock().expect("acks").clone();
    assert_eq!(acked.values().map(Vec::len).sum::<usize>(), count);
    acked
}

/// GETs the read path sent, for every reason.
fn read_path_gets(floe: &Floe) -> f64 {
    ["miss", "read_ahead"]
        .iter()
        .map(|r| {
            metric(
                floe.admin,
                &format!("floe_read_gets_total{{reason=\"{r}\"}}"),
            )
            .unwrap_or(0.0)
        })
        .sum()
}

/// Damages the hot tier's files: a flipped byte in every other one, every third cut short.
fn damage_hot_tier(dir: &Path) -> usize {
    let mut damaged = 0;
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("hot tier directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for (i, file) in files.iter().enumerate() {
        let mut raw = std::fs::read(file).expect("read");
        if i % 3 == 0 {
            raw.truncate(raw.len() / 2);
        } else if i % 2 == 0 {
            let at = raw.len() / 2;
            raw[at] ^= 0x10;
        } else {
            continue;
        }
        std::fs::write(file, raw).expect("write");
        damaged += 1;
    }
    damaged
}

#[test]
fn fetches_return_the_same_records_whatever_the_tiers_hold() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let hot = data.join("hot");
    let on = [
        "--default-partitions",
        "8",
        "--read-block-bytes",
        "65536",
        "--hot-tier-bytes-max",
        "67108864",
    ];
    let compact = ["--compaction-lag", "1s", "--compaction-interval", "1s"];
    let mut floe = Floe::start(&data, &[&on[..], &compact[..]].concat());
    let acked = produce_acked(&floe, "tiers", 20_000);
    // Read from this agent's uploads, then again once every partition is in segments (read in
    // blocks, through GETs that fill the hot tier).
    assert_read_back(&floe.bootstrap(), "tiers", &acked);
    wait_for("compaction into segments", Duration::from_secs(60), || {
        let segments = metric(floe.admin, "floe_compaction_segments_total")?;
        let entries = metric(floe.admin, "floe_index_entries")?;
        (segments >= PARTITIONS as f64 && entries <= 2.0 * PARTITIONS as f64).then_some(())
    });
    assert_read_back(&floe.bootstrap(), "tiers", &acked);
    floe.stop();
    assert!(
        std::fs::read_dir(&hot).expect("hot tier").count() > 0,
        "uploads fill the hot tier"
    );

    // Every tier off: every read goes to the store.
    let mut floe = Floe::start(
        &data,
        &["--block-cache-bytes-max", "0", "--hot-tier-bytes-max", "0"],
    );
    assert_read_back(&floe.bootstrap(), "tiers", &acked);
    floe.stop();

    // The hot tier damaged while the agent was down: the damaged files are found and read again.
    let damaged = damage_hot_tier(&hot);
    assert!(damaged > 0);
    let mut floe = Floe::start(
        &data,
        &[&on[..], &["--block-cache-bytes-max", "0"]].concat(),
    );
    assert_read_back(&floe.bootstrap(), "tiers", &acked);
    let corrupt = metric(floe.admin, "floe_read_disk_corrupt_total").expect("metric");
    let disk_hits = metric(
        floe.admin,
        "floe_read_tier_reads_total{tier=\"disk\",result=\"hit\"}",
    )
    .expect("metric");
    assert!(corrupt >= 1.0, "{corrupt} damaged files found");
    assert!(disk_hits >= 1.0, "sound files are served: {disk_hits}");
    floe.stop();

    // Another block size: the segments' block files on disk hold other ranges and must not
    // be served.
    let resized = [
        "--read-block-bytes",
        "16384",
        "--block-cache-bytes-max",
        "0",
        "--hot-tier-bytes-max",
        "67108864",
    ];
    let mut floe = Floe::start(&data, &resized);
    assert_read_back(&floe.bootstrap(), "tiers", &acked);
    let stale = metric(floe.admin, "floe_read_disk_corrupt_total").expect("metric");
    assert!(
        stale >= 1.0,
        "files of another block size are discarded: {stale}"
    );
    floe.stop();

    // Tiny tiers: constant eviction in memory and on disk.
    let tiny = [
        "--read-block-bytes",
        "4096",
        "--block-cache-bytes-max",
        "20000",
        "--hot-tier-bytes-max",
        "40000",
    ];
    let mut floe = Floe::start(&data, &tiny);
    assert_read_back(&floe.bootstrap(), "tiers", &acked);
    floe.stop();
}

#[test]
fn seaweedfs_reads_of_this_agents_uploads_make_no_get_and_cold_readers_share_one() {
    let dir = temp_dir();
    let server = S3Server::seaweedfs(&dir.path().join("seaweedfs"));
    let mut flags = server.floe_flags("floe-tiers");
    flags.extend(["--default-partitions".into(), PARTITIONS.to_string()]);
    let data = dir.path().join("data");
    let mut floe = Floe::start(&data, &flags);
    let acked = produce_acked(&floe, "tail", 10_000);
    assert_read_back(&floe.bootstrap(), "tail", &acked);
    assert_eq!(
        read_path_gets(&floe),
        0.0,
        "consumers of this agent's uploads read its tiers"
    );
    let objects = metric(floe.admin, "floe_objects_live").expect("metric");
    floe.stop();

    // Cold: a restart with nothing in memory and no disk tier; eight consumers at once.
    let mut cold = flags.clone();
    cold.extend(["--hot-tier-bytes-max".into(), "0".into()]);
    let mut floe = Floe::start(&data, &cold);
    let bootstrap = floe.bootstrap();
    let failed = std::thread::scope(|s| {
        let readers: Vec<_> = (0..8)
            .map(|_| s.spawn(|| assert_read_back(&bootstrap, "tail", &acked)))
            .collect();
        readers
            .into_iter()
            .map(|r| r.join())
            .filter(Result::is_err)
            .count()
    });
    assert_eq!(
        failed,
        0,
        "consumers failed; the agent's log:\n{}",
        floe.log()
    );
    let gets = read_path_gets(&floe);
    println!("8 cold consumers of {objects} objects: {gets} GETs");
    assert!(gets > 0.0);
    assert!(
        gets <= objects,
        "{gets} GETs for {objects} objects of under one block each"
    );
    floe.stop();
}
