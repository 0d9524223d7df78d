//! The load generator: producers and a consumer over the Kafka protocol, measuring produce
//! latency (send → acknowledgement) and end-to-end latency (send → consumed).
//!
//! Each producer owns a connection and a share of the partitions, keeps up to `in_flight`
//! requests outstanding (like a Kafka client's `max.in.flight.requests.per.connection`), and
//! sends one batch per request. End-to-end latency compares a batch's first timestamp with
//! the time it is consumed, so it has millisecond resolution.

use crate::client::{self, ClientError};
use crate::clock::{Clock, Instant};
use crate::protocol::messages::{
    CreateTopicsRequest, FetchRequest, InitProducerIdRequest, ProduceRequest, RequestBody,
    ResponseBody, create_topics_request, fetch_request, produce_request,
};
use crate::protocol::record_batch::{BatchSpec, Batches, build_batch};
use crate::protocol::{ApiKey, ErrorCode};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};

const PRODUCE_VERSION: i16 = 9;
const FETCH_VERSION: i16 = 12;

#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub bootstrap: String,
    pub topic: String,
    pub partitions: i32,
    pub producers: usize,
    pub record_bytes: usize,
    pub batch_records: i32,
    pub in_flight: usize,
    pub duration: Duration,
    /// Records per second over all producers; `None` for as fast as possible.
    pub rate: Option<f64>,
    pub acks: i16,
    pub idempotent: bool,
    /// Consume everything produced and measure end-to-end latency.
    pub consume: bool,
    /// Draw a progress bar on standard error (hidden when it is not a terminal).
    pub progress: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub samples: u64,
}

