//! The batcher: pure decisions about when to seal an object.
//!
//! Batches from every connection and partition accumulate in one open object. When it is
//! sealed follows a **PUT budget**: an agent may make one PUT per `flush_interval` plus one per
//! `object_bytes_max` bytes it accepts, and no more. The budget is a credit, in PUTs: time earns
//! it (one per flush interval, saved up to two while nothing waits) and so do accepted bytes
//! (one per `object_bytes_max`); the open object is sealed as soon as the credit reaches one
//! PUT, which it spends. So
//! - over any span, PUTs ≤ 2 + span / flush_interval + bytes / object_bytes_max, whatever the
//!   number of partitions or connections;
//! - an object never holds much more than `object_bytes_max` (its own bytes earn its PUT);
//! - a batch that arrives after a quiet flush interval is sealed almost at once, and under load
//!   an object is sealed a flush interval after the previous one, not after its own first
//!   batch: a producer that waits for each answer before sending again (librdkafka's idempotent
//!   producer keeps one request in flight per partition) waits for the budget, not for a whole
//!   interval on top of the previous PUT;
//! - a batch that arrives just after another's object was sealed, while the agent is not busy,
//!   is sealed at once too, with the second PUT saved: an agent's occasional large object (one
//!   tenant's) does not hold the next small one (another tenant's) for the interval. Saving
//!   two PUTs rather than one changes how many an agent may make at once, not how many per
//!   second: under load the credit is spent as soon as it reaches one.
//!
//! **Heavy tenants.** The second saved PUT is kept for light tenants. An object holding only
//! batches of heavy tenants (a tenant over its produce quota, whose answer will carry a
//! throttle time, or one sending far more than the others here: `shares`) is sealed when the
//! credit reaches two PUTs, not one; any batch of a light tenant makes the object due at one,
//! and the waiting batches ride along. A neighbour sending as fast as it can, or held to its
//! quota, then does not spend the PUT another tenant would have found alone: without this,
//! its objects kept the credit spent, and a tenant beside it waited up to an interval for the
//! next PUT (on the S3 Express model with a 20 ms interval, beside a neighbour held to its
//! quota, 4.3 ms at the median and 20 ms at the p99). A heavy tenant waits at most an interval
//! more; under load its objects are sealed an interval apart, as before; the PUTs are the same.
//!
//! **Gathering.** A producer answered for several partitions at once sends their next batches
//! together, but they arrive one after another, up to a few milliseconds apart. Sealing at the
//! first would put it in an object of its own and leave the rest waiting a whole interval for
//! the next PUT. So an object the budget allows waits until no batch has arrived for a gather
//! window (a fiftieth of the flush interval; none below a millisecond, the timer's resolution),
//! and at most four windows after its first batch. Waiting never adds a PUT.
//!
//! Time comes in as an argument; nothing here reads a clock.

use crate::clock::Instant;
use crate::ids::TopicPartition;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::Duration;

/// The most PUTs the time budget saves while nothing waits (see the module's comment).
const SAVED_PUTS_MAX: f64 = 2.0;

/// A batch's tenant: light, or heavy, whose batches do not spend the PUT the budget keeps for
/// the others (see the module's comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Light,
    /// Over its produce quota, or sending far more than the agent's other tenants.
    Heavy,
}

impl Standing {
    pub const ALL: [Standing; 2] = [Standing::Light, Standing::Heavy];

    pub fn name(self) -> &'static str {
        match self {
            Standing::Light => "light",
            Standing::Heavy => "heavy",
        }
    }
}

/// Why an object was sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealReason {
    /// The time budget allowed a PUT.
    Time,
    /// It reached `object_bytes_max`.
    Bytes,
    /// The broker was stopping.
    Shutdown,
}

impl SealReason {
    pub const ALL: [SealReason; 3] = [SealReason::Time, SealReason::Bytes, SealReason::Shutdown];

    pub fn name(self) -> &'static str {
        match self {
            SealReason::Time => "time",
            SealReason::Bytes => "bytes",
            SealReason::Shutdown => "shutdown",
        }
    }
}

