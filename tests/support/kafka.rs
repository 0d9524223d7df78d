//! rdkafka (librdkafka, built from its vendored source) helpers for end-to-end tests.
#![allow(dead_code)]

use rdkafka::ClientConfig;
use rdkafka::ClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One record as acknowledged by the broker or read back from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub offset: i64,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    pub timestamp: Option<i64>,
    pub headers: Vec<(String, Vec<u8>)>,
}

#[derive(Default, Clone)]
pub struct Acks {
    pub by_partition: Arc<Mutex<BTreeMap<i32, Vec<Seen>>>>,
    pub errors: Arc<Mutex<Vec<String>>>,
    /// When each acknowledgement arrived, in arrival order.
    pub times: Arc<Mutex<Vec<Instant>>>,
}

impl ClientContext for Acks {}

impl ProducerContext for Acks {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        self.times.lock().expect("times").push(Instant::now());
        match result {
            Ok(m) => self
                .by_partition
                .lock()
                .expect("acks")
                .entry(m.partition())
                .or_default()
                .push(seen(m)),
            Err((e, _)) => self.errors.lock().expect("errors").push(e.to_string()),
        }
    }
}

fn seen<M: Message>(m: &M) -> Seen {
    Seen {
        offset: m.offset(),
        key: m.key().unwrap_or_default().to_vec(),
        value: m.payload().unwrap_or_default().to_vec(),
        timestamp: m.timestamp().to_millis(),
        headers: m
            .headers()
            .map(|h| {
                h.iter()
                    .map(|h| (h.key.to_string(), h.value.unwrap_or_default().to_vec()))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

pub fn producer(bootstrap: &str, compression: &str) -> (ThreadedProducer<Acks>, Acks) {
    let acks = Acks::default();
    let producer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("compression.type", compression)
        .set("linger.ms", "5")
        .set("message.timeout.ms", "30000")
        .create_with_context(acks.clone())
        .expect("producer");
    (producer, acks)
}

/// Produces `count` keyed records with headers and timestamps round-robin over partitions.
pub fn produce(
    producer: &ThreadedProducer<Acks>,
    topic: &str,
    partitions: i32,
    count: usize,
    tag: &str,
) {
    // Recent times, as a producer's clock gives them: records older than a topic's retention
    // (seven days by default) are deleted by the collector.
    let base_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
        - 60_000;
    for i in 0..count {
        let key = format!("key-{tag}-{i}");
        let value = format!("value-{tag}-{i}-").repeat(1 + i % 7);
        let headers = OwnedHeaders::new()
            .insert(Header {
                key: "seq",
                value: Some(&i.to_string()),
            })
            .insert(Header {
                key: "seq",
                value: Some("dup-key"),
            });
        let mut record = BaseRecord::to(topic)
            .key(&key)
            .payload(&value)
            .partition((i % partitions as usize) as i32)
            .timestamp(base_ms + i as i64)
            .headers(headers);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((e, r)) => {
                    // Queue full: let deliveries drain, then retry the same record.
                    assert!(format!("{e}").contains("Queue full"), "send failed: {e}");
                    record = r;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }
}

/// Background load: rounds of `per_round` records (round-robin over partitions, 20 ms apart)
/// until `stop` is set; then a flush of up to `flush_within`, whose result the thread returns.
pub fn load_until_stopped(
    producer: ThreadedProducer<Acks>,
    topic: &'static str,
    partitions: i32,
    per_round: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
    flush_within: Duration,
) -> std::thread::JoinHandle<rdkafka::error::KafkaResult<()>> {
    std::thread::spawn(move || {
        let mut round = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            produce(
                &producer,
                topic,
                partitions,
                per_round,
                &format!("r{round}"),
            );
            round += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        producer.flush(flush_within)
    })
}

pub fn flush(producer: &ThreadedProducer<Acks>) {
    producer.flush(Duration::from_secs(60)).expect("flush");
}

/// Commits `offset` of `partition` of `topic` for `group`, with no member: the group then
/// exists in the broker's state with only committed offsets.
pub fn commit_offset(bootstrap: &str, group: &str, topic: &str, partition: i32, offset: i64) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .create()
        .expect("consumer");
    let mut offsets = TopicPartitionList::new();
    offsets
        .add_partition_offset(topic, partition, Offset::Offset(offset))
        .expect("offset");
    consumer
        .commit(&offsets, rdkafka::consumer::CommitMode::Sync)
        .expect("commit");
}

/// Reads partitions from offset 0 until each has `expected[p]` records or the time runs out.
pub fn consume(
    bootstrap: &str,
    topic: &str,
    expected: &BTreeMap<i32, usize>,
) -> BTreeMap<i32, Vec<Seen>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("e2e-{topic}"))
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut assignment = TopicPartitionList::new();
    for &p in expected.keys() {
        assignment
            .add_partition_offset(topic, p, Offset::Beginning)
            .expect("assign");
    }
    consumer.assign(&assignment).expect("assign");
    let mut got: BTreeMap<i32, Vec<Seen>> = BTreeMap::new();
    // Every partition must reach its own count: a partition holding more than expected
    // (committed but unacknowledged records) must not end the read of another.
    let done = |got: &BTreeMap<i32, Vec<Seen>>| {
        expected
            .iter()
            .all(|(p, n)| got.get(p).map_or(0, Vec::len) >= *n)
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done(&got) && Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(500)) {
            Some(Ok(m)) => got.entry(m.partition()).or_default().push(seen(&m)),
            Some(Err(e)) => panic!("consume error: {e}"),
            None => {}
        }
    }
    got
}

/// Reads the topic back from offset 0 and checks it holds exactly the acknowledged records.
pub fn assert_read_back(bootstrap: &str, topic: &str, acked: &BTreeMap<i32, Vec<Seen>>) {
    let expected: BTreeMap<i32, usize> = acked.iter().map(|(p, v)| (*p, v.len())).collect();
    let got = consume(bootstrap, topic, &expected);
    for (partition, records) in acked {
        let mut records = records.clone();
        records.sort_by_key(|r| r.offset);
        let read = got.get(partition).cloned().unwrap_or_default();
        assert_eq!(
            read.len(),
            records.len(),
            "partition {partition}: record count"
        );
        for (a, r) in records.iter().zip(&read) {
            assert_eq!(
                (a.offset, &a.key, &a.value),
                (r.offset, &r.key, &r.value),
                "partition {partition}"
            );
        }
    }
}
