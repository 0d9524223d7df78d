//! Client quotas applied to requests: what a request adds to its client's usage, and the
//! throttle time it earns (`quotas::meter` measures; this reads the quotas in force and the
//! agent's clock). The controller mutation quota is `mutation_quota`.
//!
//! A throttled response carries its `throttle_time_ms`, and its connection then reads
//! nothing for that long (`connection`), so a client that ignores the field is held anyway.

use super::broker::Broker;
use super::busy::Busy;
use crate::metadata::state::client_quotas::ClientQuotas;
use crate::quotas::meter::{QuotaKind, Who};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The quotas in force (a cheap copy of the replicated state's).
pub fn quotas(broker: &Broker) -> ClientQuotas {
    broker.metadata.read(|s| s.client_quotas().clone())
}

/// Adds `value` to `who`'s usage of `kind` and returns the throttle time (ms) earned.
pub fn record(broker: &Broker, kind: QuotaKind, who: Who<'_>, value: f64) -> u64 {
    let now = broker.clock.monotonic_ms();
    broker
        .quota_meter
        .record(&quotas(broker), kind, who, value, now)
}

/// Counts a fetch's bytes, once served, in its quota entity's metrics.
pub fn count_served_fetch(broker: &Broker, who: Who<'_>, bytes: f64) {
    broker.quota_meter.count_served(&quotas(broker), who, bytes)
}

/// Takes back what `record` added, for a request answered without it.
pub fn unrecord(broker: &Broker, kind: QuotaKind, who: Who<'_>, value: f64) {
    let now = broker.clock.monotonic_ms();
    broker
        .quota_meter
        .unrecord(&quotas(broker), kind, who, value, now)
}

/// Whether recording `value` for `who` now would earn a throttle time (nothing is recorded).
pub fn would_exceed(broker: &Broker, kind: QuotaKind, who: Who<'_>, value: f64) -> bool {
    let now = broker.clock.monotonic_ms();
    broker
        .quota_meter
        .would_exceed(&quotas(broker), kind, who, value, now)
}

/// Whether a quota of `kind` binds `who`.
pub fn binds(broker: &Broker, kind: QuotaKind, who: Who<'_>) -> bool {
    broker.quota_meter.binds(&quotas(broker), kind, who)
}

/// Kafka's `NanosToPercentagePerSecond`: a nanosecond of one thread's time, as a percentage
/// of that thread's second.
const PERCENT_PER_NANO: f64 = 100.0 / 1e9;

/// Charges `who`'s `request_percentage` with the time their request kept the agent busy (once
/// per request: later calls charge nothing) and returns the throttle time earned (ms, at most
/// one window).
pub fn charge_request(broker: &Broker, who: Who<'_>, busy: &Busy) -> u64 {
    let Some(spent) = busy.take() else {
        return 0;
    };
    let percent = spent.as_nanos() as f64 * PERCENT_PER_NANO;
    record(broker, QuotaKind::Request, who, percent)
}

/// The most one request may take of `kind` (one fetch's bytes), if a quota binds `who`.
pub fn most_at_once(broker: &Broker, kind: QuotaKind, who: Who<'_>) -> Option<f64> {
    broker.quota_meter.most_at_once(&quotas(broker), kind, who)
}

/// How long to hold a new connection from `ip` before closing it unserved (ms): 0 to serve it.
pub fn admit_connection(broker: &Broker, ip: std::net::IpAddr) -> u64 {
    let now = broker.clock.monotonic_ms();
    broker
        .quota_meter
        .admit_connection(&quotas(broker), ip, now)
}

/// The throttle time a handler answers in its response's `throttle_time_ms` (a client over a
/// quota), which its connection is then held to: the handler sets it, and serving reads it
/// once the response is ready.
#[derive(Debug, Clone, Default)]
pub struct Throttle(Arc<AtomicU64>);

impl Throttle {
    /// Answers at least `ms`.
    pub fn at_least(&self, ms: u64) {
        self.0.fetch_max(ms, Ordering::Relaxed);
    }

    pub fn ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// The field's value (Kafka's int32 milliseconds).
    pub fn field(&self) -> i32 {
        i32::try_from(self.ms()).unwrap_or(i32::MAX)
    }

    /// How long the connection is held: what the client is told, no more.
    pub fn duration(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.field().max(0) as u64)
    }
}
