//! What each account has used on this agent, and the throttle time it has earned (Kafka's
//! `ClientQuotaManager`): one [`Rate`] per quota kind and account, kept only while it still
//! counts.
//!
//! Bounded: a rate whose samples have all aged out is forgotten (it measures zero, so nothing
//! is lost), and at most `ACCOUNTS_MAX` are kept; beyond that, new accounts go unmetered until
//! old ones age out, and are counted in `unmetered`.

use super::rate::{self, Rate};
use super::resolve::{Account, binding};
use super::{CONSUMER_BYTE_RATE, CONTROLLER_MUTATION_RATE, PRODUCER_BYTE_RATE};
use crate::metadata::state::client_quotas::ClientQuotas;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most accounts metered at once on one agent.
pub const ACCOUNTS_MAX: usize = 100_000;

/// The quotas floe enforces, each a rate per second of its own unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QuotaKind {
    /// Bytes of produce requests.
    Produce,
    /// Bytes of fetch responses.
    Fetch,
    /// Partitions created or deleted (CreateTopics, CreatePartitions, DeleteTopics).
    ControllerMutation,
}

impl QuotaKind {
    pub const ALL: [QuotaKind; 3] = [
        QuotaKind::Produce,
        QuotaKind::Fetch,
        QuotaKind::ControllerMutation,
    ];

    /// The quota key that bounds it.
    pub fn key(self) -> &'static str {
        match self {
            QuotaKind::Produce => PRODUCER_BYTE_RATE,
            QuotaKind::Fetch => CONSUMER_BYTE_RATE,
            QuotaKind::ControllerMutation => CONTROLLER_MUTATION_RATE,
        }
    }

    /// Kafka's name of the quota type, as its metrics name it.
    pub fn name(self) -> &'static str {
        match self {
            QuotaKind::Produce => "produce",
            QuotaKind::Fetch => "fetch",
            QuotaKind::ControllerMutation => "controller_mutation",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Who is asking, as quotas see them: the principal's user name and the request's client id.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub user: &'a str,
    pub client_id: &'a str,
}

/// Per-kind totals, for metrics.
#[derive(Debug, Default)]
pub struct KindTotals {
    /// Requests answered with a throttle time.
    pub throttled: AtomicU64,
    /// The throttle times answered, summed.
    pub throttle_ms: AtomicU64,
}

#[derive(Debug, Default)]
pub struct Meter {
    rates: Mutex<HashMap<(QuotaKind, Account), Rate>>,
    totals: [KindTotals; 3],
    /// Accounts left unmetered because `ACCOUNTS_MAX` were metered already.
    pub unmetered: AtomicU64,
}

impl Meter {
    /// Adds `value` to the usage of whoever `who` is counted as, if a quota binds them, and
    /// returns the throttle time (ms) they have earned: 0 within their quota.
    pub fn record(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
        value: f64,
        now_ms: i64,
    ) -> u64 {
        let Some((account, bound)) = binding(quotas, kind.key(), who.user, who.client_id) else {
            return 0;
        };
        let throttle = self.with_rate(kind, account, now_ms, |rate| {
            rate.record(value, now_ms);
            let observed = rate.measure(now_ms);
            rate::throttle_ms(observed, bound, rate.window_ms(now_ms))
        });
        let throttle = throttle.unwrap_or(0);
        if throttle > 0 {
            let totals = &self.totals[kind.index()];
            totals.throttled.fetch_add(1, Ordering::Relaxed);
            totals.throttle_ms.fetch_add(throttle, Ordering::Relaxed);
        }
        throttle
    }

    /// Takes back a value recorded for a request that was answered without it (a throttled
    /// fetch answers empty).
    pub fn unrecord(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
        value: f64,
        now_ms: i64,
    ) {
        if let Some((account, _)) = binding(quotas, kind.key(), who.user, who.client_id) {
            self.with_rate(kind, account, now_ms, |rate| rate.record(-value, now_ms));
        }
    }

