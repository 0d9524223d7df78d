//! Client quotas enforced as Kafka enforces them: a producer held to its `producer_byte_rate`
//! by the throttle times it is answered (librdkafka pauses for them), a raw client that
//! ignores them held all the same by its connection being muted, a consumer held to its
//! `consumer_byte_rate`, and a client held to its `request_percentage` of the agent's time.
//!
//! What a quota allows is checked from a client's first send: usage takes tokens that come back
//! at the quota's rate, up to eleven seconds' quota (Kafka's token bucket), so a client sending
//! as fast as it can first sends up to eleven seconds' quota at once, then its quota, evenly.
//! Over a span of T seconds from its first send it moves at least its quota times T and at most
//! that plus the first burst and what it had in flight when first held (one request, for a
//! client that waits for each answer); and in the minute after its first burst is spent, its
//! quota within a tenth.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;

use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext, ThreadedProducer};
use rdkafka::statistics::Statistics;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::raw::{create_topic, create_topics_request, produce_request, set_quota};
use support::{Floe, kafka_call, temp_dir};

/// What the producer's deliveries and statistics showed.
#[derive(Default, Clone)]
struct Seen {
    delivered_bytes: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    /// The largest throttle time librdkafka reported from any broker.
    throttle_max_ms: Arc<AtomicI64>,
}

impl ClientContext for Seen {
    fn stats(&self, statistics: Statistics) {
        for broker in statistics.brokers.values() {
            if let Some(throttle) = &broker.throttle {
                self.throttle_max_ms
                    .fetch_max(throttle.max, Ordering::Relaxed);
            }
        }
    }
}

impl ProducerContext for Seen {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(message) => {
                let size = rdkafka::Message::payload(message).map_or(0, <[u8]>::len);
                self.delivered_bytes
                    .fetch_add(size as u64, Ordering::Relaxed);
            }
            Err(_) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The quota the tests hold clients to: 1 MiB/s.
const QUOTA: f64 = 1_048_576.0;
/// The first burst, in seconds of quota: what a full bucket holds.
const BURST: f64 = 11.0;
/// How long the producers send: the first burst, then the minute measured.
const PRODUCE_RUN: Duration = Duration::from_secs(75);
/// When the minute measured starts, the first burst long spent.
const MINUTE_FROM: Duration = Duration::from_secs(15);

/// Checks that `bytes` moved over `seconds` from the first send are what `quota` allows: at
/// least the quota over that time, at most that and the first burst, the fraction `over` more,
/// and `in_flight`: what the client may have sent before it learnt it was held.
fn assert_held(bytes: f64, seconds: f64, quota: f64, over: f64, in_flight: f64) {
    let (low, high) = (
        quota * seconds,
        (1.0 + over) * quota * (seconds + BURST) + in_flight,
    );
    println!(
        "{bytes:.0} bytes in {seconds:.1} s: {:.3} of the quota ({low:.0}..={high:.0} allowed)",
        bytes / (quota * seconds)
    );
    assert!(
        (low..=high).contains(&bytes),
        "{bytes:.0} bytes in {seconds:.1} s against a quota of {quota} B/s"
    );
}

/// Checks that `bytes` moved over the `seconds` (about a minute) from `MINUTE_FROM` on are
/// `quota` within a tenth.
fn assert_minute_held(bytes: f64, seconds: f64, quota: f64) {
    let share = bytes / (quota * seconds);
    println!(
        "{bytes:.0} bytes in the {seconds:.1} s after the first burst: {share:.3} of the quota"
    );
    assert!(
        (0.9..=1.1).contains(&share),
        "{bytes:.0} bytes in {seconds:.1} s against a quota of {quota} B/s: {share:.3} of it"
    );
}

/// What a client had moved when the minute measured began: bytes, and when.
#[derive(Default)]
struct MinuteStart(Option<(f64, Instant)>);

impl MinuteStart {
    /// Notes `moved` once the client has been sending for `MINUTE_FROM`.
    fn note(&mut self, started: Instant, moved: f64) {
        if self.0.is_none() && started.elapsed() >= MINUTE_FROM {
            self.0 = Some((moved, Instant::now()));
        }
    }