impl Percentiles {
    /// From a histogram of microseconds, in milliseconds.
    fn from_micros(h: &Histogram<u64>) -> Percentiles {
        let ms = |v: u64| v as f64 / 1000.0;
        Percentiles {
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
            samples: h.len(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub seconds: f64,
    pub records: u64,
    pub bytes: u64,
    pub megabytes_per_second: f64,
    pub records_per_second: f64,
    pub produce_latency_ms: Percentiles,
    pub end_to_end_latency_ms: Option<Percentiles>,
    pub consumed_records: u64,
    pub produce_errors: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{0}")]
    Broker(String),
    #[error("the embedded broker did not start")]
    Embedded(#[source] crate::node::StartError),
    #[error("bad latency model")]
    LatencyModel(#[from] crate::store::chaos::SpecError),
    #[error(transparent)]
    Prices(#[from] crate::cost::PriceError),
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("static bounds are valid")
}

struct Shared {
    produce_latency: Mutex<Histogram<u64>>,
    acked_records: AtomicU64,
    acked_bytes: AtomicU64,
    errors: AtomicU64,
}

pub async fn run(spec: &LoadSpec) -> Result<LoadReport, BenchError> {
    create_topic(spec).await?;
    let shared = Arc::new(Shared {
        produce_latency: Mutex::new(histogram()),
        acked_records: AtomicU64::new(0),
        acked_bytes: AtomicU64::new(0),
        errors: AtomicU64::new(0),
    });
    let producing = Arc::new(AtomicBool::new(true));
    let consumer = spec
        .consume
        .then(|| tokio::spawn(consume(spec.clone(), producing.clone(), shared.clone())));
    let started = Clock::system().now();
    let ticker = spec
        .progress
        .then(|| tokio::spawn(show_progress(spec.duration, started, shared.clone())));
    let mut producers = Vec::new();
    for index in 0..spec.producers.max(1) {
        producers.push(tokio::spawn(produce(spec.clone(), index, shared.clone())));
    }
    for p in producers {
        p.await.map_err(|e| BenchError::Broker(e.to_string()))??;
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(ticker) = ticker {
        ticker.abort();
    }
    producing.store(false, Ordering::Relaxed);
    let (e2e, consumed) = match consumer {
        Some(task) => {
            let (h, n) = task
                .await
                .map_err(|e| BenchError::Broker(e.to_string()))??;
            (Some(Percentiles::from_micros(&h)), n)
        }
        None => (None, 0),
    };
    let records = shared.acked_records.load(Ordering::Relaxed);
    let bytes = shared.acked_bytes.load(Ordering::Relaxed);
    let produce_latency = Percentiles::from_micros(
        &shared
            .produce_latency
            .lock()
            .unwrap_or_else(|p| p.into_inner()),
    );
    Ok(LoadReport {
        seconds,
        records,
        bytes,
        megabytes_per_second: bytes as f64 / 1e6 / seconds,
        records_per_second: records as f64 / seconds,
        produce_latency_ms: produce_latency,
        end_to_end_latency_ms: e2e,
        consumed_records: consumed,
        produce_errors: shared.errors.load(Ordering::Relaxed),
    })
}

/// A progress bar over the run's duration with the acknowledged records and rate so far.
async fn show_progress(duration: Duration, started: Instant, shared: Arc<Shared>) {
    let total = duration.as_millis().max(1) as u64;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {elapsed}/{duration} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let _finish = scopeguard(bar.clone());
    loop {
        let elapsed = started.elapsed();
        let records = shared.acked_records.load(Ordering::Relaxed);
        let megabytes = shared.acked_bytes.load(Ordering::Relaxed) as f64 / 1e6;
        bar.set_position((elapsed.as_millis() as u64).min(total));
        bar.set_message(format!(
            "{records} records acknowledged, {:.1} MB/s",
            megabytes / elapsed.as_secs_f64().max(1e-3)
        ));
        Clock::system().sleep(Duration::from_millis(200)).await;
    }
}

/// Clears the bar when the ticker task is aborted.
fn scopeguard(bar: indicatif::ProgressBar) -> impl Drop {
    struct Clear(indicatif::ProgressBar);
    impl Drop for Clear {
        fn drop(&mut self) {
            self.0.finish_and_clear();
        }
    }
    Clear(bar)
}

async fn create_topic(spec: &LoadSpec) -> Result<(), BenchError> {
    let (mut tx, mut rx) = client::connect(&spec.bootstrap).await?;
    let request = RequestBody::CreateTopics(CreateTopicsRequest {
        topics: vec![create_topics_request::CreatableTopic {
            name: spec.topic.clone(),
            num_partitions: spec.partitions,
            replication_factor: -1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    });
    match client::call(&mut tx, &mut rx, 7, request).await? {
        ResponseBody::CreateTopics(r) => match r.topics.first().map(|t| t.error_code) {
            Some(0) | Some(36) => Ok(()),
            other => Err(BenchError::Broker(format!(
                "cannot create topic {}: error {other:?}",
                spec.topic
            ))),
        },
        _ => Err(BenchError::Broker("unexpected CreateTopics answer".into())),
    }
}

/// One producer: its partitions round-robin, `in_flight` requests outstanding.
async fn produce(spec: LoadSpec, index: usize, shared: Arc<Shared>) -> Result<(), BenchError> {
    let (mut tx, mut rx) = client::connect(&spec.bootstrap).await?;
    let (producer_id, producer_epoch) = if spec.idempotent {
        match client::call(
            &mut tx,
            &mut rx,
            4,
            RequestBody::InitProducerId(InitProducerIdRequest {
                transactional_id: None,
                transaction_timeout_ms: 60_000,
                producer_id: -1,
                producer_epoch: -1,
                ..Default::default()
            }),
        )
        .await?
        {
            ResponseBody::InitProducerId(r) if r.error_code == 0 => {
                (r.producer_id, r.producer_epoch)
            }
            ResponseBody::InitProducerId(r) => {
                return Err(BenchError::Broker(format!(
                    "InitProducerId failed: error {}",
                    r.error_code
                )));
            }
            _ => {
                return Err(BenchError::Broker(
                    "unexpected InitProducerId answer".into(),
                ));
            }
        }
    } else {
        (-1, -1)
    };
    // Producer i takes partitions i, i + producers, ...; extra producers share one.
    let partitions: Vec<i32> = (0..spec.partitions)
        .filter(|p| *p as usize % spec.producers.max(1) == index)
        .collect();
    let partitions = if partitions.is_empty() {
        vec![(index as i32) % spec.partitions]
    } else {
        partitions
    };
    let mut sequences = vec![0i32; spec.partitions as usize];
    let window = Arc::new(Semaphore::new(spec.in_flight.max(1)));
    let (sent_tx, mut sent_rx) =
        mpsc::unbounded_channel::<(Instant, u64, u64, tokio::sync::OwnedSemaphorePermit)>();
    let acks = spec.acks;
    let reader_shared = shared.clone();
    let reader = tokio::spawn(async move {
        while let Some((sent, records, bytes, permit)) = sent_rx.recv().await {
            if acks == 0 {
                drop(permit);
                continue;
            }
            let (_, body) = rx.receive(ApiKey::Produce, PRODUCE_VERSION).await?;
            let ok = match body {
                ResponseBody::Produce(r) => r
                    .responses
                    .iter()
                    .flat_map(|t| &t.partition_responses)
                    .all(|p| p.error_code == ErrorCode::None.code()),
                _ => false,
            };
            if ok {
                let micros = sent.elapsed().as_micros() as u64;
                let _ = reader_shared
                    .produce_latency
                    .lock()
                    .map(|mut h| h.record(micros.max(1)));
                reader_shared
                    .acked_records
                    .fetch_add(records, Ordering::Relaxed);
                reader_shared
                    .acked_bytes
                    .fetch_add(bytes, Ordering::Relaxed);
            } else {
                reader_shared.errors.fetch_add(1, Ordering::Relaxed);
            }
            drop(permit);
        }
        Ok::<(), ClientError>(())
    });

    let per_producer_rate = spec.rate.map(|r| r / spec.producers.max(1) as f64);
    let started = Clock::system().now();
    let mut sent_records: u64 = 0;
    let mut next = 0usize;
    while started.elapsed() < spec.duration {
        if let Some(rate) = per_producer_rate {
            // Producers are phase-shifted so that together they send evenly, not in bursts.
            let phase = index as f64 / spec.producers.max(1) as f64 * spec.batch_records as f64;
            let due = Duration::from_secs_f64((sent_records as f64 + phase) / rate.max(1e-9));
            if due > started.elapsed() {
                Clock::system().sleep(due - started.elapsed()).await;
            }
        }
        let permit = window
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| BenchError::Broker(e.to_string()))?;
        let partition = partitions[next % partitions.len()];
        next += 1;
        let sequence = &mut sequences[partition as usize];
        let batch = build_batch(BatchSpec {
            producer_id,
            producer_epoch,
            base_sequence: if spec.idempotent { *sequence } else { -1 },
            records: spec.batch_records,
            value_bytes: spec.record_bytes,
            base_timestamp_ms: Clock::system().now_ms(),
        });
        *sequence = sequence.wrapping_add(spec.batch_records);
        let bytes = batch.len() as u64;
        let request = RequestBody::Produce(ProduceRequest {
            acks: spec.acks,
            timeout_ms: 30_000,
            topic_data: vec![produce_request::TopicProduceData {
                name: spec.topic.clone(),
                partition_data: vec![produce_request::PartitionProduceData {
                    index: partition,
                    records: Some(batch.into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
        let sent = Clock::system().now();
        tx.send(PRODUCE_VERSION, &request).await?;
        sent_records += spec.batch_records as u64;
        if sent_tx
            .send((sent, spec.batch_records as u64, bytes, permit))
            .is_err()
        {
            break;
        }
    }
    drop(sent_tx);
    reader
        .await
        .map_err(|e| BenchError::Broker(e.to_string()))??;
    Ok(())
}

/// Reads every partition from offset 0 until producers are done and everything acknowledged
/// has been read (or 30 s pass without progress).
async fn consume(
    spec: LoadSpec,
    producing: Arc<AtomicBool>,
    shared: Arc<Shared>,
) -> Result<(Histogram<u64>, u64), BenchError> {
    let (mut tx, mut rx) = client::connect(&spec.bootstrap).await?;
    let mut offsets = vec![0i64; spec.partitions as usize];
    let mut latency = histogram();
    let mut consumed: u64 = 0;
    let mut last_progress = Clock::system().now();
    loop {
        let request = RequestBody::Fetch(FetchRequest {
            replica_id: -1,
            max_wait_ms: 200,
            min_bytes: 1,
            max_bytes: 64 << 20,
            session_epoch: -1,
            topics: vec![fetch_request::FetchTopic {
                topic: spec.topic.clone(),
                partitions: offsets
                    .iter()
                    .enumerate()
                    .map(|(p, &offset)| fetch_request::FetchPartition {
                        partition: p as i32,
                        fetch_offset: offset,
                        partition_max_bytes: 8 << 20,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        });
        let response = client::call(&mut tx, &mut rx, FETCH_VERSION, request).await?;
        let ResponseBody::Fetch(response) = response else {
            return Err(BenchError::Broker("unexpected Fetch answer".into()));
        };
        let now = Clock::system().now_ms();
        for partition in response.responses.iter().flat_map(|t| &t.partitions) {
            let Some(records) = &partition.records else {
                continue;
            };
            for batch in Batches::new(records.to_bytes()).flatten() {
                let next = batch.base_offset() + batch.offset_count();
                let slot = &mut offsets[partition.partition_index as usize];
                if next <= *slot {
                    continue;
                }
                let fresh = (next - (*slot).max(batch.base_offset())) as u64;
                *slot = next;
                consumed += fresh;
                let micros = ((now - batch.base_timestamp()).max(0) as u64 * 1000).max(1);
                let _ = latency.record_n(micros, fresh);
                last_progress = Clock::system().now();
            }
        }
        let done_producing = !producing.load(Ordering::Relaxed);
        if done_producing && consumed >= shared.acked_records.load(Ordering::Relaxed) {
            return Ok((latency, consumed));
        }
        if done_producing && last_progress.elapsed() > Duration::from_secs(30) {
            return Ok((latency, consumed));
        }
    }
}
