//! A workload of real librdkafka clients that records what they did and saw into one
//! `floe_history::History`, for `floe_history::check` to judge: an idempotent producer of
//! unique values, consumer group members committing their positions, a high-watermark
//! observer, and a last reader of every partition.
#![allow(dead_code)]

use floe_history::{Event, History, TopicPartition};
use rdkafka::ClientConfig;
use rdkafka::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Every event of the run, with the milliseconds since the run started.
pub struct Recorder {
    pub started: Instant,
    history: Mutex<History>,
    /// The topic the workload writes and reads, and its partition count.
    topic: String,
    partitions: i32,
}

impl Recorder {
    pub fn new(topic: &str, partitions: i32) -> Arc<Recorder> {
        Arc::new(Recorder {
            started: Instant::now(),
            history: Mutex::new(History::new()),
            topic: topic.to_string(),
            partitions,
        })
    }

    pub fn now_ms(&self) -> i64 {
        self.started.elapsed().as_millis() as i64
    }

    pub fn push(&self, event: Event) {
        self.history.lock().expect("history").push(event);
    }

    pub fn history(&self) -> History {
        self.history.lock().expect("history").clone()
    }

    fn partition(&self, p: i32) -> TopicPartition {
        TopicPartition::new(self.topic.as_str(), p)
    }
}

/// The value a record carries: its payload, the decimal number the producer sent.
fn value_of<M: Message>(m: &M) -> u64 {
    m.payload()
        .and_then(|p| std::str::from_utf8(p).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a record this test did not write at offset {}", m.offset()))
}

/// Records each acknowledgement and each send the client gave up on.
struct Producing(Arc<Recorder>);

impl ClientContext for Producing {}

impl ProducerContext for Producing {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        let at_ms = self.0.now_ms();
        self.0.push(match result {
            // Delivered without an offset (librdkafka's answer to a duplicate sequence
            // number): nothing to check it against.
            Ok(m) if m.offset() < 0 => return,
            Ok(m) => Event::Ack {
                at_ms,
                producer: 1,
                partition: self.0.partition(m.partition()),
                value: value_of(m),
                offset: m.offset(),
            },
            Err((e, m)) => Event::SendFailed {
                at_ms,
                producer: 1,
                partition: self.0.partition(m.partition()),
                value: value_of(m),
                error: e.to_string(),
            },
        });
    }
}

