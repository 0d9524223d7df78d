//! `/readyz`: whether the object store answers, probed (a PUT, GET and DELETE) at most once
//! per `--ready-probe-interval` however often the route is called; callers in between get
//! the last result, and callers during a probe wait for it instead of starting their own.

use crate::clock::{Clock, Instant};
use crate::store::ObjectClient;
use crate::telemetry::ErrorChain;
use std::time::Duration;

/// How long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

pub struct Readiness {
    interval: Duration,
    last: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Readiness {
    pub fn new(interval: Duration) -> Readiness {
        Readiness {
            interval,
            last: tokio::sync::Mutex::new(None),
        }
    }

    /// The object store's readiness: the last probe's if it is recent, else a new probe's.
    pub async fn check(&self, store: &ObjectClient, clock: &Clock) -> Result<(), String> {
        let mut last = self.last.lock().await;
        if let Some((at, result)) = last.as_ref()
            && clock.now().saturating_duration_since(*at) < self.interval
        {
            return result.clone();
        }
        let result = match clock.timeout(PROBE_TIMEOUT, store.probe()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ErrorChain(&e).to_string()),
            Err(_) => Err(format!("no answer within {PROBE_TIMEOUT:?}")),
        };
        *last = Some((clock.now(), result.clone()));
        result
    }
}
