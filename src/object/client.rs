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
use bytes::Bytes;
use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, path::Path};
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why one attempt failed.
#[derive(Debug, thiserror::Error)]
enum AttemptError {
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

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("{op} {key} failed after {attempts} attempts in {elapsed:?}: {last}")]
    Exhausted {
        op: &'static str,
        key: String,
        attempts: u32,
        elapsed: Duration,
        last: String,
    },
    #[error("{op} {key} failed: {reason}")]
    Permanent {
        op: &'static str,
        key: String,
        reason: String,
    },
    #[error("probe of the object store failed: {0}")]
    Probe(String),
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
}

impl ObjectClient {
    pub fn new(
        store: Arc<dyn ObjectStore>,
        description: String,
        retry: RetryPolicy,
        chaos: Chaos,
    ) -> ObjectClient {
        ObjectClient {
            store,
            retry,
            chaos,
            metrics: Arc::new(ObjectStoreMetrics::default()),
            description,
        }
    }

    pub fn metrics(&self) -> &Arc<ObjectStoreMetrics> {
        &self.metrics
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<(), StoreError> {
        let path = Path::from(key);
        self.with_retries(Operation::Put, key, || async {
            let (delay, fault) = self.chaos.plan(Operation::Put, bytes.len() as u64);
            self.inject_before(delay, fault).await?;
            let put = self.store.put(&path, PutPayload::from_bytes(bytes.clone()));
            tokio::time::timeout(self.retry.request_timeout, put)
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            if fault == Some(Fault::LostPutResponse) {
                return Err(AttemptError::Injected(Fault::LostPutResponse));
            }
            Ok(((), bytes.len() as u64))
        })
        .await
    }

    pub async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes, StoreError> {
        let path = Path::from(key);
        let wanted = (range.end - range.start) as usize;
        self.with_retries(Operation::Get, key, || async {
            let (delay, fault) = self.chaos.plan(Operation::Get, wanted as u64);
            self.inject_before(delay, fault).await?;
            let get = self.store.get_range(&path, range.clone());
            let mut bytes = tokio::time::timeout(self.retry.request_timeout, get)
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            if fault == Some(Fault::ShortGet) {
                bytes.truncate(bytes.len() / 2);
            }
            if bytes.len() != wanted {
                return Err(AttemptError::Short {
                    got: bytes.len(),
                    wanted,
                });
            }
            let n = bytes.len() as u64;
            Ok((bytes, n))
        })
        .await
    }

    pub async fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = Path::from(key);
        self.with_retries(Operation::Delete, key, || async {
            let (delay, fault) = self.chaos.plan(Operation::Delete, 0);
            self.inject_before(delay, fault).await?;
            tokio::time::timeout(self.retry.request_timeout, self.store.delete(&path))
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            Ok(((), 0))
        })
        .await
    }

    /// Object keys under `prefix` (one LIST request per page, as the store pages them).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let path = Path::from(prefix);
        self.with_retries(Operation::List, prefix, || async {
            let (delay, fault) = self.chaos.plan(Operation::List, 0);
            self.inject_before(delay, fault).await?;
            let listing = self
                .store
                .list(Some(&path))
                .map_ok(|m| m.location.to_string())
                .try_collect();
            let keys: Vec<String> = tokio::time::timeout(self.retry.request_timeout, listing)
                .await
                .map_err(|_| AttemptError::Timeout(self.retry.request_timeout))??;
            Ok((keys, 0))
        })
        .await
    }

    /// Writes, reads back and deletes a probe object: fails fast at start-up with the store's
    /// own error rather than at the first produce.
    pub async fn probe(&self) -> Result<(), StoreError> {
        let key = format!("probe/{}", uuid::Uuid::new_v4());
        let payload = Bytes::from_static(b"floe object store probe");
        let fail = |e: StoreError| StoreError::Probe(format!("{}: {e}", self.description));
        self.put(&key, payload.clone()).await.map_err(fail)?;
        let read = self
            .get_range(&key, 0..payload.len() as u64)
            .await
            .map_err(fail)?;
        if read != payload {
            return Err(StoreError::Probe(format!(
                "{}: the probe object read back differently",
                self.description
            )));
        }
        self.delete(&key).await.map_err(fail)
    }

    async fn inject_before(
        &self,
        delay: Duration,
        fault: Option<Fault>,
    ) -> Result<(), AttemptError> {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
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
                tokio::time::sleep(hang.min(self.retry.request_timeout)).await;
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
    ) -> Result<T, StoreError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(T, u64), AttemptError>>,
    {
        let first = Instant::now();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let started = Instant::now();
            let result = attempt().await;
            let bytes = result.as_ref().map_or(0, |(_, n)| *n);
            self.metrics
                .record(op, bytes, started.elapsed(), result.is_ok());
            let error = match result {
                Ok((value, _)) => return Ok(value),
                Err(e) => e,
            };
            if !error.is_retriable() {
                return Err(StoreError::Permanent {
                    op: op.name(),
                    key: key.to_string(),
                    reason: error.to_string(),
                });
            }
            let wait = self
                .retry
                .backoff(attempts, self.chaos.draw(SplitMix64::uniform));
            if !self.retry.may_retry(attempts, first.elapsed(), wait) {
                return Err(StoreError::Exhausted {
                    op: op.name(),
                    key: key.to_string(),
                    attempts,
                    elapsed: first.elapsed(),
                    last: error.to_string(),
                });
            }
            tracing::debug!(op = op.name(), key, attempt = attempts, error = %error, "retrying object-store request");
            tokio::time::sleep(wait).await;
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
        ObjectClient::new(Arc::new(InMemory::new()), "memory://".into(), retry, chaos)
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
            Err(StoreError::Exhausted { attempts, .. }) => assert_eq!(attempts, 3),
            other => panic!("{other:?}"),
        }
        let c = client("none", 5);
        match c.get_range("missing", 0..1).await {
            Err(StoreError::Permanent { .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(
            c.metrics().operation(Operation::Get).requests,
            1,
            "no retry of a missing object"
        );
    }
}