/// Sends distinct values round robin over the partitions until `stop`, then flushes.
pub fn produce_until(
    recorder: Arc<Recorder>,
    bootstrap: &str,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    let producer: ThreadedProducer<Producing> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        // A paused agent holds its connections silent: give up on them before the pause ends
        // only if it is much longer than the schedule's.
        .set("socket.timeout.ms", "10000")
        .set("message.timeout.ms", "60000")
        .create_with_context(Producing(recorder.clone()))
        .expect("producer");
    std::thread::spawn(move || {
        let mut value: u64 = 0;
        let partitions = recorder.partitions as u64;
        while !stop.load(Ordering::Relaxed) {
            for _ in 0..20 {
                value += 1;
                let p = (value % partitions) as i32;
                let payload = value.to_string();
                recorder.push(Event::Send {
                    at_ms: recorder.now_ms(),
                    producer: 1,
                    partition: recorder.partition(p),
                    value,
                });
                let mut record = BaseRecord::<str, str>::to(&recorder.topic)
                    .payload(payload.as_str())
                    .partition(p);
                while let Err((e, r)) = producer.send(record) {
                    assert!(format!("{e}").contains("Queue full"), "send failed: {e}");
                    record = r;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = producer.flush(Duration::from_secs(90));
    })
}

/// A consumer group member of the workload.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its number in the history (distinct from every other consumer's).
    pub consumer: u32,
    pub group: String,
    /// `auto.offset.reset`: where it starts without a committed offset, and where a client
    /// told its position is out of range goes (`earliest` reads again, `latest` skips).
    pub reset: &'static str,
    /// It commits its position after reading this many records.
    pub commit_every: usize,
}

/// Starts a new reading session (in the history's sense) at every rebalance: after one, a
/// partition is read again from its committed offset. Prints what the client logs at warning
/// level or above (an offset reset, say), with the run's time, beside the report.
struct Consuming {
    session: AtomicU64,
    started: Instant,
    consumer: u32,
    /// Every line the client logs, not only warnings (`FLOE_CHAOS_CLIENT_DEBUG`).
    debug: bool,
}

impl ClientContext for Consuming {
    fn log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        let serious = (level as i32) <= RDKafkaLogLevel::Warning as i32;
        if serious || self.debug {
            let at_ms = self.started.elapsed().as_millis();
            let consumer = self.consumer;
            eprintln!("consumer {consumer} client at {at_ms} ms: {level:?} {facility}: {message}");
        }
    }
}

impl ConsumerContext for Consuming {
    fn post_rebalance(&self, _: &BaseConsumer<Self>, _: &Rebalance<'_>) {
        self.session.fetch_add(1, Ordering::Relaxed);
    }
}

/// `member` reading until `stop`, committing its position every `member.commit_every`
/// records; returns how many errors its client reported (retriable ones included), each
/// printed with the run's time.
pub fn consume_until(
    recorder: Arc<Recorder>,
    bootstrap: &str,
    member: Member,
    stop: Arc<AtomicBool>,
) -> JoinHandle<usize> {
    let debug = std::env::var_os("FLOE_CHAOS_CLIENT_DEBUG").is_some();
    let mut config = ClientConfig::new();
    config.set_log_level(RDKafkaLogLevel::Warning);
    if debug {
        config
            .set("debug", "consumer,cgrp,topic,fetch")
            .set_log_level(RDKafkaLogLevel::Debug);
    }
    let consumer: BaseConsumer<Consuming> = config
        .set("bootstrap.servers", bootstrap)
        .set("group.id", &member.group)
        .set("auto.offset.reset", member.reset)
        .set("enable.auto.commit", "false")
        .set("session.timeout.ms", "10000")
        .set("heartbeat.interval.ms", "500")
        .set("socket.timeout.ms", "10000")
        .create_with_context(Consuming {
            session: AtomicU64::new(0),
            started: recorder.started,
            consumer: member.consumer,
            debug,
        })
        .expect("consumer");
    consumer.subscribe(&[&recorder.topic]).expect("subscribe");
    std::thread::spawn(move || {
        let mut errors = 0;
        let mut since_commit = 0;
        while !stop.load(Ordering::Relaxed) {
            match consumer.poll(Duration::from_millis(100)) {
                Some(Ok(m)) => {
                    recorder.push(Event::Poll {
                        at_ms: recorder.now_ms(),
                        consumer: member.consumer,
                        session: consumer.context().session.load(Ordering::Relaxed),
                        partition: recorder.partition(m.partition()),
                        records: vec![(m.offset(), value_of(&m))],
                        group: Some(member.group.clone()),
                    });
                    since_commit += 1;
                }
                Some(Err(e)) => {
                    errors += 1;
                    let (at_ms, consumer) = (recorder.now_ms(), member.consumer);
                    eprintln!("consumer {consumer} poll at {at_ms} ms: {e}");
                }
                None => {}
            }
            if since_commit >= member.commit_every {
                since_commit = 0;
                if let Err(e) = commit_position(&recorder, &consumer, &member.group) {
                    errors += 1;
                    let (at_ms, consumer) = (recorder.now_ms(), member.consumer);
                    eprintln!("consumer {consumer} commit at {at_ms} ms: {e}");
                }
            }
        }
        errors
    })
}

/// Commits the consumer's position in every assigned partition and records what was sent
/// and what the coordinator acknowledged.
fn commit_position(
    recorder: &Recorder,
    consumer: &BaseConsumer<Consuming>,
    group: &str,
) -> rdkafka::error::KafkaResult<()> {
    let position = consumer.position()?;
    let mut offsets = TopicPartitionList::new();
    for element in position.elements() {
        if let Offset::Offset(o) = element.offset() {
            offsets.add_partition_offset(
                &recorder.topic,
                element.partition(),
                Offset::Offset(o),
            )?;
        }
    }
    if offsets.count() == 0 {
        return Ok(());
    }
    let record = |event: fn(i64, String, TopicPartition, i64) -> Event| {
        let at_ms = recorder.now_ms();
        for element in offsets.elements() {
            if let Offset::Offset(offset) = element.offset() {
                let partition = recorder.partition(element.partition());
                recorder.push(event(at_ms, group.to_string(), partition, offset));
            }
        }
    };
    record(|at_ms, group, partition, offset| Event::CommitSent {
        at_ms,
        group,
        partition,
        offset,
    });
    consumer.commit(&offsets, CommitMode::Sync)?;
    record(|at_ms, group, partition, offset| Event::Commit {
        at_ms,
        group,
        partition,
        offset,
    });
    Ok(())
}

/// Asks for every partition's high watermark once a second until `stop`.
pub fn watch_watermarks(
    recorder: Arc<Recorder>,
    bootstrap: &str,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    let client: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("socket.timeout.ms", "10000")
        .create()
        .expect("watermark client");
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            for p in 0..recorder.partitions {
                let watermarks =
                    client.fetch_watermarks(&recorder.topic, p, Duration::from_secs(3));
                if let Ok((_, high)) = watermarks {
                    recorder.push(Event::HighWatermark {
                        at_ms: recorder.now_ms(),
                        partition: recorder.partition(p),
                        offset: high,
                    });
                }
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    })
}

