//! `ObjectClient`: floe's one door to the object store.
//!
//! Every request goes through here: the optional injected latency and faults (`chaos`), a
//! per-attempt timeout, metrics for every attempt, and retries with backoff and jitter within a
//! deadline (`retry`). Ranged GETs are checked for length, so a short read is retried rather
//! than served. The store below is any `object_store` implementation (S3, GCS, Azure, local
//! filesystem, memory).

use super::chaos::{Fault, FaultPlan, LatencyModel, Operation, SplitMix64};
use super::metrics::ObjectStoreMetrics;
use super::retry::RetryPolicy;
use crate::clock::Clock;
use crate::random::Rng;
use bytes::Bytes;
use futures::TryStreamExt;
use object_store::{GetOptions, ObjectStore, ObjectStoreExt, PutPayload, path::Path};
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why one attempt failed.
#[derive(Debug, thiserror::Error)]
pub enum AttemptError {
    #[error(transparent)]
    Store(#[from] object_store::Error),
    #[error("injected fault: {}", .0.name())]
    Injected(Fault),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("ranged GET returned {got} of {wanted} bytes")]
    Short { got: usize, wanted: usize },
}

impl AttemptError {
    /// Server errors, throttling, timeouts, resets and short reads are worth another attempt;
    /// a missing object or a refused credential is not.
    fn is_retriable(&self) -> bool {
        match self {
            AttemptError::Store(e) => !matches!(
                e,
                object_store::Error::NotFound { .. }
                    | object_store::Error::InvalidPath { .. }
                    | object_store::Error::NotSupported { .. }
                    | object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. }
                    | object_store::Error::NotImplemented { .. }
                    | object_store::Error::PermissionDenied { .. }
                    | object_store::Error::Unauthenticated { .. }
                    | object_store::Error::UnknownConfigurationKey { .. }
            ),
            _ => true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ObjectStoreError {
    /// Every attempt failed transiently until the retry policy gave up.
    #[error("{op} {key} failed after {attempts} attempts in {elapsed:?}")]
    Exhausted {
        op: &'static str,
        key: String,
        attempts: u32,
        elapsed: Duration,
        #[source]
        last: AttemptError,
    },
    /// The store refused the request in a way another attempt cannot change.
    #[error("{op} {key} failed")]
    Permanent {
        op: &'static str,
        key: String,
        #[source]
        cause: AttemptError,
    },
    #[error("probe of the object store {store} failed")]
    Probe {
        store: String,
        #[source]
        cause: Box<ObjectStoreError>,
    },
    #[error("probe of the object store {store} failed: the probe object read back differently")]
    ProbeMismatch { store: String },
    /// A read wanted bytes past the object's end (the index and the object disagree).
    #[error("object {key} holds {size} bytes, a read wanted bytes up to {wanted_end}")]
    PastTheEnd {
        key: String,
        size: u64,
        wanted_end: u64,
    },
    /// One failure answered to every read that waited on the same request.
    #[error(transparent)]
    Shared(Arc<ObjectStoreError>),
}

impl ObjectStoreError {
    /// The object does not exist (a delete of an object already deleted, say).
    pub fn is_not_found(&self) -> bool {
        match self {
            ObjectStoreError::Shared(inner) => inner.is_not_found(),
            other => matches!(
                other,
                ObjectStoreError::Permanent {
                    cause: AttemptError::Store(object_store::Error::NotFound { .. }),
                    ..
                }
            ),
        }
    }
}

/// Injected latency and faults, with the randomness they draw from.
pub struct Chaos {
    pub latency: Option<LatencyModel>,
    pub faults: Option<FaultPlan>,
    rng: Mutex<SplitMix64>,
}

impl Chaos {
    pub fn new(latency: Option<LatencyModel>, faults: Option<FaultPlan>, seed: u64) -> Chaos {
        Chaos {
            latency,
            faults,
            rng: Mutex::new(SplitMix64::new(seed)),
        }
    }

    fn draw<T>(&self, f: impl FnOnce(&mut SplitMix64) -> T) -> T {
        let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut rng)
    }

    /// The modelled time to move `bytes` (the size part of the latency alone).
    fn transfer(&self, op: Operation, bytes: u64) -> Duration {
        self.latency
            .map_or(Duration::ZERO, |m| m.profile(op).transfer(bytes))
    }

    /// The latency to add and the fault to inject for one attempt.
    fn plan(&self, op: Operation, bytes: u64) -> (Duration, Option<Fault>) {
        self.draw(|rng| {
            let delay = self.latency.map_or(Duration::ZERO, |m| {
                m.profile(op).sample(bytes, rng.normal())
            });
            let fault = self
                .faults
                .as_ref()
                .and_then(|f| f.pick(op, rng.uniform(), rng.uniform()));
            (delay, fault)
        })
    }
}

pub struct ObjectClient {
    store: Arc<dyn ObjectStore>,
    retry: RetryPolicy,
    chaos: Chaos,
    metrics: Arc<ObjectStoreMetrics>,
    /// Names the store in errors and logs (e.g. `s3://bucket/prefix at http://127.0.0.1:8333`).
    description: String,
    clock: Clock,
    /// Retry jitter (separate from the chaos generator, so faults repeat whatever retries do).
    jitter: Rng,
}

impl ObjectClient {
    pub fn new(
        store: Arc<dyn ObjectStore>,
        description: String,
        retry: RetryPolicy,
        chaos: Chaos,
        clock: Clock,
        jitter: Rng,
    ) -> ObjectClient {
        ObjectClient {
            store,
            retry,
            chaos,
            metrics: Arc::new(ObjectStoreMetrics::default()),
            description,
            clock,
            jitter,
        }
    }

