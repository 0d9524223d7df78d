//! The reader against a real (in-memory) object store: objects written by the produce path's
//! encoder are read back with committed offsets patched in.

use super::read_batches;
use crate::fetch::reader::Run;
use crate::ids::{Offset, TopicPartition};
use crate::object::format::encode_object;
use crate::protocol::record_batch::{Batches, build_test_batch};
use crate::read_cache::{ReadCache, TierSettings};
use crate::store::ObjectClient;
use crate::store::client::Chaos;
use crate::store::retry::RetryPolicy;
use object_store::memory::InMemory;
use std::sync::Arc;

fn tp() -> TopicPartition {
    TopicPartition {
        topic_id: uuid::Uuid::from_u128(1),
        partition: 0,
    }
}

/// Read tiers over `store` holding `memory` bytes, without a disk tier.
fn read_cache(store: &Arc<ObjectClient>, memory: u64) -> ReadCache {
    let settings = TierSettings {
        block_bytes: 4096,
        memory_bytes_max: memory,
        disk: None,
        read_ahead: false,
    };
    ReadCache::open(store.clone(), &settings).unwrap()
}

async fn store_with_run() -> (Arc<ObjectClient>, Run, Vec<usize>) {
    let store = ObjectClient::new(
        Arc::new(InMemory::new()),
        "memory://".into(),
        RetryPolicy::default(),
        Chaos::new(None, None, 0),
        crate::clock::Clock::system(),
        crate::random::Rng::seeded(0),
    );
    let batches = vec![
        build_test_batch(-1, -1, -1, 3, 10),
        build_test_batch(-1, -1, -1, 2, 10),
        build_test_batch(-1, -1, -1, 4, 10),
    ];
    let store = Arc::new(store);
    let sizes = batches.iter().map(|b| b.len()).collect();
    let (object, layout) = encode_object(1, &[(tp(), batches)]);
    store.put("o1", object).await.unwrap();
    let first = layout[0].batches[0];
    let last = layout[0].batches[2];
    let run = Run {
        base_offset: Offset(100),
        end_offset: Offset(109),
        object_key: crate::ids::ObjectKey::new("o1"),
        byte_start: first.0,
        byte_len: last.0 + last.1 - first.0,
        max_timestamp: 0,
        marker: None,
    };
    (store, run, sizes)
}

/// No stable offset below the data: a read_uncommitted read.
const OPEN: Offset = Offset(i64::MAX);

#[tokio::test]
async fn patches_committed_offsets_and_skips_batches_below_the_fetch_offset() {
    let (store, run, _) = store_with_run().await;
    let all = read_batches(
        &read_cache(&store, 0),
        std::slice::from_ref(&run),
        Offset(100),
        OPEN,
        1 << 20,
        7,
    )
    .await
    .unwrap()
    .bytes
    .to_bytes();
    let bases: Vec<(i64, i32)> = Batches::new(all)
        .map(|b| {
            let b = b.unwrap();
            b.validate().unwrap();
            (b.base_offset(), b.partition_leader_epoch())
        })
        .collect();
    assert_eq!(bases, vec![(100, 7), (103, 7), (105, 7)]);

    let tail = read_batches(
        &read_cache(&store, 0),
        &[run],
        Offset(104),
        OPEN,
        1 << 20,
        7,
    )
    .await
    .unwrap()
    .bytes
    .to_bytes();
    let bases: Vec<i64> = Batches::new(tail)
        .map(|b| b.unwrap().base_offset())
        .collect();
    assert_eq!(
        bases,
        vec![103, 105],
        "the batch holding offset 104 starts at 103"
    );
}

#[tokio::test]
async fn stops_at_the_byte_budget_but_returns_at_least_one_batch() {
    let (store, run, sizes) = store_with_run().await;
    let one = read_batches(
        &read_cache(&store, 0),
        std::slice::from_ref(&run),
        Offset(100),
        OPEN,
        1,
        0,
    )
    .await
    .unwrap()
    .bytes
    .to_bytes();
    assert_eq!(one.len(), sizes[0]);
    let two = read_batches(
        &read_cache(&store, 0),
        &[run],
        Offset(100),
        OPEN,
        sizes[0] + sizes[1],
        0,
    )
    .await
    .unwrap()
    .bytes
    .to_bytes();
    assert_eq!(two.len(), sizes[0] + sizes[1]);
}