/// An open object's contents, grouped by partition, each batch with its caller's tag `T`.
pub struct Sealed<T> {
    pub chunks: Vec<(TopicPartition, Vec<(Bytes, T)>)>,
    pub bytes: usize,
    pub reason: SealReason,
}

pub struct Batcher<T> {
    flush_interval: Duration,
    object_bytes_max: usize,
    /// How long the open object must be quiet before the budget seals it.
    gather: Duration,
    open: BTreeMap<TopicPartition, Vec<(Bytes, T)>>,
    bytes: usize,
    /// When the open object got its first and its latest batch.
    first_at: Option<Instant>,
    last_at: Option<Instant>,
    /// Whether the open object holds a batch of a light tenant.
    holds_light: bool,
    /// PUTs the agent may make, as of `credit_at` (`None`: before the first batch, a full
    /// credit).
    credit: f64,
    credit_at: Option<Instant>,
}

impl<T> Batcher<T> {
    pub fn new(flush_interval: Duration, object_bytes_max: usize) -> Self {
        let gather = flush_interval / 50;
        Batcher {
            flush_interval,
            object_bytes_max: object_bytes_max.max(1),
            gather: if gather < Duration::from_millis(1) {
                Duration::ZERO
            } else {
                gather
            },
            open: BTreeMap::new(),
            bytes: 0,
            first_at: None,
            last_at: None,
            holds_light: false,
            credit: SAVED_PUTS_MAX,
            credit_at: None,
        }
    }

    /// Adds a batch; returns the sealed object if it is full, or if the budget allows its PUT
    /// and no gathering is asked for.
    pub fn push(
        &mut self,
        now: Instant,
        partition: TopicPartition,
        batch: Bytes,
        standing: Standing,
        tag: T,
    ) -> Option<Sealed<T>> {
        self.earn(now);
        self.holds_light |= standing == Standing::Light;
        self.credit += batch.len() as f64 / self.object_bytes_max as f64;
        self.bytes += batch.len();
        self.open.entry(partition).or_default().push((batch, tag));
        self.first_at.get_or_insert(now);
        self.last_at = Some(now);
        self.seal_if_due(now)
    }

    /// When the open object will be sealed by time alone, if one is open.
    pub fn deadline(&self) -> Option<Instant> {
        if self.open.is_empty() {
            return None;
        }
        let at = self.credit_at?;
        let missing = (self.credit_needed() - self.credit).max(0.0);
        let budget = at + self.flush_interval.mul_f64(missing);
        Some(budget.max(self.gathered_at()?))
    }

    /// When the open object is done gathering: quiet for a window, or four after its first
    /// batch (a steady stream of batches is never quiet).
    fn gathered_at(&self) -> Option<Instant> {
        let quiet = self.last_at? + self.gather;
        Some(quiet.min(self.first_at? + self.gather * 4))
    }

    /// The credit the open object's PUT waits for: one PUT, or two when it holds only batches
    /// of heavy tenants (the second is kept for the others).
    fn credit_needed(&self) -> f64 {
        if self.holds_light {
            1.0
        } else {
            SAVED_PUTS_MAX
        }
    }

    /// Seals the open object if the budget allows its PUT by `now`.
    pub fn poll(&mut self, now: Instant) -> Option<Sealed<T>> {
        self.earn(now);
        self.seal_if_due(now)
    }

    /// Seals whatever is open (shutdown).
    pub fn seal(&mut self) -> Option<Sealed<T>> {
        self.take(SealReason::Shutdown)
    }

    pub fn open_bytes(&self) -> usize {
        self.bytes
    }

    /// Adds what the time since the last update earned; time alone saves up one PUT at most.
    fn earn(&mut self, now: Instant) {
        if let Some(at) = self.credit_at {
            let elapsed = now.saturating_duration_since(at);
            let earned = if self.flush_interval.is_zero() {
                1.0
            } else {
                elapsed.as_secs_f64() / self.flush_interval.as_secs_f64()
            };
            if self.credit < SAVED_PUTS_MAX {
                self.credit = (self.credit + earned).min(SAVED_PUTS_MAX);
            }
        }
        self.credit_at = Some(now);
    }

