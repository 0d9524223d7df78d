//! The metadata state machine: object commits applied per second, index entries per second,
//! snapshot size per million batches, and what building a snapshot costs: the copy taken under
//! the lock and the encoding done outside it.
//!
//! Run: `cargo bench --bench metadata`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use floe::ids::{ObjectKey, ProducerEpoch, ProducerId, TopicPartition};
use floe::metadata::MetadataState;
use floe::metadata::state::{
    Command, CommitObject, CommittedBatch, CreateTopic, InitProducerId, PartitionBatches,
};
use std::collections::BTreeMap;
use uuid::Uuid;

const PARTITIONS: i32 = 16;
const BATCHES_PER_PARTITION: usize = 4;

fn state_with_topic() -> (MetadataState, Uuid) {
    let mut state = MetadataState::default();
    let id = Uuid::from_u128(1);
    state.apply(CreateTopic {
        name: "bench".into(),
        id,
        partitions: PARTITIONS,
        configs: BTreeMap::new(),
    });
    (state, id)
}

/// An object with `BATCHES_PER_PARTITION` consecutive batches for each partition, written by
/// one idempotent producer per partition.
fn commit(id: Uuid, n: u64, producer: ProducerId) -> Command {
    let mut at = 16;
    let partitions = (0..PARTITIONS)
        .map(|p| PartitionBatches {
            partition: TopicPartition {
                topic_id: id,
                partition: p,
            },
            batches: (0..BATCHES_PER_PARTITION)
                .map(|b| {
                    let batch = CommittedBatch {
                        byte_start: at,
                        byte_len: 1000,
                        offset_count: 10,
                        max_timestamp: n as i64,
                        producer_id: producer,
                        producer_epoch: ProducerEpoch(0),
                        base_sequence: ((n as usize * BATCHES_PER_PARTITION + b) * 10) as i32,
                        last_sequence: ((n as usize * BATCHES_PER_PARTITION + b) * 10 + 9) as i32,
                    };
                    at += 1000;
                    batch
                })
                .collect(),
        })
        .collect();
    CommitObject {
        object_key: ObjectKey::new(format!("v1/{n:013}-00000000-0000-4000-8000-{n:012}.floe")),
        partitions,
    }
    .into()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("metadata");
    let batches = (PARTITIONS as usize * BATCHES_PER_PARTITION) as u64;
    group.throughput(Throughput::Elements(batches));
    group.bench_function("commit_object_16_partitions_64_batches", |b| {
        let (mut state, id) = state_with_topic();
        let producer = match state.run(InitProducerId { existing: None }) {
            Ok((p, _)) => p,
            other => panic!("{other:?}"),
        };
        let mut n = 0;
        b.iter(|| {
            let outcome = state.apply(commit(id, n, producer));
            n += 1;
            outcome
        })
    });
    group.finish();

    // Snapshot size per million batches (printed; not a timing).
    let (mut state, id) = state_with_topic();
    let commits = 1_000_000 / batches;
    for n in 0..commits {
        state.apply(commit(id, n, ProducerId(-1)));
    }
    let snapshot = postcard::to_stdvec(&state).expect("snapshot");
    let entries: usize = state
        .topic("bench")
        .map_or(0, |t| t.partitions.iter().map(|p| p.index.len()).sum());
    println!(
        "snapshot: {} batches in {} index entries → {:.1} MiB ({:.0} bytes per batch)",
        commits * batches,
        entries,
        snapshot.len() as f64 / (1 << 20) as f64,
        snapshot.len() as f64 / (commits * batches) as f64
    );

    // What a snapshot holds the lock for (the copy: the state's collections are persistent,
    // so it shares them) against what it does outside it (the encoding).
    let mut group = c.benchmark_group("snapshot_of_1m_batches");
    group.sample_size(10);
    group.bench_function("copy", |b| b.iter(|| state.clone()));
    group.bench_function("encode", |b| {
        b.iter(|| postcard::to_stdvec(&state).expect("snapshot"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
