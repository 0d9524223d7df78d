//! The tiers against a real (in-memory) object store: every read through them is the same
//! bytes as the object, whatever the tiers hold; misses share GETs; the disk tier survives a
//! restart and discards damaged files.

use super::*;
use crate::store::chaos::{FaultPlan, LatencyModel, Operation};
use crate::store::client::Chaos;
use crate::store::retry::RetryPolicy;
use object_store::memory::InMemory;
use proptest::prelude::*;

fn client(chaos: Chaos) -> Arc<ObjectClient> {
    Arc::new(ObjectClient::new(
        Arc::new(InMemory::new()),
        "memory://".into(),
        RetryPolicy::default(),
        chaos,
        crate::clock::Clock::system(),
        crate::random::Rng::seeded(0),
    ))
}

fn object(seed: u64, size: usize) -> Bytes {
    Bytes::from(
        (0..size)
            .map(|i| (i as u64).wrapping_mul(31).wrapping_add(seed) as u8)
            .collect::<Vec<_>>(),
    )
}

/// Even objects are produce objects (read whole), odd ones segments (read in blocks).
fn key(i: usize) -> ObjectKey {
    let kind = if i.is_multiple_of(2) { "floe" } else { "seg" };
    ObjectKey::new(format!("v1/{i:013}-o.{kind}"))
}

fn gets(store: &ObjectClient) -> u64 {
    store.metrics().operation(Operation::Get).requests
}

fn settings(block: u64, memory: u64, disk: Option<(&std::path::Path, u64)>) -> TierSettings {
    TierSettings {
        block_bytes: block,
        memory_bytes_max: memory,
        disk: disk.map(|(dir, bytes)| (dir.to_path_buf(), bytes)),
        read_ahead: true,
    }
}

