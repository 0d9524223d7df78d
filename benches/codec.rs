//! Codec hot paths, reported as throughput: ProduceRequest decode, FetchResponse encode (copied
//! into one buffer, and as the frame the connection sends, records spliced), and record batch
//! header iteration with CRC-32C checks, and a produced object's encoding (a copy and a
//! CRC-32C pass per byte).
//!
//! Run: `cargo bench --bench codec`

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use floe::ids::TopicPartition;
use floe::object::format::encode_object;
use floe::protocol::ApiKey;
use floe::protocol::Message;
use floe::protocol::frame::{encode_response, parse_request};
use floe::protocol::messages::{
    FetchResponse, ProduceRequest, RequestBody, fetch_response, produce_request,
};
use floe::protocol::record_batch::{Batches, build_test_batch};
use std::hint::black_box;

/// 8 partitions × 16 batches of 100 records × 100 B: about 1.3 MiB, like a busy producer's request.
fn records_blob() -> Bytes {
    let batch = build_test_batch(7, 0, 0, 100, 100);
    let mut blob = BytesMut::new();
    for _ in 0..16 {
        blob.extend_from_slice(&batch);
    }
    blob.freeze()
}

fn produce_request(version: i16) -> Bytes {
    let records = records_blob();
    let request = ProduceRequest {
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![produce_request::TopicProduceData {
            name: "bench".into(),
            partition_data: (0..8)
                .map(|index| produce_request::PartitionProduceData {
                    index,
                    records: Some(records.clone().into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut buf = BytesMut::new();
    request.encode(&mut buf, version).expect("encode");
    buf.freeze()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("codec");

    let body = produce_request(9);
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("produce_request_decode_v9", |b| {
        b.iter(|| ProduceRequest::decode(&mut black_box(body.clone()), 9).expect("decode"))
    });

    let golden = Bytes::from(
        std::fs::read("tests/golden/confluent_kafka_produce_v10_request.bin").expect("golden"),
    );
    group.throughput(Throughput::Bytes(golden.len() as u64));
    group.bench_function("captured_produce_request_parse_and_decode", |b| {
        b.iter(|| {
            let frame = parse_request(black_box(golden.clone())).expect("parse");
            match frame.decode_body().expect("decode") {
                RequestBody::Produce(p) => p,
                _ => unreachable!("a produce frame"),
            }
        })
    });

    let records = records_blob();
    let response = FetchResponse {
        responses: vec![fetch_response::FetchableTopicResponse {
            topic: "bench".into(),
            partitions: (0..8)
                .map(|partition_index| fetch_response::PartitionData {
                    partition_index,
                    high_watermark: 1_000_000,
                    last_stable_offset: 1_000_000,
                    records: Some(records.clone().into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    group.throughput(Throughput::Bytes(8 * records.len() as u64));
    group.bench_function("fetch_response_encode_v12", |b| {
        let mut buf = BytesMut::with_capacity(16 << 20);
        b.iter(|| {
            buf.clear();
            black_box(&response).encode(&mut buf, 12).expect("encode");
        })
    });

    // The frame the connection sends: the records are spliced in, not copied (compare with
    // the plain encode above, which copies them as every frame did before).
    group.bench_function("fetch_response_frame_v12", |b| {
        b.iter(|| {
            encode_response(ApiKey::Fetch, 12, 7, |buf| {
                black_box(&response).encode(buf, 12)
            })
            .expect("encode")
        })
    });

    group.throughput(Throughput::Bytes(records.len() as u64));
    group.bench_function("batch_iteration_with_crc", |b| {
        b.iter(|| {
            for batch in Batches::new(black_box(records.clone())) {
                batch.expect("whole").validate().expect("crc");
            }
        })
    });

    // What a 2 ms flush seals at about 500 MB/s: four partitions' 256 KiB batches.
    let batch = build_test_batch(7, 0, 0, 256, 1000);
    let chunks: Vec<_> = (0..4)
        .map(|partition| {
            let tp = TopicPartition {
                topic_id: uuid::Uuid::from_u128(1),
                partition,
            };
            (tp, vec![batch.clone(); 4])
        })
        .collect();
    group.throughput(Throughput::Bytes(16 * batch.len() as u64));
    group.bench_function("encode_object_4_partitions", |b| {
        b.iter(|| encode_object(1, black_box(&chunks)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
