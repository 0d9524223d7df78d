//! PUTs of flush-sized objects (1.7 MB, what a 2 ms flush seals at ~800 MB/s of produce) into
//! the two durable local stores: a file per object (object_store's `LocalFileSystem` with
//! fsync: a staged file, its fsync, a rename and the directory's fsync) and the packs of the
//! embedded default (appended to one open file, one fdatasync shared by every PUT waiting).
//! One PUT at a time shows the latency of each; eight at once show what group commit shares.
//! The `_cpu` groups report the process's CPU time (all its threads, from the kernel's
//! per-thread counts) in place of wall time: what a broker pays per byte, which the disk's
//! bandwidth hides from the wall clock once PUTs overlap.
//!
//! Run: `cargo bench --bench object_stores`

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use floe::bench::agent_cpu;
use floe::clock::Clock;
use floe::pack::PackStore;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const OBJECT_BYTES: usize = 1_700_000;

fn payload() -> Bytes {
    Bytes::from(
        (0..OBJECT_BYTES)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
}

/// PUTs `at_once` objects under fresh keys and deletes them again, so the store's size (and
/// for packs the number of live records) stays flat however long criterion runs.
async fn put_batch(store: &Arc<dyn ObjectStore>, next: &AtomicU64, at_once: usize, data: &Bytes) {
    let keys: Vec<Path> = (0..at_once)
        .map(|_| {
            Path::from(format!(
                "v1/{:013}-bench.obj",
                next.fetch_add(1, Ordering::Relaxed)
            ))
        })
        .collect();
    let puts = keys
        .iter()
        .map(|key| store.put(key, PutPayload::from(data.clone())));
    for result in futures::future::join_all(puts).await {
        result.expect("put");
    }
    for key in &keys {
        store.delete(key).await.expect("delete");
    }
}

fn puts(c: &mut Criterion) {
    // Blocking threads (file-per-object PUTs run on them) live as long as the runtime, so no
    // thread's CPU time leaves the count by exiting.
    let rt = agent_cpu::agent_runtime().expect("runtime");
    let data = payload();
    let files_dir = tempfile::tempdir().expect("dir");
    let packs_dir = tempfile::tempdir().expect("dir");
    let files: Arc<dyn ObjectStore> = Arc::new(
        object_store::local::LocalFileSystem::new_with_prefix(files_dir.path())
            .expect("files")
            .with_fsync(true),
    );
    let packs: Arc<dyn ObjectStore> =
        Arc::new(PackStore::open(packs_dir.path().join("packs"), Clock::system()).expect("packs"));
    let next = AtomicU64::new(0);

    for at_once in [1usize, 8] {
        let mut group = c.benchmark_group(format!("put_1.7MB_x{at_once}"));
        group.throughput(Throughput::Bytes((OBJECT_BYTES * at_once) as u64));
        group.sample_size(30);
        for (name, store) in [("file_per_object", &files), ("packs", &packs)] {
            group.bench_function(name, |b| {
                b.iter(|| rt.block_on(put_batch(store, &next, at_once, &data)));
            });
        }
        group.finish();

        let mut group = c.benchmark_group(format!("put_1.7MB_x{at_once}_cpu"));
        group.throughput(Throughput::Bytes((OBJECT_BYTES * at_once) as u64));
        group.sample_size(30);
        for (name, store) in [("file_per_object", &files), ("packs", &packs)] {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let before = agent_cpu::thread_cpu_seconds("").expect("cpu time");
                    for _ in 0..iters {
                        rt.block_on(put_batch(store, &next, at_once, &data));
                    }
                    let after = agent_cpu::thread_cpu_seconds("").expect("cpu time");
                    Duration::from_secs_f64(after - before)
                });
            });
        }
        group.finish();
    }
}

criterion_group!(benches, puts);
criterion_main!(benches);
