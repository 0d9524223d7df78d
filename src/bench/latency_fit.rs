//! Fitting a latency model to measured request times (pure): per operation, a straight line
//! through the per-size medians (time = base + bytes / bandwidth) by least squares; the base's
//! p50 is the line's intercept and its p99 the typical gap between a size's p99 and its
//! transfer time.

use crate::store::chaos::{LatencyModel, LatencyProfile};
use serde::Serialize;
use std::time::Duration;

/// One operation's times at one object size, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeSample {
    pub bytes: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub samples: usize,
}

impl SizeSample {
    /// Nearest-rank percentiles of `times_ms` (at least one time).
    pub fn of(bytes: u64, times_ms: &[f64]) -> SizeSample {
        let mut sorted: Vec<f64> = times_ms.iter().copied().filter(|t| t.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| {
            if sorted.is_empty() {
                return 0.0;
            }
            let rank = (q * sorted.len() as f64).ceil() as usize;
            sorted[rank.clamp(1, sorted.len()) - 1]
        };
        SizeSample {
            bytes,
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p99_ms: at(0.99),
            max_ms: sorted.last().copied().unwrap_or(0.0),
            samples: sorted.len(),
        }
    }
}

/// The least-squares line through (bytes, p50): `(intercept ms, ms per byte)`. One size, or
/// sizes all alike, give a flat line at their mean.
fn line(samples: &[SizeSample]) -> (f64, f64) {
    let n = samples.len() as f64;
    if samples.is_empty() {
        return (0.0, 0.0);
    }
    let mean_x = samples.iter().map(|s| s.bytes as f64).sum::<f64>() / n;
    let mean_y = samples.iter().map(|s| s.p50_ms).sum::<f64>() / n;
    let sxx: f64 = samples
        .iter()
        .map(|s| (s.bytes as f64 - mean_x).powi(2))
        .sum();
    if sxx <= 0.0 {
        return (mean_y, 0.0);
    }
    let sxy: f64 = samples
        .iter()
        .map(|s| (s.bytes as f64 - mean_x) * (s.p50_ms - mean_y))
        .sum();
    let slope = sxy / sxx;
    (mean_y - slope * mean_x, slope)
}

/// The profile that reproduces `samples`: a slope at or below zero (size did not show) means
/// no bandwidth term; the base never goes below 0.01 ms.
pub fn fit(samples: &[SizeSample]) -> LatencyProfile {
    let (intercept, slope) = match line(samples) {
        fitted @ (_, slope) if slope > 0.0 => fitted,
        // No size effect: the base is the medians' mean.
        _ => (mean(samples.iter().map(|s| s.p50_ms)), 0.0),
    };
    let transfer = |bytes: u64| bytes as f64 * slope;
    let p50 = intercept.max(0.01);
    let mut tails: Vec<f64> = samples
        .iter()
        .map(|s| s.p99_ms - transfer(s.bytes))
        .collect();
    tails.sort_by(f64::total_cmp);
    let p99 = tails.get(tails.len() / 2).copied().unwrap_or(p50).max(p50);
    LatencyProfile {
        p50: Duration::from_secs_f64(p50 / 1000.0),
        p99: Duration::from_secs_f64(p99 / 1000.0),
        bandwidth: if slope > 0.0 { 1000.0 / slope } else { 0.0 },
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// A whole model: PUTs and GETs fitted over sizes; HEAD, LIST and DELETE from the DELETEs,
/// with no size term.
pub fn model(puts: &[SizeSample], gets: &[SizeSample], deletes: &[SizeSample]) -> LatencyModel {
    let other = fit(deletes);
    LatencyModel {
        put: fit(puts),
        get: fit(gets),
        other: LatencyProfile {
            bandwidth: 0.0,
            ..other
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(bytes: u64, p50_ms: f64, p99_ms: f64) -> SizeSample {
        SizeSample {
            bytes,
            p50_ms,
            p90_ms: p50_ms,
            p99_ms,
            max_ms: p99_ms,
            samples: 20,
        }
    }

    #[test]
    fn a_line_through_the_medians_recovers_base_and_bandwidth() {
        // 20 ms + bytes / 50 MB/s: 1 MB takes 40 ms, 8 MB 180 ms; p99 30 ms above each median.
        let samples = [
            sample(1_000_000, 40.0, 70.0),
            sample(4_000_000, 100.0, 130.0),
            sample(8_000_000, 180.0, 210.0),
        ];
        let p = fit(&samples);
        assert!((p.p50.as_secs_f64() * 1000.0 - 20.0).abs() < 1e-6, "{p:?}");
        assert!((p.p99.as_secs_f64() * 1000.0 - 50.0).abs() < 1e-6, "{p:?}");
        assert!((p.bandwidth - 50e6).abs() < 1.0, "{p:?}");
        // The fitted model reproduces the medians: base + transfer at a normal sample of 0.
        let back = p.sample(4_000_000, 0.0).as_secs_f64() * 1000.0;
        assert!((back - 100.0).abs() < 1e-6, "{back}");
    }

    #[test]
    fn sizes_that_do_not_matter_give_a_flat_model() {
        let samples = [sample(1_000, 5.0, 9.0), sample(8_000_000, 4.0, 8.0)];
        let p = fit(&samples);
        assert_eq!(p.bandwidth, 0.0);
        assert!((p.p50.as_secs_f64() * 1000.0 - 4.5).abs() < 1e-6, "{p:?}");
        assert!(p.p99 >= p.p50);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let times: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = SizeSample::of(10, &times);
        assert_eq!(
            (s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms),
            (50.0, 90.0, 99.0, 100.0)
        );
        assert_eq!(SizeSample::of(10, &[3.0]).p99_ms, 3.0);
    }
}