    /// A client of the same store, with the same retries and injected latency and faults (from
    /// its own seed), that counts its requests apart: background jobs use one, so their cost
    /// shows beside produce and fetch rather than inside them.
    pub fn with_own_metrics(&self, chaos_seed: u64) -> ObjectClient {
        ObjectClient {
            store: self.store.clone(),
            retry: self.retry.clone(),
            chaos: Chaos::new(self.chaos.latency, self.chaos.faults.clone(), chaos_seed),
            metrics: Arc::new(ObjectStoreMetrics::default()),
            description: self.description.clone(),
            clock: self.clock.clone(),
            jitter: self.jitter.clone(),
        }
    }

    pub fn metrics(&self) -> &Arc<ObjectStoreMetrics> {
        &self.metrics
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<(), ObjectStoreError> {
        let path = Path::from(key);
        self.with_retries(Operation::Put, key, || async {
            let (delay, fault) = self.chaos.plan(Operation::Put, bytes.len() as u64);
            self.inject_before(delay, fault).await?;
            let put = self.store.put(&path, PutPayload::from_bytes(bytes.clone()));
            self.clock
                .timeout(self.retry.request_timeout, put)
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            if fault == Some(Fault::LostPutResponse) {
                return Err(AttemptError::Injected(Fault::LostPutResponse));
            }
            Ok(((), bytes.len() as u64))
        })
        .await
    }

    /// Exactly bytes `range` of the object (a range past its end is an error).
    pub async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes, ObjectStoreError> {
        let (bytes, size) = self.get_block(key, range.clone()).await?;
        if size < range.end {
            return Err(ObjectStoreError::PastTheEnd {
                key: key.to_string(),
                size,
                wanted_end: range.end,
            });
        }
        Ok(bytes)
    }

    /// Bytes `range` of the object, or fewer where the object ends first, with the object's
    /// size: the GET of an aligned block (or of a whole object: `0..` any larger end), whose
    /// end the reader does not know. The length is checked against what the store says it
    /// returned, so a short read is still retried.
    pub async fn get_block(
        &self,
        key: &str,
        range: Range<u64>,
    ) -> Result<(Bytes, u64), ObjectStoreError> {
        let path = Path::from(key);
        self.with_retries(Operation::Get, key, || async {
            // The size is known only from the answer: the modelled transfer time follows it.
            let (delay, fault) = self.chaos.plan(Operation::Get, 0);
            self.inject_before(delay, fault).await?;
            let options = GetOptions::new().with_range(Some(range.clone()));
            let get = async {
                let result = self.store.get_opts(&path, options).await?;
                let (returned, size) = (result.range.clone(), result.meta.size);
                Ok::<_, object_store::Error>((result.bytes().await?, returned, size))
            };
            let (mut bytes, returned, size) = self
                .clock
                .timeout(self.retry.request_timeout, get)
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            if fault == Some(Fault::ShortGet) {
                bytes.truncate(bytes.len() / 2);
            }
            let transfer = self.chaos.transfer(Operation::Get, bytes.len() as u64);
            if !transfer.is_zero() {
                self.clock.sleep(transfer).await;
            }
            let wanted = range.start..range.end.min(size);
            if returned != wanted || bytes.len() as u64 != wanted.end - wanted.start {
                return Err(AttemptError::Short {
                    got: bytes.len(),
                    wanted: (wanted.end - wanted.start) as usize,
                });
            }
            let n = bytes.len() as u64;
            Ok(((bytes, size), n))
        })
        .await
    }

    pub async fn delete(&self, key: &str) -> Result<(), ObjectStoreError> {
        let path = Path::from(key);
        self.with_retries(Operation::Delete, key, || async {
            let (delay, fault) = self.chaos.plan(Operation::Delete, 0);
            self.inject_before(delay, fault).await?;
            self.clock
                .timeout(self.retry.request_timeout, self.store.delete(&path))
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            Ok(((), 0))
        })
        .await
    }

    /// Object keys under `prefix` (one LIST request per page, as the store pages them).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, ObjectStoreError> {
        let path = Path::from(prefix);
        self.with_retries(Operation::List, prefix, || async {
            let (delay, fault) = self.chaos.plan(Operation::List, 0);
            self.inject_before(delay, fault).await?;
            let listing = self
                .store
                .list(Some(&path))
                .map_ok(|m| m.location.to_string())
                .try_collect();
            let keys: Vec<String> = self
                .clock
                .timeout(self.retry.request_timeout, listing)
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            Ok((keys, 0))
        })
        .await
    }