/// Waits for background work (read-ahead, disk writes) to show; fails after ten seconds.
async fn eventually(done: impl Fn() -> bool) {
    let clock = crate::clock::Clock::system();
    for _ in 0..1_000 {
        if done() {
            return;
        }
        clock.sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("background work did not finish");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Cached reads equal uncached reads: tiers large, off, tiny (evicting all the time), with
    /// and without disk, some objects written through the upload path, with short GETs the
    /// client must retry.
    #[test]
    fn reads_through_any_tiers_are_the_objects_bytes(
        sizes in proptest::collection::vec(1usize..20_000, 1..5),
        reads in proptest::collection::vec((0usize..5, 0u64..20_000, 0u64..9_000), 1..40),
        block in 1u64..5_000,
        memory in prop_oneof![Just(0u64), Just(3_000u64), Just(1u64 << 30)],
        disk_bytes in prop_oneof![Just(0u64), Just(4_000u64), Just(1u64 << 30)],
        uploaded in any::<bool>(),
    ) {
        runtime().block_on(async {
            let faults = FaultPlan::parse("rate=0.2,kinds=short-get").unwrap();
            let store = client(Chaos::new(None, faults, 7));
            let dir = tempfile::tempdir().unwrap();
            let disk = (disk_bytes > 0).then_some((dir.path(), disk_bytes));
            let read_cache = ReadCache::open(store.clone(), &settings(block, memory, disk)).unwrap();
            let objects: Vec<Bytes> = sizes.iter().enumerate().map(|(i, &s)| object(i as u64, s)).collect();
            for (i, o) in objects.iter().enumerate() {
                store.put(key(i).as_str(), o.clone()).await.unwrap();
                if uploaded {
                    read_cache.admit_upload(&key(i), o).await;
                }
            }
            for (which, start, len) in reads {
                let i = which % objects.len();
                let size = objects[i].len() as u64;
                let start = start % size;
                let len = len.min(size - start);
                let got = read_cache.read(&key(i), start, len).await.unwrap();
                prop_assert_eq!(&got[..], &objects[i][start as usize..(start + len) as usize]);
            }
            // A read past the end is an error, not a short answer.
            let size = objects[0].len() as u64;
            prop_assert!(read_cache.read(&key(0), size - 1, 2).await.is_err());
            Ok(())
        })?;
    }
}

/// Many readers of one cold block, at once, with the store taking its time: one GET. (A
/// produce object is one block, read whole.)
#[tokio::test(start_paused = true)]
async fn concurrent_misses_of_a_block_share_one_get() {
    let latency = LatencyModel::parse("s3-standard").unwrap();
    let store = client(Chaos::new(latency, None, 1));
    store.put("o", object(1, 10_000)).await.unwrap();
    let read_cache = ReadCache::open(store.clone(), &settings(4_096, 1 << 20, None)).unwrap();
    let before = gets(&store);
    let k = ObjectKey::new("o");
    let reads = (0..16).map(|i| read_cache.read(&k, i * 100, 100));
    for got in futures::future::join_all(reads).await {
        assert_eq!(got.unwrap().len(), 100);
    }
    assert_eq!(gets(&store) - before, 1, "one GET for sixteen readers");
    assert_eq!(TierMetrics::load(&read_cache.metrics().coalesced), 15);
}

/// A read in the second half of a block fetches the next ahead; the reader then finds it.
#[tokio::test]
async fn sequential_readers_find_the_next_block_fetched() {
    let store = client(Chaos::new(None, None, 1));
    store.put("v1/o.seg", object(2, 10_000)).await.unwrap();
    let read_cache = ReadCache::open(store.clone(), &settings(4_000, 1 << 20, None)).unwrap();
    let k = ObjectKey::new("v1/o.seg");
    read_cache.read(&k, 0, 3_000).await.unwrap();
    eventually(|| read_cache.metrics().gets(GetReason::ReadAhead).0 == 1).await;
    let before = gets(&store);
    read_cache.read(&k, 3_000, 2_000).await.unwrap();
    assert_eq!(gets(&store), before, "block 1 was already read ahead");
}

/// Uploaded blocks land on disk; another process start over the same directory reads them
/// with no GET, and a damaged file is discarded and read again.
#[tokio::test]
async fn the_disk_tier_survives_a_restart_and_discards_damaged_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = client(Chaos::new(None, None, 1));
    let o = object(3, 10_000);
    store.put("v1/o.seg", o.clone()).await.unwrap();
    {
        let read_cache = ReadCache::open(
            store.clone(),
            &settings(4_000, 1 << 20, Some((dir.path(), 1 << 20))),
        )
        .unwrap();
        read_cache
            .admit_upload(&ObjectKey::new("v1/o.seg"), &o)
            .await;
        let tiers2 = read_cache.clone();
        eventually(move || tiers2.metrics().disk.fills.load(Ordering::Relaxed) == 3).await;
    }
    // A file left half-written by a crash, and a stray temporary one.
    std::fs::write(dir.path().join("v1%2Fo%2Eseg.9.blk.tmp4"), b"partial").unwrap();
    let restarted = ReadCache::open(
        store.clone(),
        &settings(4_000, 0, Some((dir.path(), 1 << 20))),
    )
    .unwrap();
    assert!(!dir.path().join("v1%2Fo%2Eseg.9.blk.tmp4").exists());
    let before = gets(&store);
    let k = ObjectKey::new("v1/o.seg");
    assert_eq!(restarted.read(&k, 0, 10_000).await.unwrap(), o);
    assert_eq!(gets(&store), before, "all three blocks came from disk");

    // Damage block 1 on disk: its read goes to the store and is still right.
    let file = dir.path().join("v1%2Fo%2Eseg.1.blk");
    let mut raw = std::fs::read(&file).unwrap();
    raw[100] ^= 1;
    std::fs::write(&file, raw).unwrap();
    let fresh = ReadCache::open(
        store.clone(),
        &settings(4_000, 0, Some((dir.path(), 1 << 20))),
    )
    .unwrap();
    assert_eq!(
        fresh.read(&k, 4_100, 100).await.unwrap(),
        o.slice(4_100..4_200)
    );
    assert_eq!(gets(&store), before + 1);
    assert_eq!(TierMetrics::load(&fresh.metrics().disk_corrupt), 1);

    // A start with another block size: the files hold other ranges, so they are discarded.
    let resized = ReadCache::open(
        store.clone(),
        &settings(3_000, 0, Some((dir.path(), 1 << 20))),
    )
    .unwrap();
    assert_eq!(resized.read(&k, 0, 10_000).await.unwrap(), o);
    assert!(TierMetrics::load(&resized.metrics().disk_corrupt) >= 1);
}

/// A disk tier smaller than the data keeps within its bytes: evicted files are deleted.
#[tokio::test]
async fn the_disk_tier_stays_within_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = client(Chaos::new(None, None, 1));
    let read_cache = ReadCache::open(
        store.clone(),
        // Files are charged at least 64 KiB: room for five.
        &settings(1_000, 0, Some((dir.path(), 5 << 16))),
    )
    .unwrap();
    for i in 0..10 {
        let o = object(i as u64, 1_000);
        store.put(key(i).as_str(), o.clone()).await.unwrap();
        assert_eq!(read_cache.read(&key(i), 0, 1_000).await.unwrap(), o);
    }
    let t = read_cache.clone();
    eventually(move || {
        let m = t.metrics();
        TierMetrics::load(&m.disk.fills) + TierMetrics::load(&m.disk_skipped) == 10
    })
    .await;
    let ((_, _), disk) = read_cache.usage();
    let (files, bytes) = disk.unwrap();
    assert!(bytes <= 5 << 16, "{bytes} bytes in {files} files");
    assert!((1..=5).contains(&files), "{files} files");
    let on_disk = std::fs::read_dir(dir.path()).unwrap().count() as u64;
    assert_eq!(on_disk, files, "evicted files are deleted");
}