    fn seal_if_due(&mut self, now: Instant) -> Option<Sealed<T>> {
        let full = self.bytes >= self.object_bytes_max;
        // The float sum of many byte shares may land a hair below one for a full object.
        let allowed = self.credit >= self.credit_needed() - 1e-9
            && self.gathered_at().is_some_and(|at| now >= at);
        if self.open.is_empty() || !(full || allowed) {
            return None;
        }
        let reason = if self.bytes >= self.object_bytes_max {
            SealReason::Bytes
        } else {
            SealReason::Time
        };
        self.credit = (self.credit - 1.0).max(0.0);
        self.take(reason)
    }

    fn take(&mut self, reason: SealReason) -> Option<Sealed<T>> {
        if self.open.is_empty() {
            return None;
        }
        let bytes = std::mem::take(&mut self.bytes);
        self.first_at = None;
        self.last_at = None;
        self.holds_light = false;
        Some(Sealed {
            chunks: std::mem::take(&mut self.open).into_iter().collect(),
            bytes,
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition {
            topic_id: uuid::Uuid::nil(),
            partition: p,
        }
    }

    fn bytes(n: usize) -> Bytes {
        Bytes::from(vec![0u8; n])
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    const LIGHT: Standing = Standing::Light;
    const HEAVY: Standing = Standing::Heavy;

    #[test]
    fn a_heavy_tenant_leaves_the_second_saved_put_to_the_others() {
        let t0 = crate::clock::Clock::system().now();
        // 40 ms gathers for nothing (under the timer's resolution).
        let mut b = Batcher::new(ms(40), 1 << 20);
        // Idle, the credit holds two PUTs: a heavy tenant's batch is sealed at once...
        assert!(b.push(t0, tp(0), bytes(1000), HEAVY, 0).is_some());
        // ...but its next waits for the credit to reach two again, an interval on.
        assert!(b.push(t0 + ms(1), tp(0), bytes(1000), HEAVY, 1).is_none());
        let deadline = b.deadline().expect("an object is open");
        assert!(
            deadline > t0 + ms(39) && deadline <= t0 + ms(40),
            "{deadline:?}"
        );
        // A light tenant's batch finds the PUT kept for it, and the heavy one's rides along.
        let sealed = b
            .push(t0 + ms(5), tp(1), bytes(10), LIGHT, 2)
            .expect("sealed");
        assert_eq!(sealed.chunks.len(), 2);
        // The credit is spent: a heavy tenant's batch now waits until it is back at two, a
        // light one's until it is back at one.
        assert!(b.push(t0 + ms(6), tp(0), bytes(1000), HEAVY, 3).is_none());
        let held_until = b.deadline().unwrap();
        assert!(
            held_until > t0 + ms(79) && held_until <= t0 + ms(80),
            "{held_until:?}"
        );
        assert!(b.push(t0 + ms(7), tp(1), bytes(10), LIGHT, 4).is_none());
        let due = b.deadline().unwrap();
        assert!(due > t0 + ms(39) && due <= t0 + ms(40), "{due:?}");
        assert!(b.poll(due - ms(1)).is_none());
        assert_eq!(b.poll(due + ms(1)).expect("due").chunks.len(), 2);
        // A full object is sealed whoever's it is.
        let mut b = Batcher::new(ms(40), 1000);
        assert!(b.push(t0, tp(0), bytes(10), HEAVY, 0).is_some());
        assert!(b.push(t0, tp(0), bytes(10), HEAVY, 1).is_none());
        assert!(b.push(t0, tp(0), bytes(990), HEAVY, 2).is_some());
    }

    #[test]
    fn a_batch_after_a_quiet_interval_is_sealed_once_gathered_then_the_budget_waits() {
        let t0 = crate::clock::Clock::system().now();
        // A 100 ms interval gathers for 2 ms.
        let mut b = Batcher::new(ms(100), 1 << 20);
        assert!(b.poll(t0).is_none());
        assert!(b.push(t0, tp(0), bytes(10), LIGHT, 1).is_none());
        assert_eq!(b.deadline(), Some(t0 + ms(2)));
        let first = b.poll(t0 + ms(2)).expect("a PUT was due");
        assert_eq!(first.reason, SealReason::Time);
        // The second PUT was saved: a batch soon after (another tenant's, say) is sealed once
        // gathered, not an interval after the first.
        assert!(b.push(t0 + ms(10), tp(1), bytes(10), LIGHT, 2).is_none());
        assert_eq!(b.deadline(), Some(t0 + ms(12)));
        let second = b.poll(t0 + ms(12)).expect("the saved PUT");
        assert_eq!(second.chunks, vec![(tp(1), vec![(bytes(10), 2)])]);
        // The credit is spent (a tenth of a PUT earned since the first): the next object
        // waits for the interval to earn the rest.
        assert!(b.push(t0 + ms(60), tp(1), bytes(10), LIGHT, 2).is_none());
        assert!(b.push(t0 + ms(70), tp(2), bytes(10), LIGHT, 3).is_none());
        let deadline = b.deadline().expect("an object is open");
        assert!(
            deadline > t0 + ms(101) && deadline <= t0 + ms(102),
            "{deadline:?}"
        );
        assert!(b.poll(t0 + ms(100)).is_none());
        let sealed = b.poll(t0 + ms(102)).expect("sealed when the budget allows");
        assert_eq!(sealed.chunks.len(), 2);
        assert_eq!(sealed.bytes, 20);
        assert_eq!(sealed.reason, SealReason::Time);
        assert_eq!(b.deadline(), None);
        // Under load the next object is due a flush interval after the previous PUT, not
        // after its own first batch.
        assert!(b.push(t0 + ms(180), tp(0), bytes(1), LIGHT, 4).is_none());
        let deadline = b.deadline().unwrap();
        assert!(
            deadline > t0 + ms(201) && deadline <= t0 + ms(202),
            "{deadline:?}"
        );
    }

    #[test]
    fn batches_sent_together_share_one_object() {
        let t0 = crate::clock::Clock::system().now();
        // 250 ms gathers for 5 ms: batches a millisecond or two apart join the first.
        let mut b = Batcher::new(ms(250), 8 << 20);
        for (p, at) in [(0, 0), (1, 1), (2, 3), (3, 6)] {
            assert!(b.push(t0 + ms(at), tp(p), bytes(1000), LIGHT, p).is_none());
        }
        assert_eq!(b.deadline(), Some(t0 + ms(11)));
        assert!(b.poll(t0 + ms(10)).is_none());
        assert_eq!(b.poll(t0 + ms(11)).expect("quiet").chunks.len(), 4);
        // A steady stream is never quiet: four windows after its first batch are the most
        // an object the budget allows waits.
        let mut b = Batcher::new(ms(250), 8 << 20);
        let mut sealed_at = None;
        for at in 0..40 {
            if let Some(s) = b.push(t0 + ms(at), tp(0), bytes(10), LIGHT, at) {
                sealed_at = Some((at, s.chunks[0].1.len()));
                break;
            }
        }
        assert_eq!(sealed_at, Some((20, 21)));
    }

    #[test]
    fn bytes_earn_their_share_of_a_put() {
        let t0 = crate::clock::Clock::system().now();
        // 40 ms gathers for nothing (under the timer's resolution): the saved PUTs go at once.
        let mut b = Batcher::new(ms(40), 1000);
        assert!(b.push(t0, tp(0), bytes(1), LIGHT, 0).is_some());
        assert!(b.push(t0, tp(0), bytes(1), LIGHT, 1).is_some());
        // Half an object's bytes earn half a PUT: half the interval is left to wait.
        assert!(b.push(t0, tp(0), bytes(500), LIGHT, 2).is_none());
        let deadline = b.deadline().unwrap();
        assert!(
            deadline > t0 + ms(19) && deadline <= t0 + ms(20),
            "{deadline:?}"
        );
        assert!(b.poll(t0 + ms(20)).is_some());
    }

    #[test]
    fn puts_stay_within_the_budget_whatever_the_arrivals() {
        // Any arrival pattern, of light and heavy tenants: PUTs ≤ 2 + span /
        // interval + bytes / object_bytes_max, and no object holds more than
        // object_bytes_max plus one batch.
        let t0 = crate::clock::Clock::system().now();
        let interval = ms(50);
        let max = 10_000;
        let mut rng = crate::random::SplitMix64::new(7);
        for round in 0..20 {
            let mut b = Batcher::new(interval, max);
            let (mut puts, mut accepted, mut now) = (0u64, 0usize, t0);
            let (mut biggest, mut longest) = (0, Duration::ZERO);
            let mut pushed_at = Vec::new();
            for i in 0..2_000 {
                now += Duration::from_micros(rng.next_u64() % (4_000 * (round + 1)));
                let size = 1 + (rng.next_u64() % 3_000) as usize;
                accepted += size;
                let standing = if rng.next_u64().is_multiple_of(3) {
                    HEAVY
                } else {
                    LIGHT
                };
                pushed_at.push(now);
                let mut sealed = b
                    .push(now, tp(i % 7), bytes(size), standing, i)
                    .into_iter()
                    .collect::<Vec<_>>();
                sealed.extend(b.poll(now));
                for s in sealed {
                    puts += 1;
                    biggest = biggest.max(s.bytes);
                    for (_, batches) in &s.chunks {
                        for (_, i) in batches {
                            longest = longest.max(now.duration_since(pushed_at[*i as usize]));
                        }
                    }
                }
            }
            let span = now.duration_since(t0).as_secs_f64();
            let allowed = 2.0 + span / interval.as_secs_f64() + accepted as f64 / max as f64;
            assert!(
                puts as f64 <= allowed + 1e-6,
                "round {round}: {puts} PUTs, {allowed} allowed"
            );
            assert!(
                biggest < max + 3_000,
                "round {round}: an object of {biggest} bytes"
            );
            // No batch waits long for the others: sealed within two intervals (a heavy
            // batch's wait for the credit), plus the gap to the next arrival (the only time
            // this polls) and the gathering.
            let gap = Duration::from_micros(4_000 * (round + 1));
            assert!(
                longest <= interval * 2 + gap + ms(4),
                "round {round}: a batch waited {longest:?}"
            );
        }
    }

    #[test]
    fn seals_when_full_regardless_of_time() {
        let t0 = crate::clock::Clock::system().now();
        let mut b = Batcher::new(Duration::from_secs(60), 100);
        assert!(b.push(t0, tp(9), bytes(1), LIGHT, 0).is_none());
        assert!(b.poll(t0 + Duration::from_millis(1200)).is_some());
        assert!(b.push(t0, tp(0), bytes(60), LIGHT, 1).is_none());
        let sealed = b.push(t0, tp(0), bytes(40), LIGHT, 2).expect("full");
        assert_eq!(
            sealed.chunks,
            vec![(tp(0), vec![(bytes(60), 1), (bytes(40), 2)])]
        );
        assert_eq!(sealed.reason, SealReason::Bytes);
        assert_eq!(b.open_bytes(), 0);
    }

    #[test]
    fn many_partitions_share_one_object() {
        let t0 = crate::clock::Clock::system().now();
        let mut b = Batcher::new(Duration::from_millis(10), 1 << 30);
        assert!(b.push(t0, tp(0), bytes(1), LIGHT, 0).is_some());
        assert!(
            b.push(t0, tp(0), bytes(1), LIGHT, 1).is_some(),
            "the saved PUT"
        );
        for p in 0..500 {
            assert!(b.push(t0, tp(p), bytes(100), LIGHT, p).is_none());
        }
        let sealed = b.poll(t0 + Duration::from_millis(10)).expect("one object");
        assert_eq!(sealed.chunks.len(), 500);
        assert!(b.seal().is_none());
    }
}