/// Judges a run's history with `floe_history::check` and prints the report; with
/// `FLOE_CHAOS_HISTORY=path.json` the whole history is kept there too.
pub fn judge(history: &History) -> floe_history::Report {
    if let Some(path) = std::env::var_os("FLOE_CHAOS_HISTORY") {
        std::fs::write(&path, serde_json::to_vec(history).expect("json")).expect("history file");
    }
    let report = floe_history::check(history);
    eprintln!("{report}");
    report
}

/// Fails unless `report` judges a run that got records through, committed offsets, read back
/// every acknowledged record and found no anomaly.
pub fn assert_clean(report: &floe_history::Report) {
    assert!(
        report.totals.acknowledged > 1_000,
        "too little got through:\n{report}"
    );
    assert!(
        report.totals.commits > 0,
        "the groups committed nothing:\n{report}"
    );
    assert_eq!(
        report.unread_acknowledged.count, 0,
        "the final read missed:\n{report}"
    );
    assert_eq!(report.anomalies(), 0, "anomalies:\n{report}");
}

/// Reads every partition from its start past its high watermark and every acknowledged
/// offset, as a last consumer session (consumer `reader`): every acknowledged record must be
/// there.
pub fn read_everything(recorder: &Recorder, bootstrap: &str, reader: u32) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("final-reader-{reader}"))
        .set("enable.auto.commit", "false")
        // An offset called out of range is an error here, never a silent jump.
        .set("auto.offset.reset", "error")
        .create()
        .expect("reader");
    let mut acked_end: BTreeMap<i32, i64> = BTreeMap::new();
    for event in &recorder.history().events {
        if let Event::Ack {
            partition, offset, ..
        } = event
        {
            let end = acked_end.entry(partition.partition).or_default();
            *end = (*end).max(offset + 1);
        }
    }
    let mut assignment = TopicPartitionList::new();
    let mut high = BTreeMap::new();
    for p in 0..recorder.partitions {
        let (_, h) = consumer
            .fetch_watermarks(&recorder.topic, p, Duration::from_secs(30))
            .expect("watermarks");
        recorder.push(Event::HighWatermark {
            at_ms: recorder.now_ms(),
            partition: recorder.partition(p),
            offset: h,
        });
        high.insert(p, h.max(acked_end.get(&p).copied().unwrap_or(0)));
        assignment
            .add_partition_offset(&recorder.topic, p, Offset::Beginning)
            .expect("assign");
    }
    consumer.assign(&assignment).expect("assign");
    let mut next: BTreeMap<i32, i64> = (0..recorder.partitions).map(|p| (p, 0)).collect();
    let mut errors = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while next.iter().any(|(p, n)| n < &high[p]) {
        assert!(
            Instant::now() < deadline,
            "the final read did not reach {high:?}: {next:?}; client errors: {errors:?}"
        );
        match consumer.poll(Duration::from_millis(500)) {
            Some(Ok(m)) => {
                recorder.push(Event::Poll {
                    at_ms: recorder.now_ms(),
                    consumer: reader,
                    session: 0,
                    partition: recorder.partition(m.partition()),
                    records: vec![(m.offset(), value_of(&m))],
                    group: None,
                });
                next.insert(m.partition(), m.offset() + 1);
            }
            // Transient (a node restarting behind the balancer): the deadline bounds them.
            Some(Err(e)) => errors.push(e.to_string()),
            None => {}
        }
    }
}
