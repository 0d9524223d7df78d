//! What each account has used on this agent, and the throttle time it has earned (Kafka's
//! `ClientQuotaManager`): one [`TokenBucket`] per quota kind and account, kept only while it
//! still counts.
//!
//! Behind a load balancer, an account's usage on the other agents is taken from its tokens too
//! (`server::quota_sharing` passes it on): what was used here since it last passed it on is
//! [`Meter::take_unshared`], what others used is [`Meter::add_shared`].
//!
//! Bounded: at most `ACCOUNTS_MAX` accounts and as many ips are kept. When one map is full,
//! what no longer counts (full buckets) is forgotten, at most once a window so a flood of new
//! names costs no more than one sweep a second; beyond that, new names go unmetered until old
//! ones refill (a tenant flooding names cannot push a metered one out), counted in
//! `unmetered`.

pub use super::kind::QuotaKind;
use super::resolve::{Account, Binding, binding, ip_binding};
use super::token_bucket::{self, TokenBucket, WINDOW_MS};
use super::usage_by_entity::UsageByEntity;
use crate::metadata::state::client_quotas::ClientQuotas;
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The most accounts metered at once on one agent.
pub const ACCOUNTS_MAX: usize = 100_000;

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

/// One account's usage of one quota kind on one agent, passed to the others.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub kind: QuotaKind,
    pub account: Account,
    pub value: f64,
    /// The quota that bound the account where it was used: an agent that has not metered the
    /// account yet refills its tokens at this rate until it meets the account itself.
    pub quota: f64,
}

#[derive(Debug)]
struct Metered {
    bucket: TokenBucket,
    /// Taken here since last passed on.
    unshared: f64,
}

#[derive(Debug, Default)]
pub struct Meter {
    accounts: Mutex<HashMap<(QuotaKind, Account), Metered>>,
    /// Connections opened, by ip.
    ips: Mutex<HashMap<IpAddr, TokenBucket>>,
    /// When a full map was last swept of what no longer counts.
    swept_ms: AtomicI64,
    totals: [KindTotals; QuotaKind::ALL.len()],
    /// Accounts left unmetered because `ACCOUNTS_MAX` were metered already.
    pub unmetered: AtomicU64,
    /// What each entity's clients used here, and their throttles, for metrics.
    pub by_entity: UsageByEntity,
}

impl Meter {
    /// Adds `value` to the usage of whoever `who` is counted as, if a quota binds them, and
    /// returns the throttle time (ms) they have earned: 0 within their quota. A request-time
    /// throttle is at most one window (Kafka's `ClientRequestQuotaManager` bounds it so), and
    /// request time owed beyond a burst is forgiven (Kafka's samples forget it as soon). A
    /// fetch's bytes count in the entity metrics only once it is served (`count_served`).
    pub fn record(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
        value: f64,
        now_ms: i64,
    ) -> u64 {
        let Some(Binding {
            account,
            quota,
            entity,
        }) = binding(quotas, kind.key(), who.user, who.client_id)
        else {
            return 0;
        };
        let throttle = self.with_account(kind, account, quota, now_ms, |metered| {
            metered.unshared += value;
            metered.bucket.take(value, quota, now_ms);
            if kind == QuotaKind::Request {
                metered.bucket.forgive_beyond_a_burst(quota);
            }
            metered.bucket.throttle_ms(quota, now_ms)
        });
        let mut throttle = throttle.unwrap_or(0);
        if kind == QuotaKind::Request {
            throttle = throttle.min(WINDOW_MS as u64);
        }
        let used = if kind == QuotaKind::Fetch { 0.0 } else { value };
        self.by_entity.add(kind, &entity, used, throttle);
        self.count_kind(kind, throttle);
        throttle
    }

    /// Counts a fetch's bytes in the entity metrics once it is served (a fetch over a quota is
    /// answered empty and its bytes taken back, so they count only then).
    pub fn count_served(&self, quotas: &ClientQuotas, who: Who<'_>, bytes: f64) {
        let kind = QuotaKind::Fetch;
        if let Some(bound) = binding(quotas, kind.key(), who.user, who.client_id) {
            self.by_entity.add(kind, &bound.entity, bytes, 0);
        }
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
        if let Some(bound) = binding(quotas, kind.key(), who.user, who.client_id) {
            let quota = bound.quota;
            self.with_account(kind, bound.account, quota, now_ms, |metered| {
                metered.unshared -= value;
                metered.bucket.take(-value, quota, now_ms);
            });
        }
    }