#[tokio::test]
async fn uploaded_objects_are_read_without_the_store() {
    let (store, run, sizes) = store_with_run().await;
    let cached = read_cache(&store, 1 << 20);
    // Admit the object as an upload would, then remove it from the store.
    let object = store
        .get_range("o1", 0..run.byte_start + run.byte_len)
        .await
        .unwrap();
    cached.admit_upload(&run.object_key, &object).await;
    store.delete("o1").await.unwrap();
    let all = read_batches(&cached, &[run], Offset(100), OPEN, 1 << 20, 0)
        .await
        .unwrap()
        .bytes
        .to_bytes();
    assert_eq!(all.len(), sizes.iter().sum::<usize>());
}

#[tokio::test]
async fn a_read_committed_read_stops_before_the_stable_offset() {
    let (store, run, sizes) = store_with_run().await;
    // Batches at 100 (3 offsets), 103 (2) and 105: a stable offset of 105 keeps two.
    let read = read_batches(
        &read_cache(&store, 0),
        &[run],
        Offset(100),
        Offset(105),
        1 << 20,
        0,
    )
    .await
    .unwrap();
    assert_eq!(read.bytes.len(), sizes[0] + sizes[1]);
    assert_eq!(read.end_offset, Offset(105));
}

#[tokio::test]
async fn a_marker_run_reads_as_its_control_batch() {
    let (store, _, _) = store_with_run().await;
    let marker = crate::metadata::state::markers::Marker {
        producer_id: crate::ids::ProducerId(9),
        producer_epoch: crate::ids::ProducerEpoch(2),
        commit: false,
    };
    let run = Run {
        base_offset: Offset(40),
        end_offset: Offset(41),
        object_key: crate::ids::ObjectKey::new("(transaction marker)"),
        byte_start: 0,
        byte_len: 0,
        max_timestamp: 77,
        marker: Some(marker),
    };
    let read = read_batches(&read_cache(&store, 0), &[run], Offset(40), OPEN, 1 << 20, 3)
        .await
        .unwrap();
    let batch = crate::protocol::record_batch::RecordBatch::new(read.bytes.to_bytes()).unwrap();
    batch.validate().unwrap();
    assert!(batch.is_control());
    assert_eq!(
        (batch.base_offset(), batch.partition_leader_epoch()),
        (40, 3)
    );
    assert_eq!(
        crate::protocol::record_batch::control_commit(&batch),
        Some(false)
    );
    assert_eq!(read.end_offset, Offset(41));
}

/// A compacted segment: batches at 100..103 and 107..109 (the cleaner dropped 103..107). Each
/// batch is served at the offset its header carries, not where the one before it ended.
#[tokio::test]
async fn a_segment_with_gaps_serves_each_batch_at_its_own_offset() {
    let store = Arc::new(ObjectClient::new(
        Arc::new(InMemory::new()),
        "memory://".into(),
        RetryPolicy::default(),
        Chaos::new(None, None, 0),
        crate::clock::Clock::system(),
        crate::random::Rng::seeded(0),
    ));
    let mut builder = crate::object::segment::SegmentBuilder::new(tp(), 1 << 20, 1 << 16);
    builder.push(
        &build_test_batch(-1, -1, -1, 3, 10),
        Offset(100),
        Offset(103),
        0,
    );
    builder.push(
        &build_test_batch(-1, -1, -1, 2, 10),
        Offset(107),
        Offset(109),
        0,
    );
    let built = builder.finish();
    let key = "v1/0000000000001-gaps.seg";
    store.put(key, built.bytes.clone()).await.unwrap();
    let run = Run {
        base_offset: Offset(100),
        end_offset: Offset(109),
        object_key: crate::ids::ObjectKey::new(key),
        byte_start: 0,
        byte_len: built.data_len,
        max_timestamp: 0,
        marker: None,
    };
    let cache = read_cache(&store, 0);
    let bases = |read: &super::ReadBatches| -> Vec<i64> {
        Batches::new(read.bytes.to_bytes())
            .map(|b| b.unwrap().base_offset())
            .collect()
    };
    let all = read_batches(
        &cache,
        std::slice::from_ref(&run),
        Offset(100),
        OPEN,
        1 << 20,
        7,
    )
    .await
    .unwrap();
    assert_eq!(bases(&all), [100, 107]);
    assert_eq!(all.end_offset, Offset(109));
    // A fetch inside the gap gets the batch after it.
    let after_gap = read_batches(
        &cache,
        std::slice::from_ref(&run),
        Offset(104),
        OPEN,
        1 << 20,
        7,
    )
    .await
    .unwrap();
    assert_eq!(bases(&after_gap), [107]);
}