    /// What was moved since, and over how many seconds, given `moved` now.
    fn since(&self, moved: f64) -> (f64, f64) {
        let (at_start, at) = self.0.expect("the run outlasts the minute's start");
        (moved - at_start, at.elapsed().as_secs_f64())
    }
}

#[test]
fn a_producer_is_held_to_its_byte_rate_and_told_its_throttle_times() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    create_topic(&bootstrap, "quota-produce", 4);
    set_quota(
        &bootstrap,
        &[("client-id", Some("held"))],
        "producer_byte_rate",
        QUOTA,
    );

    let seen = Seen::default();
    let producer: ThreadedProducer<Seen> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("client.id", "held")
        .set("linger.ms", "5")
        .set("batch.size", "65536")
        .set("message.timeout.ms", "300000")
        .set("queue.buffering.max.kbytes", "1024")
        .set("statistics.interval.ms", "1000")
        .create_with_context(seen.clone())
        .expect("producer");
    let value = vec![b'q'; 1024];
    let started = Instant::now();
    let mut minute = MinuteStart::default();
    let mut i = 0u64;
    // As fast as the producer's queue takes records.
    while started.elapsed() < PRODUCE_RUN {
        minute.note(started, seen.delivered_bytes.load(Ordering::Relaxed) as f64);
        let record = BaseRecord::to("quota-produce")
            .key("k")
            .payload(&value)
            .partition((i % 4) as i32);
        match producer.send(record) {
            Ok(()) => i += 1,
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    let delivered = seen.delivered_bytes.load(Ordering::Relaxed) as f64;
    let seconds = started.elapsed().as_secs_f64();
    let (in_minute, minute_seconds) = minute.since(delivered);
    // Before the producer is dropped: dropping it fails what it still holds.
    assert_eq!(seen.failed.load(Ordering::Relaxed), 0, "failed deliveries");
    drop(producer);
    // Kafka counts whole requests, a little more than the records' values. librdkafka sends
    // requests without waiting for answers, so when it is first held, what it had in flight is
    // taken too: up to its whole queue (`queue.buffering.max.kbytes`).
    assert_held(delivered, seconds, QUOTA, 0.0, 1_048_576.0);
    assert_minute_held(in_minute, minute_seconds, QUOTA);
    assert!(
        seen.throttle_max_ms.load(Ordering::Relaxed) > 0,
        "librdkafka saw no throttle time"
    );
    let throttled = support::metric(
        floe.admin,
        "floe_quota_throttled_requests_total{quota=\"produce\"}",
    );
    assert!(
        throttled.unwrap_or(0.0) > 0.0,
        "no throttled request counted"
    );
    // The entity that set the quota: what its client used (whole requests, at least the
    // values delivered) and the throttle times it was answered.
    let entity = "quota=\"produce\",entity=\"client-id=held\"";
    let used = support::metric(
        floe.admin,
        &format!("floe_quota_entity_used_total{{{entity}}}"),
    );
    assert!(used.is_some_and(|u| u >= delivered), "{used:?}");
    let held_ms = support::metric(
        floe.admin,
        &format!("floe_quota_entity_throttle_time_ms_total{{{entity}}}"),
    );
    assert!(held_ms.is_some_and(|ms| ms > 0.0), "{held_ms:?}");
}

#[test]
fn a_client_that_ignores_throttle_times_is_held_by_muting() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    let quota = raw_producers(&bootstrap, "quota-raw");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let started = Instant::now();
    let raw = runtime.block_on(produce_raw(bootstrap.clone(), "quota-raw"));
    let seconds = started.elapsed().as_secs_f64();
    let (sent, throttled, size) = (raw.sent, raw.throttled, raw.request_bytes);
    // Each request sent at once after a throttled answer was read only once its hold was
    // over: muting, whatever the client does. (The client starts its clock when the answer
    // reaches it, a little after the hold started: a few milliseconds are its transit.)
    assert!(
        raw.least_hold_margin_ms >= -5,
        "a request was answered {} ms before its connection's hold ended",
        -raw.least_hold_margin_ms
    );
    assert!(throttled > 0, "no response carried a throttle time");
    assert_held(sent, seconds, quota, 0.0, size);
    assert_minute_held(raw.in_minute.0, raw.in_minute.1, quota);
}

/// Makes `topic` and sets the producer quota of the raw clients (client id `raw`), which it
/// returns: a quarter of the quota of the other tests, since a raw client sends one request
/// at a time and must be able to send faster than its quota when it is not held.
fn raw_producers(bootstrap: &str, topic: &str) -> f64 {
    create_topic(bootstrap, topic, 1);
    let quota = QUOTA / 4.0;
    set_quota(
        bootstrap,
        &[("client-id", Some("raw"))],
        "producer_byte_rate",
        quota,
    );
    quota
}

/// What a raw client sent.
struct Raw {
    sent: f64,
    /// Responses that carried a throttle time.
    throttled: u64,
    request_bytes: f64,
    /// Sent in the minute measured, and its seconds.
    in_minute: (f64, f64),
    /// The request after a throttled response that was answered soonest after it, less the
    /// throttle time: not below zero when the connection is held for it (muted).
    least_hold_margin_ms: i64,
}

/// Produces 64 KiB batches to partition 0 of `topic` as client `raw` for `PRODUCE_RUN`, each
/// sent as soon as the last is answered, whatever throttle time it carried.
async fn produce_raw(bootstrap: String, topic: &'static str) -> Raw {
    let (mut tx, mut rx) = floe::client::connect_as(&bootstrap, "raw")
        .await
        .expect("connect");
    let batch = build_test_batch(-1, -1, -1, 64, 1000);
    let mut raw = Raw {
        sent: 0.0,
        throttled: 0,
        request_bytes: batch.len() as f64,
        in_minute: (0.0, 0.0),
        least_hold_margin_ms: i64::MAX,
    };
    let mut minute = MinuteStart::default();
    // The throttle time of the last response, and when it came.
    let mut held: Option<(i64, Instant)> = None;
    let started = Instant::now();
    while started.elapsed() < PRODUCE_RUN {
        minute.note(started, raw.sent);
        let request = produce_request(topic, &batch);
        let response = floe::client::call(&mut tx, &mut rx, 9, request)
            .await
            .expect("produce");
        let ResponseBody::Produce(response) = response else {
            panic!("not a Produce response");
        };
        let partition = &response.responses[0].partition_responses[0];
        assert_eq!(partition.error_code, 0, "{response:?}");
        if let Some((throttle_ms, at)) = held.take() {
            // Answered no sooner than the hold allows (the next request was not read).
            let waited = at.elapsed().as_millis() as i64;
            raw.least_hold_margin_ms = raw.least_hold_margin_ms.min(waited - throttle_ms);
        }
        if response.throttle_time_ms > 0 {
            raw.throttled += 1;
            held = Some((i64::from(response.throttle_time_ms), Instant::now()));
        }
        raw.sent += raw.request_bytes;
    }
    raw.in_minute = minute.since(raw.sent);
    raw
}

#[test]
fn a_quota_holds_across_the_agents_behind_a_load_balancer() {
    let dir = temp_dir();
    let (_nodes, balancer, _haproxy) =
        support::haproxy::behind_haproxy(dir.path(), 1, &[], |_, balancer| {
            vec!["--advertised-addr".into(), balancer.to_string()]
        });
    let bootstrap = balancer.to_string();
    let quota = raw_producers(&bootstrap, "quota-shared");
    // Four connections of one client id, spread over the three agents in round robin: each
    // agent alone would give the connections it serves the whole quota.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let started = Instant::now();
    let raws = runtime.block_on(futures::future::join_all(
        (0..4).map(|_| produce_raw(bootstrap.clone(), "quota-shared")),
    ));
    let seconds = started.elapsed().as_secs_f64();
    let sent: f64 = raws.iter().map(|r| r.sent).sum();
    assert!(
        raws.iter().all(|r| r.throttled > 0),
        "a client was never throttled"
    );
    // Each agent learns the others' usage up to 200 ms late: what the other connections send
    // meanwhile comes on top until it is repaid (measured about a hundredth of the quota),
    // allowed up to a tenth more than one agent's bound. Without sharing, each agent would
    // allow the whole quota.
    assert_held(sent, seconds, quota, 0.1, 4.0 * raws[0].request_bytes);
    let in_minute: f64 = raws.iter().map(|r| r.in_minute.0).sum();
    assert_minute_held(in_minute, raws[0].in_minute.1, quota);
}

#[test]
fn a_consumer_is_held_to_its_byte_rate() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    create_topic(&bootstrap, "quota-fetch", 1);
    // 60 MiB to read: at half the other tests' quota for 45 s, the test may read at most about
    // 34 MiB of them.
    let producer: ThreadedProducer<rdkafka::producer::DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .create()
        .expect("producer");
    let value = vec![b'f'; 1024];
    for _ in 0..60 * 1024 {
        let mut record = BaseRecord::<(), _>::to("quota-fetch")
            .payload(&value)
            .partition(0);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((_, r)) => {
                    record = r;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }
    rdkafka::producer::Producer::flush(&producer, Duration::from_secs(60)).expect("flush");
    let quota = QUOTA / 2.0;
    set_quota(&bootstrap, &[("user", None)], "consumer_byte_rate", quota);

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "quota-readers")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    consumer.subscribe(&["quota-fetch"]).expect("subscribe");
    let mut started = None;
    let mut read = 0.0;
    while started.is_none_or(|at: Instant| at.elapsed() < Duration::from_secs(45)) {
        if let Some(message) = consumer.poll(Duration::from_millis(100)) {
            let message = message.expect("consume");
            started.get_or_insert_with(Instant::now);
            read += rdkafka::Message::payload(&message).map_or(0, <[u8]>::len) as f64;
        }
    }
    let seconds = started.expect("read").elapsed().as_secs_f64();
    // librdkafka fetches at most 1 MiB a partition at a time.
    assert_held(read, seconds, quota, 0.0, 1_048_576.0);
    let throttled = support::metric(
        floe.admin,
        "floe_quota_throttled_requests_total{quota=\"fetch\"}",
    );
    assert!(throttled.unwrap_or(0.0) > 0.0, "no throttled fetch counted");
}

