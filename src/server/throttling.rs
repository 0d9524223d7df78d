//! Client quotas applied to requests: who a request counts against, what it adds to their
//! usage, and the throttle time it earns (`quotas::meter` measures; this reads the quotas in
//! force and the agent's clock).
//!
//! A throttled response carries its `throttle_time_ms`, and its connection then reads
//! nothing for that long (`connection`), so a client that ignores the field is held anyway.

use super::api::Ctx;
use super::broker::Broker;
use crate::metadata::state::client_quotas::ClientQuotas;
use crate::quotas::meter::{QuotaKind, Who};
use crate::quotas::resolve::user_name;

/// Who a handler's request counts against.
pub fn who<'a>(ctx: &Ctx<'a>) -> Who<'a> {
    Who {
        user: user_name(ctx.client.principal),
        client_id: ctx.client.id.unwrap_or(""),
    }
}

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

/// Takes back what `record` added, for a request answered without it.
pub fn unrecord(broker: &Broker, kind: QuotaKind, who: Who<'_>, value: f64) {
    let now = broker.clock.monotonic_ms();
    broker
        .quota_meter
        .unrecord(&quotas(broker), kind, who, value, now)
}

/// The most one request may take of `kind` (one fetch's bytes), if a quota binds `who`.
pub fn most_at_once(broker: &Broker, kind: QuotaKind, who: Who<'_>) -> Option<f64> {
    broker.quota_meter.most_at_once(&quotas(broker), kind, who)
}

/// Whether `who` is over their quota of `kind` already.
pub fn exceeded(broker: &Broker, kind: QuotaKind, who: Who<'_>) -> bool {
    let now = broker.clock.monotonic_ms();
    broker.quota_meter.exceeded(&quotas(broker), kind, who, now)
}
