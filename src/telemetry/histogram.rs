//! A lock-free histogram with fixed bucket bounds, rendered as a Prometheus histogram.

use std::sync::atomic::{AtomicU64, Ordering};

/// Latency bounds in seconds (Prometheus `le`), before +Inf.
pub const LATENCY_SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Size bounds in bytes, before +Inf.
pub const SIZE_BYTES: &[f64] = &[
    1024.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 8388608.0, 16777216.0, 67108864.0,
];

pub struct Histogram {
    bounds: &'static [f64],
    /// Non-cumulative counts per bucket; the last one is +Inf.
    buckets: Box<[AtomicU64]>,
    /// The f64 sum of observations, as bits (updated by compare-and-swap).
    sum_bits: AtomicU64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    pub bounds: &'static [f64],
    /// Cumulative counts per bound, then +Inf (= the total count).
    pub cumulative: Vec<u64>,
    pub sum: f64,
}

impl HistogramSnapshot {
    pub fn count(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_bits: AtomicU64::new(0f64.to_bits()),
        }
    }

    pub fn observe(&self, value: f64) {
        let bucket = self
            .bounds
            .iter()
            .position(|&le| value <= le)
            .unwrap_or(self.bounds.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum_bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + value).to_bits())
            });
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut total = 0;
        HistogramSnapshot {
            bounds: self.bounds,
            cumulative: self
                .buckets
                .iter()
                .map(|b| {
                    total += b.load(Ordering::Relaxed);
                    total
                })
                .collect(),
            sum: f64::from_bits(self.sum_bits.load(Ordering::Relaxed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_sum_adds_up() {
        let h = Histogram::new(LATENCY_SECONDS);
        for v in [0.0001, 0.003, 0.003, 20.0] {
            h.observe(v);
        }
        let s = h.snapshot();
        assert_eq!(s.count(), 4);
        assert_eq!(s.cumulative[0], 1);
        assert_eq!(s.cumulative[3], 3, "0.003 falls in le=0.005");
        assert_eq!(
            s.cumulative[LATENCY_SECONDS.len() - 1],
            3,
            "20 s is only in +Inf"
        );
        assert!((s.sum - 20.0061).abs() < 1e-9);
    }
}