    /// Whether recording `value` now would put `who` over their quota (earn a throttle time),
    /// without recording anything. Bound by no quota, never.
    pub fn would_exceed(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
        value: f64,
        now_ms: i64,
    ) -> bool {
        let Some(bound) = binding(quotas, kind.key(), who.user, who.client_id) else {
            return false;
        };
        let accounts = self.accounts.lock().expect("quota meter lock");
        let tokens = match accounts.get(&(kind, bound.account)) {
            Some(metered) => metered.bucket.clone().tokens(bound.quota, now_ms),
            None => token_bucket::burst(bound.quota),
        };
        tokens - value < 0.0
    }

    /// Whether a quota of `kind` binds `who`.
    pub fn binds(&self, quotas: &ClientQuotas, kind: QuotaKind, who: Who<'_>) -> bool {
        binding(quotas, kind.key(), who.user, who.client_id).is_some()
    }

    /// The most `who` may take in one request (what one fetch may return), if a quota binds.
    pub fn most_at_once(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
    ) -> Option<f64> {
        binding(quotas, kind.key(), who.user, who.client_id)
            .map(|bound| token_bucket::most_at_once(bound.quota))
    }

    /// How long `who` is held for the partitions they created or deleted (ms): 0 unless their
    /// controller mutation tokens are owed.
    pub fn mutation_throttle(&self, quotas: &ClientQuotas, who: Who<'_>, now_ms: i64) -> u64 {
        let kind = QuotaKind::ControllerMutation;
        let Some(bound) = binding(quotas, kind.key(), who.user, who.client_id) else {
            return 0;
        };
        let mut accounts = self.accounts.lock().expect("quota meter lock");
        accounts
            .get_mut(&(kind, bound.account))
            .map_or(0, |metered| metered.bucket.throttle_ms(bound.quota, now_ms))
    }

    /// Takes `partitions` created or deleted from `who`'s controller mutation tokens, and
    /// returns the hold it leaves (ms).
    pub fn take_mutations(
        &self,
        quotas: &ClientQuotas,
        who: Who<'_>,
        partitions: f64,
        now_ms: i64,
    ) -> u64 {
        let kind = QuotaKind::ControllerMutation;
        let Some(bound) = binding(quotas, kind.key(), who.user, who.client_id) else {
            return 0;
        };
        let quota = bound.quota;
        self.by_entity.add(kind, &bound.entity, partitions, 0);
        self.with_account(kind, bound.account, quota, now_ms, |metered| {
            metered.unshared += partitions;
            metered.bucket.take(partitions, quota, now_ms);
            metered.bucket.throttle_ms(quota, now_ms)
        })
        .unwrap_or(0)
    }

    /// Counts a connection from `ip` against its `connection_creation_rate`, and returns how
    /// long to hold it before closing it unserved (ms; Kafka's throttle, at most one window),
    /// or 0 to serve it. A connection refused is not counted (as in Kafka).
    pub fn admit_connection(&self, quotas: &ClientQuotas, ip: IpAddr, now_ms: i64) -> u64 {
        let kind = QuotaKind::ConnectionCreation;
        let Some((entity, bound)) = ip_binding(quotas, ip) else {
            return 0;
        };
        let mut ips = self.ips.lock().expect("quota meter lock");
        let made = || TokenBucket::new(bound, now_ms);
        let full = |bucket: &mut TokenBucket| bucket.is_full(now_ms);
        let Some(bucket) = self.entry(&mut ips, ip.to_canonical(), now_ms, made, full) else {
            return 0;
        };
        bucket.take(1.0, bound, now_ms);
        let throttle = bucket.throttle_ms(bound, now_ms);
        if throttle == 0 {
            self.by_entity.add(kind, &entity, 1.0, 0);
            return 0;
        }
        bucket.take(-1.0, bound, now_ms);
        let held = throttle.min(WINDOW_MS as u64);
        self.by_entity.add(kind, &entity, 0.0, held);
        self.count_kind(kind, held);
        held
    }

    /// Counts a throttle time of `kind` answered to `who` (for metrics).
    pub fn count_throttle(
        &self,
        quotas: &ClientQuotas,
        kind: QuotaKind,
        who: Who<'_>,
        throttle: u64,
    ) {
        if throttle == 0 {
            return;
        }
        if let Some(bound) = binding(quotas, kind.key(), who.user, who.client_id) {
            self.by_entity.add(kind, &bound.entity, 0.0, throttle);
        }
        self.count_kind(kind, throttle);
    }

    /// Counts a throttle time of `kind` answered, in the per-kind totals.
    fn count_kind(&self, kind: QuotaKind, throttle: u64) {
        if throttle > 0 {
            let totals = &self.totals[kind.index()];
            totals.throttled.fetch_add(1, Ordering::Relaxed);
            totals.throttle_ms.fetch_add(throttle, Ordering::Relaxed);
        }
    }

