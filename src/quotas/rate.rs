//! A rate measured as Kafka's quotas measure it (the metrics library's `Rate` over a
//! `SampledStat`), and the throttle time Kafka derives from it (`QuotaUtils.throttleTime`).
//!
//! The rate is the sum of the last `SAMPLES` one-second samples divided by the time they span,
//! and that span is never taken as less than `SAMPLES - 1` whole windows: a client that starts
//! sending is measured over ten seconds, not over the instant it has been seen, so a burst of
//! up to ten seconds' quota passes before throttling starts (as in Kafka).
//!
//! Pure: the caller passes the time (milliseconds on a monotonic clock).

/// Kafka's `quota.window.num`.
pub const SAMPLES: usize = 11;
/// Kafka's `quota.window.size.seconds`, in milliseconds.
pub const WINDOW_MS: i64 = 1_000;

#[derive(Debug, Clone, Copy)]
struct Sample {
    /// When the sample's window began.
    start_ms: i64,
    value: f64,
}

/// A sum over sample windows, read as a rate per second.
#[derive(Debug, Clone)]
pub struct Rate {
    samples: Vec<Sample>,
    /// The sample being added to.
    current: usize,
}

impl Rate {
    pub fn new(now_ms: i64) -> Rate {
        Rate {
            samples: vec![Sample {
                start_ms: now_ms,
                value: 0.0,
            }],
            current: 0,
        }
    }

    /// Adds `value` at `now_ms` (negative: takes back what was added, as Kafka "unrecords" a
    /// throttled fetch).
    pub fn record(&mut self, value: f64, now_ms: i64) {
        if now_ms - self.samples[self.current].start_ms >= WINDOW_MS {
            self.current = (self.current + 1) % SAMPLES;
            let fresh = Sample {
                start_ms: now_ms,
                value: 0.0,
            };
            match self.samples.get_mut(self.current) {
                Some(sample) => *sample = fresh,
                None => self.samples.push(fresh),
            }
        }
        self.samples[self.current].value += value;
    }

    /// The rate per second at `now_ms`.
    pub fn measure(&mut self, now_ms: i64) -> f64 {
        let window_ms = self.window_ms(now_ms);
        let total: f64 = self.samples.iter().map(|s| s.value).sum();
        total / (window_ms as f64 / 1_000.0)
    }

    /// The time the rate is measured over at `now_ms` (Kafka's `Rate.windowSize`): from the
    /// oldest sample kept, and at least `SAMPLES - 1` whole windows.
    pub fn window_ms(&mut self, now_ms: i64) -> i64 {
        self.forget_obsolete(now_ms);
        let oldest = self.samples.iter().map(|s| s.start_ms).min();
        let mut elapsed = now_ms - oldest.unwrap_or(now_ms);
        let full_windows = elapsed / WINDOW_MS;
        let min_full_windows = SAMPLES as i64 - 1;
        if full_windows < min_full_windows {
            elapsed += (min_full_windows - full_windows) * WINDOW_MS;
        }
        elapsed
    }

    /// Whether nothing recorded still counts at `now_ms`: every sample is empty or has aged
    /// out, so forgetting the rate loses nothing.
    pub fn is_idle(&self, now_ms: i64) -> bool {
        self.samples
            .iter()
            .all(|s| s.value == 0.0 || now_ms - s.start_ms >= SAMPLES as i64 * WINDOW_MS)
    }

    /// Samples older than all the windows kept are emptied and restarted now (Kafka's
    /// `purgeObsoleteSamples`).
    fn forget_obsolete(&mut self, now_ms: i64) {
        for sample in &mut self.samples {
            if now_ms - sample.start_ms >= SAMPLES as i64 * WINDOW_MS {
                *sample = Sample {
                    start_ms: now_ms,
                    value: 0.0,
                };
            }
        }
    }
}

/// How long a client over its quota must pause for its rate, measured over `window_ms`, to
/// fall back to `bound` if it sends nothing meanwhile (Kafka's `QuotaUtils.throttleTime`);
/// 0 within the quota.
pub fn throttle_ms(observed: f64, bound: f64, window_ms: i64) -> u64 {
    if observed <= bound || bound <= 0.0 {
        return 0;
    }
    ((observed - bound) / bound * window_ms as f64).round() as u64
}

/// The most a client may take at once without being throttled even if it took nothing before
/// (Kafka's `maxValueInQuotaWindow`): caps what one fetch may return.
pub fn most_at_once(bound: f64) -> f64 {
    bound * (SAMPLES as f64 - 1.0) * (WINDOW_MS as f64 / 1_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_rate_is_measured_over_ten_windows() {
        let mut rate = Rate::new(0);
        rate.record(1_000.0, 0);
        assert_eq!(rate.window_ms(0), 10_000);
        assert_eq!(rate.measure(0), 100.0);
        // Half a window later: still ten windows, since fewer than ten have passed.
        assert_eq!(rate.window_ms(500), 10_500);
    }

    #[test]
    fn samples_roll_over_and_age_out() {
        let mut rate = Rate::new(0);
        for second in 0..20 {
            rate.record(100.0, second * 1_000);
        }
        // Eleven samples kept: seconds 9..=19, measured from second 9's start.
        assert_eq!(rate.window_ms(19_000), 10_000);
        assert!((rate.measure(19_000) - 110.0).abs() < 1e-9);
        assert!(!rate.is_idle(25_000));
        // Long after, everything has aged out.
        assert!(rate.is_idle(40_000));
        assert_eq!(rate.measure(40_000), 0.0);
    }

    #[test]
    fn unrecording_takes_a_value_back() {
        let mut rate = Rate::new(0);
        rate.record(500.0, 0);
        rate.record(300.0, 0);
        rate.record(-300.0, 0);
        assert_eq!(rate.measure(0), 50.0);
    }

    #[test]
    fn throttle_time_is_kafkas() {
        // QuotaUtilsTest: observed 16.5 against a quota of 16.5 is not throttled.
        assert_eq!(throttle_ms(16.5, 16.5, 1_000), 0);
        assert_eq!(throttle_ms(10.0, 16.5, 1_000), 0);
        // 50% over a 10 s window: 5 s.
        assert_eq!(throttle_ms(150.0, 100.0, 10_000), 5_000);
        // Rounded, as Math.round.
        assert_eq!(throttle_ms(100.1, 100.0, 10_000), 10);
    }

    #[test]
    fn a_client_over_its_quota_is_throttled_back_to_it() {
        // 1,000 bytes/s allowed; 20,000 bytes at once.
        let mut rate = Rate::new(0);
        rate.record(20_000.0, 0);
        let observed = rate.measure(0);
        let pause = throttle_ms(observed, 1_000.0, rate.window_ms(0));
        // Kafka's pause: what brings 20,000 bytes over a window grown by the pause down to
        // the quota (the window is bounded by the samples kept, so it comes back sooner).
        assert_eq!(pause, 10_000);
        assert_eq!(20_000.0 / ((10_000 + pause) as f64 / 1_000.0), 1_000.0);
        assert_eq!(most_at_once(1_000.0), 10_000.0);
    }
}
