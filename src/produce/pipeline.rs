//! The produce pipeline's shell: batcher → uploader → committer, with bounded memory.
//!
//! ```text
//! handlers ─(bounded channel)─► batcher task ─ seal ─► upload task per object (≤ N at once)
//!                                                          │ in seal order
//!                                                          ▼
//!                              committer task: CommitObject → metadata → answer each batch
//! ```
//! Uploads run in parallel; commits happen strictly in seal order, so a partition's batches
//! get offsets in the order they were accepted and each connection's responses stay in order.
//! A producer is answered only after both the PUT and the metadata commit are durable.

use super::batcher::{Batcher, Sealed, Standing};
use super::metrics::PipelineMetrics;
use super::shares::Shares;
use crate::clock::{Clock, Instant};
use crate::drain_signal::DrainSignal;
use crate::ids::{ObjectKey, ProducerEpoch, ProducerId, TopicPartition};
use crate::metadata::state::CommitObject;
use crate::metadata::state::{BatchOutcome, CommittedBatch, PartitionBatches};
use crate::metadata::{MetadataError, MetadataStore};
use crate::object::{format::encode_object, key::new_object_key};
use crate::protocol::record_batch::RecordBatch;
use crate::random::Rng;
use crate::read_cache::ReadCache;
use crate::store::{ObjectClient, ObjectStoreError};
use crate::telemetry::ErrorChain;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;