#[test]
fn topic_changes_are_held_to_the_controller_mutation_rate() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    // One partition a second: a burst of eleven.
    set_quota(
        &bootstrap,
        &[("client-id", Some("mutator"))],
        "controller_mutation_rate",
        1.0,
    );
    let create = |name: &str, partitions: i32, version: i16| {
        let request = create_topics_request(name, partitions);
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let response = runtime.block_on(async {
            let (mut tx, mut rx) = floe::client::connect_as(&bootstrap, "mutator")
                .await
                .expect("connect");
            floe::client::call(&mut tx, &mut rx, version, request)
                .await
                .expect("call")
        });
        let ResponseBody::CreateTopics(response) = response else {
            panic!("not a CreateTopics response");
        };
        response
    };
    // Twenty partitions go ahead, leaving nine owed: the client is not held yet (strict).
    let first = create("mutation-a", 20, 7);
    assert_eq!(first.topics[0].error_code, 0, "{first:?}");
    assert_eq!(first.throttle_time_ms, 0);
    // While they are owed, a strict request is refused with the time left to wait.
    let refused = create("mutation-b", 1, 7);
    assert_eq!(refused.topics[0].error_code, 89, "{refused:?}");
    assert_eq!(
        refused.topics[0].error_message.as_deref(),
        Some("The throttling quota has been exceeded.")
    );
    assert!(
        (1..=9_000).contains(&refused.throttle_time_ms),
        "{refused:?}"
    );
    // A version before strictness (CreateTopics v5) goes ahead, held.
    let permissive = create("mutation-c", 1, 5);
    assert_eq!(permissive.topics[0].error_code, 0, "{permissive:?}");
    assert!(permissive.throttle_time_ms > 0, "{permissive:?}");
    // Another client is not held.
    let other = {
        let request = RequestBody::CreateTopics(CreateTopicsRequest {
            topics: vec![create_topics_request::CreatableTopic {
                name: "mutation-d".into(),
                num_partitions: 30,
                replication_factor: 1,
                ..Default::default()
            }],
            timeout_ms: 10_000,
            ..Default::default()
        });
        let ResponseBody::CreateTopics(response) = kafka_call(&bootstrap, 7, request) else {
            panic!("not a CreateTopics response");
        };
        response
    };
    assert_eq!(other.topics[0].error_code, 0, "{other:?}");
}

