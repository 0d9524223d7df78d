//! How every client quota is measured: Kafka's `TokenBucket` (KIP-599). Usage takes tokens,
//! which come back at the quota's rate, up to a burst of the quota times the windows Kafka
//! keeps (`SAMPLES` × `WINDOW_MS`: eleven seconds' quota). A request may take more than is
//! left, driving the tokens below zero; the client is then held until they are back at zero.
//!
//! Why a bucket and not the sampled `Rate` Kafka's broker uses for byte rates: Kafka's own
//! reason for the bucket. A rate over samples holds one large sample in its average until
//! the sample ages out, all at once, eleven seconds on; a client sending as fast as it is let
//! through then moves its quota in bursts on that cycle (ten seconds' worth at once, little in
//! between), so what it moves in one minute depends on how many bursts that minute catches:
//! about −5% to +10% of the quota, and +13% in the first minute. Tokens come back
//! continuously, so once its first burst is spent a client moves its quota, evenly, over any
//! span. The first burst and the throttle a client is answered are as large as Kafka's (its
//! padded window allows ten to eleven seconds' quota at once; the throttle is the time the
//! usage takes to be paid back).
//!
//! Pure: the caller passes the quota and the time (milliseconds on a monotonic clock).

/// Kafka's `quota.window.num`.
pub const SAMPLES: usize = 11;
/// Kafka's `quota.window.size.seconds`, in milliseconds.
pub const WINDOW_MS: i64 = 1_000;

#[derive(Debug, Clone)]
pub struct TokenBucket {
    tokens: f64,
    last_ms: i64,
    /// The quota it was last refilled at.
    quota: f64,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(quota: f64, now_ms: i64) -> TokenBucket {
        TokenBucket {
            tokens: burst(quota),
            last_ms: now_ms,
            quota,
        }
    }

    /// The quota it was last refilled at.
    pub fn quota(&self) -> f64 {
        self.quota
    }

    /// The tokens left at `now_ms` (below zero: owed).
    pub fn tokens(&mut self, quota: f64, now_ms: i64) -> f64 {
        self.refill(quota, now_ms);
        self.tokens
    }

    /// Takes `permits` tokens at `now_ms` (negative: gives them back, as Kafka "unrecords" a
    /// throttled fetch, never beyond a full bucket).
    pub fn take(&mut self, permits: f64, quota: f64, now_ms: i64) {
        self.refill(quota, now_ms);
        self.tokens = (self.tokens - permits).min(burst(quota));
    }

    /// Forgives what is owed beyond one burst: what Kafka's sampled rate remembers of a
    /// request-time overdraft, which ages out of its samples within as long.
    pub fn forgive_beyond_a_burst(&mut self, quota: f64) {
        self.tokens = self.tokens.max(-burst(quota));
    }

    /// How long until the tokens are back at zero (Kafka's `throttleTimeMs`); 0 if none are
    /// owed.
    pub fn throttle_ms(&mut self, quota: f64, now_ms: i64) -> u64 {
        let tokens = self.tokens(quota, now_ms);
        if tokens >= 0.0 || quota <= 0.0 {
            return 0;
        }
        (-tokens / quota * 1_000.0).round() as u64
    }

    /// Whether the bucket is full at the quota it was last used with, so forgetting it loses
    /// nothing.
    pub fn is_full(&mut self, now_ms: i64) -> bool {
        let quota = self.quota;
        self.tokens(quota, now_ms) >= burst(quota)
    }

    fn refill(&mut self, quota: f64, now_ms: i64) {
        self.quota = quota;
        let elapsed = (now_ms - self.last_ms).max(0) as f64 / 1_000.0;
        self.tokens = (self.tokens + quota * elapsed).min(burst(quota));
        self.last_ms = self.last_ms.max(now_ms);
    }
}

/// The most tokens a bucket holds.
pub fn burst(quota: f64) -> f64 {
    quota * SAMPLES as f64 * (WINDOW_MS as f64 / 1_000.0)
}

/// The most a client may take at once and not be held for it even if it took nothing before
/// (Kafka's `maxValueInQuotaWindow`, ten windows' quota): caps what one fetch may return.
pub fn most_at_once(quota: f64) -> f64 {
    quota * (SAMPLES as f64 - 1.0) * (WINDOW_MS as f64 / 1_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_a_hold_until_the_tokens_are_back() {
        // 2 partitions a second: a burst of 22.
        let mut bucket = TokenBucket::new(2.0, 0);
        assert_eq!(bucket.tokens(2.0, 0), 22.0);
        bucket.take(30.0, 2.0, 0);
        assert_eq!(bucket.tokens(2.0, 0), -8.0);
        assert_eq!(bucket.throttle_ms(2.0, 0), 4_000);
        assert_eq!(bucket.throttle_ms(2.0, 1_000), 3_000);
        assert_eq!(bucket.throttle_ms(2.0, 4_000), 0);
        // Refilled up to the burst, no further.
        assert!(bucket.is_full(100_000));
        assert_eq!(bucket.tokens(2.0, 100_000), 22.0);
        assert_eq!(most_at_once(2.0), 20.0);
    }

    #[test]
    fn tokens_given_back_never_overfill_the_bucket() {
        let mut bucket = TokenBucket::new(1_000.0, 0);
        bucket.take(5_000.0, 1_000.0, 0);
        bucket.take(-5_000.0, 1_000.0, 0);
        assert_eq!(bucket.tokens(1_000.0, 0), 11_000.0);
        bucket.take(-5_000.0, 1_000.0, 0);
        assert_eq!(bucket.tokens(1_000.0, 0), 11_000.0);
    }

    /// A client that sends as soon as it is let through, one request after another, over two
    /// minutes: past its first burst, every minute holds its quota (to within a request).
    #[test]
    fn a_greedy_client_moves_its_quota_evenly_once_its_burst_is_spent() {
        let (quota, request) = (1_000_000.0, 100_000.0);
        let mut bucket = TokenBucket::new(quota, 0);
        let mut sent = Vec::new();
        let mut now = 0;
        while now < 120_000 {
            bucket.take(request, quota, now);
            sent.push(now);
            // 3 ms to answer, then the hold.
            now += 3 + bucket.throttle_ms(quota, now) as i64;
        }
        let in_span = |from: i64| {
            let n = sent
                .iter()
                .filter(|&&t| t >= from && t < from + 60_000)
                .count();
            n as f64 * request / (60.0 * quota)
        };
        // The first minute carries the burst: eleven seconds' quota on top.
        let first = in_span(0);
        assert!((1.17..=1.19).contains(&first), "{first}");
        for from in (12_000..60_000).step_by(1_700) {
            let share = in_span(from);
            assert!((0.99..=1.01).contains(&share), "{from}: {share}");
        }
    }
}