    /// What was used here since this was last asked, to pass on to the other agents.
    pub fn take_unshared(&self) -> Vec<Usage> {
        let mut accounts = self.accounts.lock().expect("quota meter lock");
        let mut taken = Vec::new();
        for ((kind, account), metered) in accounts.iter_mut() {
            if metered.unshared != 0.0 {
                taken.push(Usage {
                    kind: *kind,
                    account: account.clone(),
                    value: std::mem::take(&mut metered.unshared),
                    quota: metered.bucket.quota(),
                });
            }
        }
        taken
    }

    /// Takes what another agent used from the accounts' tokens. An account is refilled at the
    /// quota it was last met with here, or, if it was never met here, at the one the other
    /// agent passed on (a quota that is not finite and positive makes no account: the usage
    /// counts only against accounts met here). Values that are not finite are dropped.
    pub fn add_shared(&self, usage: &[Usage], now_ms: i64) {
        let mut accounts = self.accounts.lock().expect("quota meter lock");
        for used in usage.iter().filter(|u| u.value.is_finite()) {
            let key = (used.kind, used.account.clone());
            let metered = if used.quota.is_finite() && used.quota > 0.0 {
                let made = fresh(used.quota, now_ms);
                self.entry(&mut accounts, key, now_ms, made, idle(now_ms))
            } else {
                accounts.get_mut(&key)
            };
            if let Some(metered) = metered {
                let quota = metered.bucket.quota();
                metered.bucket.take(used.value, quota, now_ms);
            }
        }
    }

    /// Runs `f` on the account's usage of a quota of `bound`, made if need be; `None` when the
    /// account cannot be metered (too many are).
    fn with_account<T>(
        &self,
        kind: QuotaKind,
        account: Account,
        bound: f64,
        now_ms: i64,
        f: impl FnOnce(&mut Metered) -> T,
    ) -> Option<T> {
        let mut accounts = self.accounts.lock().expect("quota meter lock");
        let (made, idle) = (fresh(bound, now_ms), idle(now_ms));
        self.entry(&mut accounts, (kind, account), now_ms, made, idle)
            .map(f)
    }

    /// The entry of `key` in `map`, made with `make` if there is room; when the map is full
    /// it is swept of entries `idle` says no longer count, at most once a window.
    fn entry<'m, K: Hash + Eq, V>(
        &self,
        map: &'m mut HashMap<K, V>,
        key: K,
        now_ms: i64,
        make: impl FnOnce() -> V,
        mut idle: impl FnMut(&mut V) -> bool,
    ) -> Option<&'m mut V> {
        if !map.contains_key(&key) && map.len() >= ACCOUNTS_MAX {
            let swept = self.swept_ms.load(Ordering::Relaxed);
            if now_ms - swept >= WINDOW_MS || swept == 0 {
                self.swept_ms.store(now_ms.max(1), Ordering::Relaxed);
                map.retain(|_, value| !idle(value));
            }
            if map.len() >= ACCOUNTS_MAX {
                self.unmetered.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        }
        Some(map.entry(key).or_insert_with(make))
    }

    pub fn totals(&self, kind: QuotaKind) -> &KindTotals {
        &self.totals[kind.index()]
    }

    /// How many accounts are metered now (tokens of one quota kind each, or of one ip).
    pub fn accounts(&self) -> usize {
        self.accounts.lock().expect("quota meter lock").len()
            + self.ips.lock().expect("quota meter lock").len()
    }
}

/// A new account's usage: a full bucket.
fn fresh(quota: f64, now_ms: i64) -> impl FnOnce() -> Metered {
    move || Metered {
        bucket: TokenBucket::new(quota, now_ms),
        unshared: 0.0,
    }
}

