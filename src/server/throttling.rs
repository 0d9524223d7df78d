//! Client quotas applied to requests: who a request counts against, what it adds to their
//! usage, and the throttle time it earns (`quotas::meter` measures; this reads the quotas in
//! force and the agent's clock).
//!
//! A throttled response carries its `throttle_time_ms`, and its connection then reads
//! nothing for that long (`connection`), so a client that ignores the field is held anyway.

use super::api::{Ctx, Throttle};
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

/// How long to hold a new connection from `ip` before closing it unserved (ms): 0 to serve it.
pub fn admit_connection(broker: &Broker, ip: std::net::IpAddr) -> u64 {
    let now = broker.clock.monotonic_ms();
    broker
        .quota_meter
        .admit_connection(&quotas(broker), ip, now)
}

/// Kafka's controller mutation quota as one request meets it (KIP-599): each topic's
/// partitions created or deleted take the client's tokens; once they are owed, a strict
/// request (from the version Kafka names) is refused topic by topic with
/// THROTTLING_QUOTA_EXCEEDED, an older one goes ahead, and either is answered with the hold.
pub struct Mutations<'c> {
    broker: &'c Broker,
    who: Who<'c>,
    throttle: &'c Throttle,
    strict: bool,
}

/// Kafka's message of THROTTLING_QUOTA_EXCEEDED.
pub const THROTTLED_MESSAGE: &str = "The throttling quota has been exceeded.";

impl<'c> Mutations<'c> {
    /// The quota of `ctx`'s client, strict from version `strict_since` on.
    pub fn of<'a: 'c>(ctx: &'c Ctx<'a>, strict_since: i16) -> Mutations<'c> {
        Mutations {
            broker: ctx.broker.as_ref(),
            who: who(ctx),
            throttle: &ctx.throttle,
            strict: ctx.version >= strict_since,
        }
    }

    /// Whether a change of `partitions` may go ahead: `false` when the request is strict and
    /// the client's tokens are owed (the change is refused). A change that goes ahead takes
    /// its tokens.
    pub fn admit(&self, partitions: u64) -> bool {
        let (broker, who) = (self.broker, self.who);
        let now = broker.clock.monotonic_ms();
        let quotas = quotas(broker);
        let meter = &broker.quota_meter;
        let kind = QuotaKind::ControllerMutation;
        let owed = meter.mutation_throttle(&quotas, who, now);
        if owed > 0 && self.strict {
            meter.count_throttle(kind, owed);
            self.throttle.at_least(owed);
            return false;
        }
        let held = meter.take_mutations(&quotas, who, partitions as f64, now);
        // A strict request that takes the tokens below zero goes ahead unheld; the next one
        // is refused (Kafka's StrictControllerMutationQuota).
        if !self.strict {
            meter.count_throttle(kind, held);
            self.throttle.at_least(held);
        }
        true
    }
}