#[test]
fn connections_beyond_an_ips_creation_rate_are_closed_unserved() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    // One connection a second from any ip (the least Kafka takes: the key is an integer): the
    // first eleven are served at once (a full bucket), one more for each second that passes,
    // and the first beyond that is held until its token would be back (at most a second,
    // Kafka's bounded throttle) and closed unserved.
    set_quota(&bootstrap, &[("ip", None)], "connection_creation_rate", 1.0);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let started = Instant::now();
    let served = runtime.block_on(async {
        for served in 0..100 {
            let (mut tx, mut rx) = floe::client::connect(&bootstrap).await.expect("connect");
            let request = RequestBody::ApiVersions(ApiVersionsRequest::default());
            if floe::client::call(&mut tx, &mut rx, 3, request)
                .await
                .is_err()
            {
                return served;
            }
        }
        panic!("no connection was refused");
    });
    // Tokens came back for no longer than the whole run.
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        (11.0..=11.0 + seconds).contains(&f64::from(served)),
        "{served} served in {seconds:.1} s"
    );
    let refused = support::metric(floe.admin, "floe_connections_refused_total");
    assert_eq!(refused, Some(1.0));
}

#[test]
fn requests_are_held_to_their_share_of_the_agents_time() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    create_topic(&bootstrap, "quota-busy", 1);
    let produce = produce_request("quota-busy", &build_test_batch(-1, -1, -1, 4, 100));
    let ResponseBody::Produce(produced) = kafka_call(&bootstrap, 9, produce) else {
        panic!("not a Produce response");
    };
    assert_eq!(produced.responses[0].partition_responses[0].error_code, 0);
    // A hundredth of a percent of one thread: a burst of 1.1 ms of the agent's time, then
    // a tenth of a millisecond a second.
    set_quota(
        &bootstrap,
        &[("client-id", Some("busy"))],
        "request_percentage",
        0.01,
    );
    let fetch = || {
        RequestBody::Fetch(FetchRequest {
            replica_id: -1,
            max_wait_ms: 0,
            min_bytes: 1,
            max_bytes: 1 << 20,
            topics: vec![fetch_request::FetchTopic {
                topic: "quota-busy".into(),
                partitions: vec![fetch_request::FetchPartition {
                    partition: 0,
                    fetch_offset: 0,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })
    };
    // Bytes of records in a fetch's answer (a throttled fetch answers no partitions at all).
    let records = |response: &FetchResponse| -> usize {
        let partitions = response.responses.iter().flat_map(|t| &t.partitions);
        partitions
            .filter_map(|p| p.records.as_ref())
            .map(|r| r.len())
            .sum()
    };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (first_held, asked, margin_ms, fetched) = runtime.block_on(async {
        let (mut tx, mut rx) = floe::client::connect_as(&bootstrap, "busy")
            .await
            .expect("connect");
        // Metadata requests, each a little of the agent's time, until one is throttled.
        let mut asked = 0;
        let held = loop {
            assert!(asked < 100_000, "no Metadata response was ever throttled");
            let request = RequestBody::Metadata(MetadataRequest::default());
            let response = floe::client::call(&mut tx, &mut rx, 12, request)
                .await
                .expect("metadata");
            let ResponseBody::Metadata(response) = response else {
                panic!("not a Metadata response");
            };
            asked += 1;
            if response.throttle_time_ms > 0 {
                break response.throttle_time_ms;
            }
        };
        // The client's fetch is read only once the hold is over, and its own time puts the
        // client over its share again: answered empty with a throttle time.
        let sent = Instant::now();
        let response = floe::client::call(&mut tx, &mut rx, 12, fetch())
            .await
            .expect("fetch");
        let margin_ms = sent.elapsed().as_millis() as i64 - i64::from(held);
        let ResponseBody::Fetch(response) = response else {
            panic!("not a Fetch response");
        };
        (held, asked, margin_ms, response)
    });
    println!("first throttled after {asked} Metadata requests: {first_held} ms");
    // Kafka bounds a request-time throttle to one window.
    assert!((1..=1_000).contains(&first_held), "{first_held}");
    assert!(
        margin_ms >= -5,
        "the fetch was answered {} ms before the hold ended",
        -margin_ms
    );
    assert!(
        (1..=1_000).contains(&fetched.throttle_time_ms),
        "{fetched:?}"
    );
    assert_eq!(records(&fetched), 0, "a throttled fetch is answered empty");
    // Another client is not held, and reads the records.
    let ResponseBody::Fetch(other) = kafka_call(&bootstrap, 12, fetch()) else {
        panic!("not a Fetch response");
    };
    assert_eq!(other.throttle_time_ms, 0);
    assert!(records(&other) > 0, "{other:?}");
    let throttled = support::metric(
        floe.admin,
        "floe_quota_throttled_requests_total{quota=\"request\"}",
    );
    assert!(throttled.is_some_and(|n| n >= 2.0), "{throttled:?}");
}