    /// Writes, reads back and deletes a probe object: fails fast at start-up with the store's
    /// own error rather than at the first produce.
    pub async fn probe(&self) -> Result<(), ObjectStoreError> {
        let key = format!("probe/{}", self.jitter.uuid());
        let payload = Bytes::from_static(b"floe object store probe");
        let fail = |e: ObjectStoreError| ObjectStoreError::Probe {
            store: self.description.clone(),
            cause: Box::new(e),
        };
        self.put(&key, payload.clone()).await.map_err(fail)?;
        let read = self
            .get_range(&key, 0..payload.len() as u64)
            .await
            .map_err(fail)?;
        if read != payload {
            return Err(ObjectStoreError::ProbeMismatch {
                store: self.description.clone(),
            });
        }
        self.delete(&key).await.map_err(fail)
    }

    async fn inject_before(
        &self,
        delay: Duration,
        fault: Option<Fault>,
    ) -> Result<(), AttemptError> {
        if !delay.is_zero() {
            self.clock.sleep(delay).await;
        }
        match fault {
            Some(f @ (Fault::InternalError | Fault::SlowDown | Fault::ConnectionReset)) => {
                Err(AttemptError::Injected(f))
            }
            Some(Fault::Timeout) => {
                let hang = self
                    .chaos
                    .faults
                    .as_ref()
                    .map_or(Duration::ZERO, |f| f.timeout_hang);
                self.clock.sleep(hang.min(self.retry.request_timeout)).await;
                Err(AttemptError::Timeout(hang))
            }
            _ => Ok(()),
        }
    }

    /// Runs `attempt` until it succeeds, fails permanently, or the policy gives up. Each
    /// attempt yields its value and the bytes it moved (for metrics).
    async fn with_retries<T, F, Fut>(
        &self,
        op: Operation,
        key: &str,
        mut attempt: F,
    ) -> Result<T, ObjectStoreError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(T, u64), AttemptError>>,
    {
        let first = self.clock.now();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let started = self.clock.now();
            let result = attempt().await;
            let bytes = result.as_ref().map_or(0, |(_, n)| *n);
            self.metrics
                .record(op, bytes, started.elapsed(), result.is_ok());
            let error = match result {
                Ok((value, _)) => return Ok(value),
                Err(e) => e,
            };
            if !error.is_retriable() {
                return Err(ObjectStoreError::Permanent {
                    op: op.name(),
                    key: key.to_string(),
                    cause: error,
                });
            }
            let wait = self.retry.backoff(attempts, self.jitter.uniform());
            if !self.retry.may_retry(attempts, first.elapsed(), wait) {
                return Err(ObjectStoreError::Exhausted {
                    op: op.name(),
                    key: key.to_string(),
                    attempts,
                    elapsed: first.elapsed(),
                    last: error,
                });
            }
            tracing::debug!(op = op.name(), key, attempt = attempts, error = %error, "retrying object-store request");
            self.clock.sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn client(faults: &str, attempts: u32) -> ObjectClient {
        let retry = RetryPolicy {
            attempts_max: attempts,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(2),
            ..Default::default()
        };
        let chaos = Chaos::new(None, FaultPlan::parse(faults).unwrap(), 7);
        ObjectClient::new(
            Arc::new(InMemory::new()),
            "memory://".into(),
            retry,
            chaos,
            Clock::system(),
            Rng::seeded(7),
        )
    }

    #[tokio::test]
    async fn retries_through_every_injected_fault_kind() {
        let c = client("rate=0.5,hang=1ms", 50);
        for i in 0..40 {
            let key = format!("k{i}");
            let data = Bytes::from(vec![i as u8; 100]);
            c.put(&key, data.clone()).await.unwrap();
            assert_eq!(c.get_range(&key, 10..60).await.unwrap(), data.slice(10..60));
        }
        let put = c.metrics().operation(Operation::Put);
        assert!(put.errors > 0, "faults were injected");
        assert_eq!(
            put.requests - put.errors,
            40,
            "one successful PUT per object"
        );
        c.probe().await.unwrap();
    }

    #[tokio::test]
    async fn gives_up_after_the_attempt_limit_and_not_on_missing_objects() {
        let c = client("rate=1,kinds=503", 3);
        match c.put("x", Bytes::from_static(b"1")).await {
            Err(ObjectStoreError::Exhausted { attempts, .. }) => assert_eq!(attempts, 3),
            other => panic!("{other:?}"),
        }
        let c = client("none", 5);
        match c.get_range("missing", 0..1).await {
            Err(ObjectStoreError::Permanent { .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(
            c.metrics().operation(Operation::Get).requests,
            1,
            "no retry of a missing object"
        );
    }
}
