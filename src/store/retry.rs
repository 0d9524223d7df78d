//! Retry policy for object-store requests: exponential backoff with jitter, a bounded number
//! of attempts and a total deadline. Pure: the caller supplies the jitter and the clock.
//!
//! PUT keys are unique (see `key`), so retrying a PUT whose response was lost is harmless: the
//! second PUT writes the same bytes under the same key, and only a committed key is data.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts_max: u32,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// No new attempt starts after this much time since the first one.
    pub deadline: Duration,
    /// One attempt's limit; a request still running then counts as a timeout.
    pub request_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts_max: 8,
            backoff_base: Duration::from_millis(25),
            backoff_max: Duration::from_secs(2),
            deadline: Duration::from_secs(20),
            request_timeout: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1` (`attempt` counts from 1), "full jitter" style:
    /// uniformly in `[0, min(max, base · 2^(attempt-1))]`, with `jitter` in `[0, 1)`.
    pub fn backoff(&self, attempt: u32, jitter: f64) -> Duration {
        let exp = self.backoff_base.saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1).min(20))
                .unwrap_or(u32::MAX),
        );
        exp.min(self.backoff_max).mul_f64(jitter.clamp(0.0, 1.0))
    }

    /// Whether another attempt may start, given attempts made and time since the first.
    pub fn may_retry(&self, attempts: u32, elapsed: Duration, next_wait: Duration) -> bool {
        attempts < self.attempts_max && elapsed + next_wait < self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_exponentially_up_to_the_cap() {
        let p = RetryPolicy {
            backoff_base: Duration::from_millis(10),
            backoff_max: Duration::from_millis(100),
            ..Default::default()
        };
        assert_eq!(p.backoff(1, 1.0), Duration::from_millis(10));
        assert_eq!(p.backoff(2, 1.0), Duration::from_millis(20));
        assert_eq!(p.backoff(4, 1.0), Duration::from_millis(80));
        assert_eq!(p.backoff(5, 1.0), Duration::from_millis(100));
        assert_eq!(p.backoff(60, 1.0), Duration::from_millis(100));
        assert_eq!(p.backoff(3, 0.5), Duration::from_millis(20));
        assert_eq!(p.backoff(3, 0.0), Duration::ZERO);
    }

    #[test]
    fn attempts_and_deadline_bound_retries() {
        let p = RetryPolicy {
            attempts_max: 3,
            deadline: Duration::from_secs(1),
            ..Default::default()
        };
        assert!(p.may_retry(1, Duration::ZERO, Duration::from_millis(10)));
        assert!(!p.may_retry(3, Duration::ZERO, Duration::from_millis(10)));
        assert!(!p.may_retry(1, Duration::from_millis(995), Duration::from_millis(10)));
    }
}
