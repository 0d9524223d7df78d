//! The controller mutation quota's measure (KIP-599; Kafka's `TokenBucket`): partitions
//! created or deleted take tokens, which come back at the quota's rate, up to a burst of the
//! quota times the windows Kafka keeps (`rate::SAMPLES` seconds). A request may take more than
//! is left, driving the tokens below zero; the client is then held until they are back at
//! zero, and (from the versions that are strict) refused meanwhile.
//!
//! Pure: the caller passes the quota and the time (milliseconds on a monotonic clock).

use super::rate::{SAMPLES, WINDOW_MS};

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

    /// The tokens left at `now_ms` (below zero: owed).
    pub fn tokens(&mut self, quota: f64, now_ms: i64) -> f64 {
        self.refill(quota, now_ms);
        self.tokens
    }

    /// Takes `permits` tokens at `now_ms`.
    pub fn take(&mut self, permits: f64, quota: f64, now_ms: i64) {
        self.refill(quota, now_ms);
        self.tokens = (self.tokens - permits).min(burst(quota));
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
fn burst(quota: f64) -> f64 {
    quota * SAMPLES as f64 * (WINDOW_MS as f64 / 1_000.0)
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
    }
}