    /// Whether `who` is over their quota already, without recording anything (Kafka's strict
    /// controller mutation quota refuses a request then).
    pub fn exceeded(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
        now_ms: i64,
    ) -> bool {
        let Some((account, bound)) = binding(quotas, kind.key(), who.user, who.client_id) else {
            return false;
        };
        let rates = self.rates.lock().expect("quota meter lock");
        rates
            .get(&(kind, account))
            .is_some_and(|rate| rate.clone().measure(now_ms) > bound)
    }

    /// The most `who` may take in one request (what one fetch may return), if a quota binds.
    pub fn most_at_once(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
    ) -> Option<f64> {
        binding(quotas, kind.key(), who.user, who.client_id)
            .map(|(_, bound)| rate::most_at_once(bound))
    }

    /// Runs `f` on the account's rate, made if need be; `None` when the account cannot be
    /// metered (too many are).
    fn with_rate<T>(
        &self,
        kind: QuotaKind,
        account: Account,
        now_ms: i64,
        f: impl FnOnce(&mut Rate) -> T,
    ) -> Option<T> {
        let mut rates = self.rates.lock().expect("quota meter lock");
        let key = (kind, account);
        if !rates.contains_key(&key) {
            if rates.len() >= ACCOUNTS_MAX {
                rates.retain(|_, rate| !rate.is_idle(now_ms));
            }
            if rates.len() >= ACCOUNTS_MAX {
                self.unmetered.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            rates.insert(key.clone(), Rate::new(now_ms));
        }
        rates.get_mut(&key).map(f)
    }

    pub fn totals(&self, kind: QuotaKind) -> &KindTotals {
        &self.totals[kind.index()]
    }

    /// How many accounts are metered now.
    pub fn accounts(&self) -> usize {
        self.rates.lock().expect("quota meter lock").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::client_quotas::{EntityType, QuotaEntity, QuotaValue};

    fn quotas(key: &str, value: f64) -> ClientQuotas {
        let mut quotas = ClientQuotas::default();
        let entity = QuotaEntity(vec![(EntityType::User, None)]);
        quotas.alter_for_test(&entity, &[(key.to_string(), Some(QuotaValue(value)))]);
        quotas
    }

    const ALICE: Who = Who {
        user: "alice",
        client_id: "app",
    };
    const BOB: Who = Who {
        user: "bob",
        client_id: "app",
    };

    #[test]
    fn a_default_user_quota_gives_each_user_their_own_rate() {
        let quotas = quotas(PRODUCER_BYTE_RATE, 1_000.0);
        let meter = Meter::default();
        // 10 s of quota at once passes; the next byte is over.
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, ALICE, 10_000.0, 0),
            0
        );
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, ALICE, 5_000.0, 0),
            5_000
        );
        // Bob has a rate of his own.
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, BOB, 10_000.0, 0),
            0
        );
        // Fetches are not bound by a produce quota.
        assert_eq!(meter.record(&quotas, QuotaKind::Fetch, ALICE, 1e9, 0), 0);
        assert_eq!(meter.totals[0].throttled.load(Ordering::Relaxed), 1);
        assert_eq!(meter.accounts(), 2);
    }

    #[test]
    fn unrecording_and_strict_checks() {
        let quotas = quotas(CONSUMER_BYTE_RATE, 1_000.0);
        let meter = Meter::default();
        assert_eq!(
            meter.record(&quotas, QuotaKind::Fetch, ALICE, 20_000.0, 0),
            10_000
        );
        assert!(meter.exceeded(&quotas, QuotaKind::Fetch, ALICE, 0));
        meter.unrecord(&quotas, QuotaKind::Fetch, ALICE, 20_000.0, 0);
        assert!(!meter.exceeded(&quotas, QuotaKind::Fetch, ALICE, 0));
        assert_eq!(
            meter.most_at_once(&quotas, QuotaKind::Fetch, ALICE),
            Some(10_000.0)
        );
        assert_eq!(meter.most_at_once(&quotas, QuotaKind::Produce, ALICE), None);
    }
}
