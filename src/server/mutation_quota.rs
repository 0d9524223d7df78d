//! Kafka's controller mutation quota as one request meets it (KIP-599), for the handlers that
//! create and delete partitions (CreateTopics, CreatePartitions, DeleteTopics).

use super::api::Ctx;
use super::broker::Broker;
use super::throttling::{Throttle, quotas};
use crate::quotas::meter::{QuotaKind, Who};
use std::sync::atomic::{AtomicU64, Ordering};

/// Kafka's controller mutation quota as one request meets it (KIP-599): each topic's
/// partitions created or deleted take the client's tokens; once they are owed, a strict
/// request (from the version Kafka names) is refused topic by topic with
/// THROTTLING_QUOTA_EXCEEDED, an older one goes ahead, and either is answered with the hold.
pub struct Mutations<'c> {
    broker: &'c Broker,
    who: Who<'c>,
    throttle: &'c Throttle,
    strict: bool,
    /// The longest hold answered for this request, counted in the metrics once, when the
    /// request is done with it.
    held_ms: AtomicU64,
}

/// Kafka's message of THROTTLING_QUOTA_EXCEEDED.
pub const THROTTLED_MESSAGE: &str = "The throttling quota has been exceeded.";

impl<'c> Mutations<'c> {
    /// The quota of `ctx`'s client, strict from version `strict_since` on.
    pub fn of<'a: 'c>(ctx: &'c Ctx<'a>, strict_since: i16) -> Mutations<'c> {
        Mutations {
            broker: ctx.broker.as_ref(),
            who: ctx.client.who(),
            throttle: &ctx.throttle,
            strict: ctx.version >= strict_since,
            held_ms: AtomicU64::new(0),
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
        let owed = meter.mutation_throttle(&quotas, who, now);
        if owed > 0 && self.strict {
            self.hold(owed);
            return false;
        }
        let held = meter.take_mutations(&quotas, who, partitions as f64, now);
        // A strict request that takes the tokens below zero goes ahead unheld; the next one
        // is refused (Kafka's StrictControllerMutationQuota).
        if !self.strict {
            self.hold(held);
        }
        true
    }

    fn hold(&self, ms: u64) {
        self.held_ms.fetch_max(ms, Ordering::Relaxed);
        self.throttle.at_least(ms);
    }
}

impl Drop for Mutations<'_> {
    fn drop(&mut self) {
        let held = *self.held_ms.get_mut();
        if held > 0 {
            let kind = QuotaKind::ControllerMutation;
            let meter = &self.broker.quota_meter;
            meter.count_throttle(&quotas(self.broker), kind, self.who, held);
        }
    }
}