/// Why a batch was not committed. Shared by every batch of the failed object, hence the `Arc`s.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProduceError {
    #[error("object store write failed")]
    Storage(#[source] Arc<ObjectStoreError>),
    #[error("metadata commit failed")]
    Metadata(#[source] Arc<MetadataError>),
    #[error("the produce pipeline is shutting down")]
    ShuttingDown,
}

pub type BatchResult = Result<BatchOutcome, ProduceError>;

/// One accepted batch waiting for its object to be committed.
struct AwaitingCommit {
    batch: RecordBatch,
    reply: oneshot::Sender<BatchResult>,
    /// Produce-buffer bytes held until the batch is answered.
    _permit: OwnedSemaphorePermit,
}

#[derive(Clone)]
pub struct ProducePipeline {
    intake: mpsc::Sender<(TopicPartition, Standing, AwaitingCommit)>,
    buffer: Arc<Semaphore>,
    buffer_bytes_max: usize,
    metrics: Arc<PipelineMetrics>,
    shares: Arc<std::sync::Mutex<Shares>>,
}

pub struct PipelineConfig {
    pub flush_interval: Duration,
    pub object_bytes_max: usize,
    pub buffer_bytes_max: usize,
    pub uploads_in_flight_max: usize,
}

type Upload = JoinHandle<(
    Sealed<AwaitingCommit>,
    ObjectKey,
    Result<Vec<object::ChunkLayout>, ProduceError>,
)>;
use crate::object::format as object;

impl ProducePipeline {
    pub fn start(
        config: PipelineConfig,
        store: Arc<ObjectClient>,
        read_cache: ReadCache,
        metadata: MetadataStore,
        drain: DrainSignal,
        clock: Clock,
        rng: Rng,
    ) -> ProducePipeline {
        let (intake, intake_rx) = mpsc::channel(1024);
        let (uploads, uploads_rx) = mpsc::channel(config.uploads_in_flight_max);
        let buffer_bytes_max = config.buffer_bytes_max;
        let metrics = Arc::new(PipelineMetrics::default());
        let storage = Storage {
            client: store,
            read_cache,
            clock: clock.clone(),
            rng,
            metrics: metrics.clone(),
        };
        tokio::spawn(run_batcher(config, intake_rx, uploads, storage, drain));
        tokio::spawn(run_committer(uploads_rx, metadata, clock, metrics.clone()));
        ProducePipeline {
            intake,
            buffer: Arc::new(Semaphore::new(buffer_bytes_max)),
            buffer_bytes_max,
            metrics,
            shares: Arc::default(),
        }
    }

    pub fn metrics(&self) -> &PipelineMetrics {
        &self.metrics
    }

    /// Counts a produce request's bytes for its tenant (a user and a client id) and answers
    /// whether the tenant is heavy beside the others (`shares`).
    pub fn count_tenant(&self, user: &str, client_id: &str, bytes: f64, now_ms: i64) -> bool {
        let mut shares = self.shares.lock().expect("tenant shares lock");
        shares.count(user, client_id, bytes, now_ms)
    }

    /// Bytes of batches accepted and not yet answered (committed or failed).
    pub fn pending_bytes(&self) -> usize {
        self.buffer_bytes_max - self.buffer.available_permits()
    }

    /// Queues a validated batch, its tenant light or heavy (`Standing`); the receiver answers
    /// once it is committed (or failed). Waits while the produce buffer is full: that is the
    /// backpressure on producers.
    pub async fn append(
        &self,
        partition: TopicPartition,
        batch: RecordBatch,
        standing: Standing,
    ) -> oneshot::Receiver<BatchResult> {
        let (reply, rx) = oneshot::channel();
        self.metrics.batch_accepted(standing);
        let bytes = batch.size().clamp(1, self.buffer_bytes_max) as u32;
        let Ok(permit) = self.buffer.clone().acquire_many_owned(bytes).await else {
            let _ = reply.send(Err(ProduceError::ShuttingDown));
            return rx;
        };
        let pending = AwaitingCommit {
            batch,
            reply,
            _permit: permit,
        };
        if let Err(mpsc::error::SendError((_, _, pending))) =
            self.intake.send((partition, standing, pending)).await
        {
            let _ = pending.reply.send(Err(ProduceError::ShuttingDown));
        }
        rx
    }
}

/// Seals objects as the batcher decides; once the agent drains, at once: its producers are
/// about to be sent elsewhere, and what they wait for must be answered before it exits (the
/// PUT budget yields to that).
async fn run_batcher(
    config: PipelineConfig,
    mut intake: mpsc::Receiver<(TopicPartition, Standing, AwaitingCommit)>,
    uploads: mpsc::Sender<Upload>,
    store: Storage,
    drain: DrainSignal,
) {
    let mut batcher = Batcher::new(config.flush_interval, config.object_bytes_max);
    let mut draining = false;
    loop {
        let deadline = batcher.deadline();
        let sealed = tokio::select! {
            item = intake.recv() => match item {
                Some((partition, standing, pending)) => {
                    let bytes = pending.batch.as_bytes().clone();
                    let now = store.clock.now();
                    let sealed = batcher.push(now, partition, bytes, standing, pending);
                    if draining { sealed.or_else(|| batcher.seal()) } else { sealed }
                }
                None => {
                    if let Some(sealed) = batcher.seal() {
                        let _ = uploads.send(start_upload(sealed, store.clone())).await;
                    }
                    return;
                }
            },
            _ = sleep_until(&store.clock, deadline), if deadline.is_some() => batcher.poll(store.clock.now()),
            _ = drain.started(), if !draining => {
                draining = true;
                batcher.seal()
            }
        };
        if let Some(sealed) = sealed {
            // A full upload queue blocks intake: backpressure instead of growth.
            if uploads
                .send(start_upload(sealed, store.clone()))
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

async fn sleep_until(clock: &Clock, deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        clock.sleep_until(deadline).await;
    }
}

/// Where sealed objects go: the object store, and the read tiers that serve fresh reads; with the
/// clock and generator their keys are made from.
#[derive(Clone)]
struct Storage {
    client: Arc<ObjectClient>,
    read_cache: ReadCache,
    clock: Clock,
    rng: Rng,
    metrics: Arc<PipelineMetrics>,
}

fn start_upload(sealed: Sealed<AwaitingCommit>, store: Storage) -> Upload {
    store.metrics.object_sealed(sealed.reason, sealed.bytes);
    tokio::spawn(async move {
        let created_ms = store.clock.now_ms();
        let key = new_object_key(created_ms, &store.rng);
        let chunks: Vec<_> = sealed
            .chunks
            .iter()
            .map(|(tp, batches)| (*tp, batches.iter().map(|(b, _)| b.clone()).collect()))
            .collect();
        let (object, layouts) = encode_object(created_ms, &chunks);
        let result = match store.client.put(key.as_str(), object.clone()).await {
            Ok(()) => {
                // Cached before the commit makes it visible, so fresh fetches never miss.
                store.read_cache.admit_upload(&key, &object).await;
                Ok(layouts)
            }
            Err(e) => Err(ProduceError::Storage(Arc::new(e))),
        };
        (sealed, key, result)
    })
}

async fn run_committer(
    mut uploads: mpsc::Receiver<Upload>,
    metadata: MetadataStore,
    clock: Clock,
    metrics: Arc<PipelineMetrics>,
) {
    while let Some(upload) = uploads.recv().await {
        let (sealed, key, result) = match upload.await {
            Ok(done) => done,
            Err(e) => {
                tracing::error!(error = %e, "an upload task failed; its producers time out and retry");
                continue;
            }
        };
        let layouts = match result {
            Ok(layouts) => layouts,
            Err(e) => {
                tracing::warn!(object = %key, error = %ErrorChain(&e), "object upload failed; failing its batches");
                fail_all(sealed, e);
                continue;
            }
        };
        commit(sealed, key, layouts, &metadata, &clock, &metrics).await;
    }
}

fn fail_all(sealed: Sealed<AwaitingCommit>, error: ProduceError) {
    for (_, batches) in sealed.chunks {
        for (_, pending) in batches {
            let _ = pending.reply.send(Err(error.clone()));
        }
    }
}

async fn commit(
    sealed: Sealed<AwaitingCommit>,
    key: ObjectKey,
    layouts: Vec<object::ChunkLayout>,
    metadata: &MetadataStore,
    clock: &Clock,
    metrics: &PipelineMetrics,
) {
    let partitions = sealed
        .chunks
        .iter()
        .zip(&layouts)
        .map(|((tp, batches), layout)| PartitionBatches {
            partition: *tp,
            batches: batches
                .iter()
                .zip(&layout.batches)
                .map(|((_, pending), &(byte_start, byte_len))| {
                    let b = &pending.batch;
                    CommittedBatch {
                        byte_start,
                        byte_len,
                        offset_count: b.offset_count(),
                        max_timestamp: b.max_timestamp(),
                        producer_id: ProducerId(b.producer_id()),
                        producer_epoch: ProducerEpoch(b.producer_epoch()),
                        base_sequence: b.base_sequence(),
                        last_sequence: b.last_sequence(),
                    }
                })
                .collect(),
        })
        .collect();
    let started = clock.now();
    let committed = metadata
        .write(CommitObject {
            object_key: key.clone(),
            partitions,
        })
        .await;
    metrics
        .commit_latency
        .observe(started.elapsed().as_secs_f64());
    let per_partition = match committed {
        Ok(per_partition) => per_partition,
        Err(e) => {
            tracing::error!(object = %key, error = %ErrorChain(&e), "metadata commit failed");
            fail_all(sealed, ProduceError::Metadata(Arc::new(e)));
            return;
        }
    };
    for ((_, batches), outcomes) in sealed.chunks.into_iter().zip(per_partition) {
        for ((_, pending), outcome) in batches.into_iter().zip(outcomes) {
            let _ = pending.reply.send(Ok(outcome));
        }
    }
}