/// Whether an account's usage no longer counts, here or for the other agents.
fn idle(now_ms: i64) -> impl FnMut(&mut Metered) -> bool {
    move |m| m.unshared == 0.0 && m.bucket.is_full(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::client_quotas::{EntityType, QuotaEntity, QuotaValue};
    use crate::quotas::{
        CONNECTION_CREATION_RATE, CONSUMER_BYTE_RATE, CONTROLLER_MUTATION_RATE, PRODUCER_BYTE_RATE,
        REQUEST_PERCENTAGE,
    };

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
        // Eleven seconds' quota at once passes; what comes next is owed.
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, ALICE, 11_000.0, 0),
            0
        );
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, ALICE, 5_000.0, 0),
            5_000
        );
        // Bob has a rate of his own.
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, BOB, 11_000.0, 0),
            0
        );
        // Fetches are not bound by a produce quota.
        assert_eq!(meter.record(&quotas, QuotaKind::Fetch, ALICE, 1e9, 0), 0);
        assert_eq!(meter.totals[0].throttled.load(Ordering::Relaxed), 1);
        // Both users count in the series of the entity that binds them.
        let series = meter.by_entity.series();
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].1, "user=<default>");
        assert_eq!(
            (series[0].2.used, series[0].2.throttle_ms),
            (27_000.0, 5_000)
        );
        assert_eq!(meter.accounts(), 2);
    }

    #[test]
    fn a_request_time_throttle_is_at_most_one_window() {
        let time = quotas(REQUEST_PERCENTAGE, 1.0);
        let bytes = quotas(PRODUCER_BYTE_RATE, 1.0);
        let meter = Meter::default();
        // A hundred percent-seconds against one percent: 89 s owed past the burst; a
        // request-time hold is bounded to a window, and what is owed beyond a burst (11 s)
        // forgiven, so twelve seconds on the client is within its share again.
        assert_eq!(
            meter.record(&time, QuotaKind::Request, ALICE, 100.0, 0),
            1_000
        );
        assert_eq!(
            meter.record(&time, QuotaKind::Request, ALICE, 0.5, 12_000),
            0
        );
        // The same usage against a byte rate is not bounded.
        assert_eq!(
            meter.record(&bytes, QuotaKind::Produce, ALICE, 100.0, 0),
            89_000
        );
        assert!(meter.binds(&time, QuotaKind::Request, BOB));
        assert!(!meter.binds(&time, QuotaKind::Fetch, BOB));
    }

    #[test]
    fn would_exceed_asks_without_recording() {
        // 1,000 B/s: a burst of 11,000 bytes.
        let quotas = quotas(PRODUCER_BYTE_RATE, 1_000.0);
        let meter = Meter::default();
        assert!(!meter.would_exceed(&quotas, QuotaKind::Produce, ALICE, 11_000.0, 0));
        assert!(meter.would_exceed(&quotas, QuotaKind::Produce, ALICE, 11_001.0, 0));
        assert_eq!(
            meter.record(&quotas, QuotaKind::Produce, ALICE, 11_000.0, 0),
            0
        );
        assert!(meter.would_exceed(&quotas, QuotaKind::Produce, ALICE, 1.0, 0));
        // A second earns back a second's quota.
        assert!(!meter.would_exceed(&quotas, QuotaKind::Produce, ALICE, 1_000.0, 1_000));
        assert!(meter.would_exceed(&quotas, QuotaKind::Produce, ALICE, 1_001.0, 1_000));
        // Bound by no quota, never.
        assert!(!meter.would_exceed(&quotas, QuotaKind::Fetch, ALICE, 1e12, 0));
    }

    #[test]
    fn unrecording_and_strict_checks() {
        let quotas = quotas(CONSUMER_BYTE_RATE, 1_000.0);
        let meter = Meter::default();
        assert_eq!(
            meter.record(&quotas, QuotaKind::Fetch, ALICE, 20_000.0, 0),
            9_000
        );
        assert!(meter.would_exceed(&quotas, QuotaKind::Fetch, ALICE, 0.0, 0));
        meter.unrecord(&quotas, QuotaKind::Fetch, ALICE, 20_000.0, 0);
        assert!(!meter.would_exceed(&quotas, QuotaKind::Fetch, ALICE, 0.0, 0));
        // The entity metrics count the throttle answered, and bytes only once served.
        let used = |meter: &Meter| {
            let series = meter.by_entity.series();
            (series[0].2.used, series[0].2.throttle_ms)
        };
        assert_eq!(used(&meter), (0.0, 9_000));
        meter.count_served(&quotas, ALICE, 500.0);
        assert_eq!(used(&meter), (500.0, 9_000));
        assert_eq!(
            meter.most_at_once(&quotas, QuotaKind::Fetch, ALICE),
            Some(10_000.0)
        );
        assert_eq!(meter.most_at_once(&quotas, QuotaKind::Produce, ALICE), None);
    }

    #[test]
    fn partitions_created_take_tokens_and_hold_the_client_once_owed() {
        let quotas = quotas(CONTROLLER_MUTATION_RATE, 2.0);
        let meter = Meter::default();
        assert_eq!(meter.mutation_throttle(&quotas, ALICE, 0), 0);
        // A burst of 22 partitions; 30 leaves 8 owed, 4 s at 2 a second.
        assert_eq!(meter.take_mutations(&quotas, ALICE, 30.0, 0), 4_000);
        assert_eq!(meter.mutation_throttle(&quotas, ALICE, 1_000), 3_000);
        assert_eq!(meter.mutation_throttle(&quotas, BOB, 1_000), 0);
        assert_eq!(meter.mutation_throttle(&quotas, ALICE, 4_000), 0);
    }

    #[test]
    fn topic_changes_elsewhere_take_the_same_tokens() {
        let quotas = quotas(CONTROLLER_MUTATION_RATE, 2.0);
        let (here, there) = (Meter::default(), Meter::default());
        // 22 partitions here spend the burst; passed on, the next change there is owed.
        assert_eq!(here.take_mutations(&quotas, ALICE, 22.0, 0), 0);
        there.add_shared(&here.take_unshared(), 0);
        assert_eq!(there.mutation_throttle(&quotas, ALICE, 0), 0);
        assert_eq!(there.take_mutations(&quotas, ALICE, 4.0, 0), 2_000);
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn connections_beyond_an_ips_rate_are_held_then_refused() {
        let mut quotas = ClientQuotas::default();
        let entity = QuotaEntity(vec![(EntityType::Ip, None)]);
        let change = [(CONNECTION_CREATION_RATE.to_string(), Some(QuotaValue(1.0)))];
        quotas.alter_for_test(&entity, &change);
        let meter = Meter::default();
        // Eleven seconds' worth at once, then each is held a window (at most) and not counted.
        for _ in 0..11 {
            assert_eq!(meter.admit_connection(&quotas, ip("10.0.0.1"), 0), 0);
        }
        assert_eq!(meter.admit_connection(&quotas, ip("10.0.0.1"), 0), 1_000);
        // The same address seen through a dual-stack listener.
        assert_eq!(
            meter.admit_connection(&quotas, ip("::ffff:10.0.0.1"), 0),
            1_000
        );
        assert_eq!(meter.admit_connection(&quotas, ip("10.0.0.2"), 0), 0);
        // A second on, one more is let in.
        assert_eq!(meter.admit_connection(&quotas, ip("10.0.0.1"), 1_000), 0);
        assert_eq!(
            meter.admit_connection(&quotas, ip("10.0.0.1"), 1_000),
            1_000
        );
    }

    #[test]
    fn usage_elsewhere_counts_against_the_same_quota() {
        let quotas = quotas(PRODUCER_BYTE_RATE, 1_000.0);
        let here = Meter::default();
        let there = Meter::default();
        assert_eq!(
            here.record(&quotas, QuotaKind::Produce, ALICE, 6_000.0, 0),
            0
        );
        assert_eq!(
            there.record(&quotas, QuotaKind::Produce, ALICE, 6_000.0, 0),
            0
        );
        // Each agent alone sees Alice within her quota; passed on, neither does.
        let from_here = here.take_unshared();
        assert_eq!(from_here.len(), 1);
        assert_eq!(from_here[0].value, 6_000.0);
        assert_eq!(from_here[0].quota, 1_000.0);
        assert!(here.take_unshared().is_empty(), "taken once");
        there.add_shared(&from_here, 0);
        here.add_shared(&there.take_unshared(), 0);
        assert!(here.would_exceed(&quotas, QuotaKind::Produce, ALICE, 0.0, 0));
        assert!(there.would_exceed(&quotas, QuotaKind::Produce, ALICE, 0.0, 0));
        // What came from elsewhere is not passed on again.
        assert!(there.take_unshared().is_empty());
        // Nonsense from a peer is dropped.
        let bad = Usage {
            kind: QuotaKind::Produce,
            account: from_here[0].account.clone(),
            value: f64::NAN,
            quota: 1_000.0,
        };
        here.add_shared(&[bad], 0);
        assert!(here.would_exceed(&quotas, QuotaKind::Produce, ALICE, 0.0, 0));
        // Usage passed on without a quota to trust (not finite and positive) counts against
        // accounts met here only.
        let again = Meter::default();
        again.record(&quotas, QuotaKind::Produce, ALICE, 6_000.0, 0);
        let carol = Account {
            user: "carol".into(),
            client_id: String::new(),
        };
        let unknown = Usage {
            kind: QuotaKind::Produce,
            account: carol,
            value: 1e9,
            quota: 0.0,
        };
        let known = Usage {
            account: from_here[0].account.clone(),
            value: 6_000.0,
            ..unknown.clone()
        };
        again.add_shared(&[unknown, known], 0);
        assert_eq!(again.accounts(), 1);
        assert!(again.would_exceed(&quotas, QuotaKind::Produce, ALICE, 0.0, 0));
    }
}
