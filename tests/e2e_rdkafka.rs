//! End to end with librdkafka (the rdkafka crate): 8 partitions, 100k records with keys,
//! headers and timestamps, every compression codec, idempotent producers, consumers via
//! assign(); every acknowledged record is read back exactly once, in order, and found by its
//! timestamp.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::time::Duration;
use support::kafka::{Seen, commit_offset, consume, flush, produce, producer};
use support::{Floe, temp_dir};

const PARTITIONS: i32 = 8;

#[test]
fn every_acked_record_is_read_back_once_in_order_for_every_codec() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &["--default-partitions", "8"]);
    let codecs = ["none", "gzip", "snappy", "lz4", "zstd"];
    let per_codec = 100_000 / codecs.len();
    for codec in codecs {
        let topic = format!("e2e-{codec}");
        let (p, acks) = producer(&floe.bootstrap(), codec);
        produce(&p, &topic, PARTITIONS, per_codec, codec);
        flush(&p);
        assert!(
            acks.errors.lock().unwrap().is_empty(),
            "{:?}",
            acks.errors.lock().unwrap()
        );
        let acked = acks.by_partition.lock().unwrap().clone();
        assert_eq!(acked.values().map(Vec::len).sum::<usize>(), per_codec);
        assert_eq!(acked.len(), PARTITIONS as usize);

        let expected: BTreeMap<i32, usize> = acked.iter().map(|(p, v)| (*p, v.len())).collect();
        let got = consume(&floe.bootstrap(), &topic, &expected);
        let mut first = acked.get(&0).cloned().unwrap_or_default();
        first.sort_by_key(|r| r.offset);
        offsets_for_times_find_each_record(&floe.bootstrap(), &topic, &first, codec);
        for (partition, mut records) in acked {
            records.sort_by_key(|r| r.offset);
            let offsets: Vec<i64> = records.iter().map(|r| r.offset).collect();
            let contiguous: Vec<i64> = (0..records.len() as i64).collect();
            assert_eq!(
                offsets, contiguous,
                "{codec} partition {partition}: offsets are not 0..n"
            );
            let read = got.get(&partition).cloned().unwrap_or_default();
            assert_eq!(
                read.len(),
                records.len(),
                "{codec} partition {partition}: record count"
            );
            for (a, r) in records.iter().zip(&read) {
                assert_eq!(a.offset, r.offset);
                assert_eq!(a.key, r.key);
                assert_eq!(a.value, r.value);
                assert_eq!(a.timestamp, r.timestamp);
                assert_eq!(r.headers.len(), 2, "duplicate header keys survive");
                assert_eq!(r.headers[1], ("seq".to_string(), b"dup-key".to_vec()));
            }
        }
    }
}

/// ListOffsets by timestamp answers the first record whose time reaches the target, also
/// inside a (compressed) batch, and -1 past the last record.
fn offsets_for_times_find_each_record(bootstrap: &str, topic: &str, records: &[Seen], codec: &str) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("consumer");
    let lookup = |timestamp: i64| {
        let mut list = TopicPartitionList::new();
        list.add_partition_offset(topic, 0, Offset::Offset(timestamp))
            .expect("add");
        let found = consumer
            .offsets_for_times(list, Duration::from_secs(10))
            .expect("offsets_for_times");
        found.elements()[0].offset()
    };
    // Records of partition 0 are 8 ms apart: a target just before a record finds that record,
    // wherever it lies in its batch.
    for at in [
        0,
        1,
        records.len() / 3,
        records.len() / 2,
        records.len() - 1,
    ] {
        let record = &records[at];
        let timestamp = record.timestamp.expect("timestamp");
        assert_eq!(
            lookup(timestamp - 3),
            Offset::Offset(record.offset),
            "{codec}: record {at}"
        );
        assert_eq!(lookup(timestamp), Offset::Offset(record.offset), "{codec}");
    }
    let last = records.last().and_then(|r| r.timestamp).expect("timestamp");
    assert_eq!(
        lookup(last + 1),
        Offset::End,
        "{codec}: no record that late"
    );
}

/// With several broker ids per agent (lanes), librdkafka sees one broker per id, each lane at
/// a port of its own, and opens a connection to each: a topic's partitions travel over
/// several connections, and every acknowledged record is still read back once, in order. A
/// group list, which librdkafka gathers from every broker, names each group once.
#[test]
fn lanes_spread_partitions_over_connections_and_lose_nothing() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &["--default-partitions", "8", "--broker-ids-per-agent", "4"],
    );
    let topic = "lanes";
    let (p, acks) = producer(&floe.bootstrap(), "none");
    produce(&p, topic, PARTITIONS, 20_000, "none");
    flush(&p);
    assert!(acks.errors.lock().unwrap().is_empty());

    let client: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", floe.bootstrap())
        .create()
        .expect("client");
    let metadata = client
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let mut ids: Vec<i32> = metadata.brokers().iter().map(|b| b.id()).collect();
    ids.sort();
    assert_eq!(ids, vec![0, 1_000_000, 2_000_000, 3_000_000]);
    let lane_0 = metadata
        .brokers()
        .iter()
        .find(|b| b.id() == 0)
        .expect("lane 0");
    assert_eq!(lane_0.port(), i32::from(floe.addr.port()));
    let ports: std::collections::BTreeSet<i32> =
        metadata.brokers().iter().map(|b| b.port()).collect();
    assert_eq!(ports.len(), 4, "a port per lane: {ports:?}");
    let leaders: std::collections::BTreeSet<i32> = metadata.topics()[0]
        .partitions()
        .iter()
        .map(|p| p.leader())
        .collect();
    assert_eq!(leaders.len(), 4, "8 partitions take the 4 lanes in turn");
    // The producer connected once per lane it produced through (and once to bootstrap).
    let (_, metrics) = support::http_get(floe.admin, "/metrics");
    let connections: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("floe_connections_total "))
        .and_then(|v| v.trim().parse().ok())
        .expect("floe_connections_total");
    assert!(connections >= 5.0, "{connections} connections");

    let acked = acks.by_partition.lock().unwrap().clone();
    let expected: BTreeMap<i32, usize> = acked.iter().map(|(p, v)| (*p, v.len())).collect();
    assert_eq!(expected.values().sum::<usize>(), 20_000);
    let got = consume(&floe.bootstrap(), topic, &expected);

    // A group with a committed offset, then the list librdkafka merges from all four lanes.
    commit_offset(&floe.bootstrap(), "lanes-group", topic, 0, 1);
    let groups = client
        .fetch_group_list(None, Duration::from_secs(10))
        .expect("group list");
    let named = groups
        .groups()
        .iter()
        .filter(|g| g.name() == "lanes-group")
        .count();
    assert_eq!(named, 1, "listed once, not once per lane");

    for (partition, mut records) in acked {
        records.sort_by_key(|r| r.offset);
        let offsets: Vec<i64> = records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, (0..records.len() as i64).collect::<Vec<_>>());
        let read = &got[&partition];
        assert_eq!(read.len(), records.len(), "partition {partition}");
        for (a, r) in records.iter().zip(read) {
            assert_eq!((a.offset, &a.value), (r.offset, &r.value));
        }
    }
}
