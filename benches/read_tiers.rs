//! Fetch-sized reads (1 MiB) through the read tiers, next to a plain read of the same bytes
//! from a file on the same disk: the hot tier served from memory (the default: a disk hit is
//! promoted), from disk alone (no memory tier: every read loads and checks its whole block),
//! and the plain file read as the baseline.
//!
//! Run: `cargo bench --bench read_tiers`

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use floe::clock::Clock;
use floe::ids::ObjectKey;
use floe::random::Rng;
use floe::read_cache::metrics::TierMetrics;
use floe::read_cache::{ReadCache, TierSettings};
use floe::store::ObjectClient;
use floe::store::client::Chaos;
use floe::store::retry::RetryPolicy;
use object_store::memory::InMemory;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

const OBJECT_BYTES: u64 = 64 << 20;
const READ_BYTES: u64 = 1 << 20;
/// A segment: read in 4 MiB blocks.
const KEY: &str = "v1/0000000000001-bench.seg";

fn object() -> Bytes {
    Bytes::from(
        (0..OBJECT_BYTES)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
}

fn settings(dir: &std::path::Path, memory: u64) -> TierSettings {
    TierSettings {
        block_bytes: 4 << 20,
        memory_bytes_max: memory,
        disk: Some((dir.to_path_buf(), 1 << 30)),
        read_ahead: false,
    }
}

/// ReadCache over a segment whose every block is in the disk tier (filled one GET at a time, as
/// a reader would, then taken back by a fresh start).
fn read_cache(rt: &tokio::runtime::Runtime, dir: &std::path::Path, memory: u64) -> ReadCache {
    let store = Arc::new(ObjectClient::new(
        Arc::new(InMemory::new()),
        "memory://".into(),
        RetryPolicy::default(),
        Chaos::new(None, None, 0),
        Clock::system(),
        Rng::seeded(0),
    ));
    let key = ObjectKey::new(KEY);
    rt.block_on(async {
        store.put(key.as_str(), object()).await.expect("put");
        let filler = ReadCache::open(store.clone(), &settings(dir, 0)).expect("tiers");
        let blocks = OBJECT_BYTES / (4 << 20);
        for b in 0..blocks {
            filler.read(&key, b * (4 << 20), 1).await.expect("read");
            while TierMetrics::load(&filler.metrics().disk.fills) <= b {
                tokio::task::yield_now().await;
            }
        }
    });
    ReadCache::open(store, &settings(dir, memory)).expect("tiers")
}

fn reads(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("read_1MiB");
    group.throughput(Throughput::Bytes(READ_BYTES));
    let key = ObjectKey::new(KEY);
    let offsets = OBJECT_BYTES / READ_BYTES;

    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("plain");
    std::fs::write(&file, object()).expect("write");
    let plain = std::fs::File::open(&file).expect("open");
    let mut buf = vec![0u8; READ_BYTES as usize];
    let mut i = 0u64;
    group.bench_function("plain_file", |b| {
        b.iter(|| {
            i = (i + 1) % offsets;
            plain.read_exact_at(&mut buf, i * READ_BYTES).expect("read");
            buf[0]
        })
    });

    for (name, memory) in [("hot_tier_memory", 256u64 << 20), ("hot_tier_disk_only", 0)] {
        let dir = tempfile::tempdir().expect("dir");
        let read_cache = read_cache(&rt, dir.path(), memory);
        let mut i = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % offsets;
                rt.block_on(read_cache.read(&key, i * READ_BYTES, READ_BYTES))
                    .expect("read")
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = reads
}
criterion_main!(benches);
