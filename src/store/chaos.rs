//! Injected latency and faults, for tests and cost-versus-latency experiments.
//!
//! `--object-store-latency` picks a latency model: a log-normal base (fixed by its p50 and p99)
//! plus bytes / bandwidth, sampled per request. `--object-store-faults` injects failures at a
//! rate. The decisions here are pure: random numbers come in as arguments.
//!
//! | model | PUT base p50 / p99 | GET base p50 / p99 | bandwidth |
//! | --- | --- | --- | --- |
//! | `s3-standard` | 50 / 150 ms | 30 / 120 ms | 50 MB/s PUT, 90 MB/s GET |
//! | `s3-express` | 4 / 10 ms | 2 / 6 ms | 400 MB/s |
//!
//! Calibrated to published figures: S3 Standard PUTs of 2–8 MiB at p99 ≈ 200–400 ms, GET first
//! byte 100–200 ms for such objects; S3 Express One Zone single-digit milliseconds.

pub use crate::random::SplitMix64;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Put,
    Get,
    Head,
    List,
    Delete,
}

impl Operation {
    pub const ALL: [Operation; 5] = [
        Operation::Put,
        Operation::Get,
        Operation::Head,
        Operation::List,
        Operation::Delete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::Put => "put",
            Operation::Get => "get",
            Operation::Head => "head",
            Operation::List => "list",
            Operation::Delete => "delete",
        }
    }
}

/// One operation's latency: log-normal base + size / bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyProfile {
    pub p50: Duration,
    pub p99: Duration,
    /// Bytes per second; 0 means size adds nothing.
    pub bandwidth: f64,
}

impl LatencyProfile {
    /// `normal` is a standard normal sample.
    pub fn sample(&self, bytes: u64, normal: f64) -> Duration {
        let p50 = self.p50.as_secs_f64();
        let p99 = self.p99.as_secs_f64().max(p50);
        // z(0.99) = 2.326: p99 = p50 · e^(2.326 σ).
        let sigma = if p50 > 0.0 {
            (p99 / p50).ln() / 2.326
        } else {
            0.0
        };
        let base = p50 * (sigma * normal).exp();
        Duration::from_secs_f64((base + self.transfer(bytes).as_secs_f64()).clamp(0.0, 60.0))
    }

    /// The size part alone: `bytes` over the bandwidth.
    pub fn transfer(&self, bytes: u64) -> Duration {
        if self.bandwidth > 0.0 {
            Duration::from_secs_f64((bytes as f64 / self.bandwidth).clamp(0.0, 60.0))
        } else {
            Duration::ZERO
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyModel {
    pub put: LatencyProfile,
    pub get: LatencyProfile,
    /// HEAD, LIST and DELETE.
    pub other: LatencyProfile,
}

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

impl LatencyModel {
    pub fn profile(&self, op: Operation) -> &LatencyProfile {
        match op {
            Operation::Put => &self.put,
            Operation::Get => &self.get,
            _ => &self.other,
        }
    }

    /// `none`, `s3-standard`, `s3-express`, or `p50=20ms,p99=200ms[,bandwidth=100MB/s]`.
    pub fn parse(text: &str) -> Result<Option<LatencyModel>, SpecError> {
        match text.trim() {
            "" | "none" => Ok(None),
            "s3-standard" => Ok(Some(LatencyModel {
                put: LatencyProfile {
                    p50: ms(50),
                    p99: ms(150),
                    bandwidth: 50e6,
                },
                get: LatencyProfile {
                    p50: ms(30),
                    p99: ms(120),
                    bandwidth: 90e6,
                },
                other: LatencyProfile {
                    p50: ms(20),
                    p99: ms(80),
                    bandwidth: 0.0,
                },
            })),
            "s3-express" => Ok(Some(LatencyModel {
                put: LatencyProfile {
                    p50: ms(4),
                    p99: ms(10),
                    bandwidth: 400e6,
                },
                get: LatencyProfile {
                    p50: ms(2),
                    p99: ms(6),
                    bandwidth: 400e6,
                },
                other: LatencyProfile {
                    p50: ms(2),
                    p99: ms(6),
                    bandwidth: 0.0,
                },
            })),
            explicit => {
                let mut profile = LatencyProfile {
                    p50: Duration::ZERO,
                    p99: Duration::ZERO,
                    bandwidth: 0.0,
                };
                for part in explicit.split(',') {
                    let (key, value) =
                        part.split_once('=').ok_or_else(|| SpecError::NotKeyValue {
                            spec: "latency model",
                            part: part.to_string(),
                        })?;
                    match key.trim() {
                        "p50" => profile.p50 = parse_duration(value)?,
                        "p99" => profile.p99 = parse_duration(value)?,
                        "bandwidth" => profile.bandwidth = parse_rate(value)?,
                        other => {
                            return Err(SpecError::UnknownKey {
                                spec: "latency model",
                                key: other.to_string(),
                                known: "p50, p99, bandwidth",
                            });
                        }
                    }
                }
                if profile.p99 < profile.p50 {
                    return Err(SpecError::Invalid(
                        "latency model: p99 must be at least p50",
                    ));
                }
                Ok(Some(LatencyModel {
                    put: profile,
                    get: profile,
                    other: LatencyProfile {
                        bandwidth: 0.0,
                        ..profile
                    },
                }))
            }
        }
    }
}

/// Why a latency model or fault plan given on the command line does not parse.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SpecError {
    #[error("{spec}: expected key=value, got '{part}'")]
    NotKeyValue { spec: &'static str, part: String },
    #[error("{spec}: unknown key '{key}' ({known})")]
    UnknownKey {
        spec: &'static str,
        key: String,
        known: &'static str,
    },
    #[error("bad duration '{text}'")]
    Duration {
        text: String,
        #[source]
        cause: humantime::DurationError,
    },
    #[error("bad bandwidth '{text}' (e.g. 100MB/s)")]
    Bandwidth {
        text: String,
        #[source]
        cause: std::num::ParseFloatError,
    },
    #[error("faults: bad rate '{text}'")]
    Rate {
        text: String,
        #[source]
        cause: std::num::ParseFloatError,
    },
    #[error("faults: unknown kind '{0}' (500, 503, timeout, reset, lost-put, short-get)")]
    UnknownFault(String),
    #[error("{0}")]
    Invalid(&'static str),
    #[error("latency model file '{path}': {reason}")]
    File { path: String, reason: String },
}

fn parse_duration(text: &str) -> Result<Duration, SpecError> {
    humantime::parse_duration(text.trim()).map_err(|cause| SpecError::Duration {
        text: text.to_string(),
        cause,
    })
}

/// `100MB/s`, `1GB/s`, `500KB/s` (decimal units).
fn parse_rate(text: &str) -> Result<f64, SpecError> {
    let t = text.trim().trim_end_matches("/s");
    let (number, scale) = if let Some(n) = t.strip_suffix("GB") {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix("MB") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("KB") {
        (n, 1e3)
    } else {
        (t.trim_end_matches('B'), 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .map(|n| n * scale)
        .map_err(|cause| SpecError::Bandwidth {
            text: text.to_string(),
            cause,
        })
}

/// A fault to inject into one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// HTTP 500 Internal Error, before the request takes effect.
    InternalError,
    /// HTTP 503 SlowDown, before the request takes effect.
    SlowDown,
    /// The request hangs until the client's timeout.
    Timeout,
    /// The connection resets before the request takes effect.
    ConnectionReset,
    /// A PUT is stored, but its response is lost: the client sees an error.
    LostPutResponse,
    /// A ranged GET returns fewer bytes than asked for.
    ShortGet,
}

impl Fault {
    pub const ALL: [Fault; 6] = [
        Fault::InternalError,
        Fault::SlowDown,
        Fault::Timeout,
        Fault::ConnectionReset,
        Fault::LostPutResponse,
        Fault::ShortGet,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::InternalError => "500",
            Fault::SlowDown => "503",
            Fault::Timeout => "timeout",
            Fault::ConnectionReset => "reset",
            Fault::LostPutResponse => "lost-put",
            Fault::ShortGet => "short-get",
        }
    }

    fn applies_to(self, op: Operation) -> bool {
        match self {
            Fault::LostPutResponse => op == Operation::Put,
            Fault::ShortGet => op == Operation::Get,
            _ => true,
        }
    }
}

/// Which faults to inject, how often.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    pub rate: f64,
    pub kinds: Vec<Fault>,
    /// How long an injected timeout hangs before failing (the client's request timeout is
    /// usually longer; a short hang keeps experiments quick while still exercising retries).
    pub timeout_hang: Duration,
}

impl FaultPlan {
    /// `rate=0.1[,kinds=500+503+timeout+reset+lost-put+short-get][,hang=200ms]`; kinds default to all.
    pub fn parse(text: &str) -> Result<Option<FaultPlan>, SpecError> {
        let text = text.trim();
        if text.is_empty() || text == "none" {
            return Ok(None);
        }
        let mut plan = FaultPlan {
            rate: 0.0,
            kinds: Fault::ALL.to_vec(),
            timeout_hang: ms(200),
        };
        for part in text.split(',') {
            let (key, value) = part.split_once('=').ok_or_else(|| SpecError::NotKeyValue {
                spec: "faults",
                part: part.to_string(),
            })?;
            match key.trim() {
                "rate" => {
                    plan.rate = value.trim().parse().map_err(|cause| SpecError::Rate {
                        text: value.to_string(),
                        cause,
                    })?;
                    if !(0.0..=1.0).contains(&plan.rate) {
                        return Err(SpecError::Invalid("faults: rate must be between 0 and 1"));
                    }
                }
                "kinds" => {
                    plan.kinds = value
                        .split('+')
                        .map(|k| {
                            Fault::ALL
                                .into_iter()
                                .find(|f| f.name() == k.trim())
                                .ok_or_else(|| SpecError::UnknownFault(k.to_string()))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "hang" => plan.timeout_hang = parse_duration(value)?,
                other => {
                    return Err(SpecError::UnknownKey {
                        spec: "faults",
                        key: other.to_string(),
                        known: "rate, kinds, hang",
                    });
                }
            }
        }
        Ok(Some(plan))
    }

    /// The fault for a request, given two uniform samples in `[0, 1)`.
    pub fn pick(&self, op: Operation, chance: f64, which: f64) -> Option<Fault> {
        let eligible: Vec<Fault> = self
            .kinds
            .iter()
            .copied()
            .filter(|f| f.applies_to(op))
            .collect();
        if eligible.is_empty() || chance >= self.rate {
            return None;
        }
        let index = ((which * eligible.len() as f64) as usize).min(eligible.len() - 1);
        Some(eligible[index])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_models_parse_and_explicit_values_are_checked() {
        assert!(matches!(LatencyModel::parse("none"), Ok(None)));
        assert!(LatencyModel::parse("s3-standard").unwrap().is_some());
        let m = LatencyModel::parse("p50=20ms,p99=200ms,bandwidth=100MB/s")
            .unwrap()
            .unwrap();
        assert_eq!(m.put.p50, ms(20));
        assert_eq!(m.put.bandwidth, 100e6);
        assert!(LatencyModel::parse("p50=20ms,p99=10ms").is_err());
        assert!(LatencyModel::parse("fast").is_err());
    }

    #[test]
    fn the_s3_standard_model_matches_published_put_percentiles() {
        let model = LatencyModel::parse("s3-standard").unwrap().unwrap();
        let mut rng = SplitMix64::new(1);
        for (bytes, lo, hi) in [(2u64 << 20, 150.0, 300.0), (8 << 20, 250.0, 450.0)] {
            let mut samples: Vec<f64> = (0..20_000)
                .map(|_| model.put.sample(bytes, rng.normal()).as_secs_f64() * 1000.0)
                .collect();
            samples.sort_by(f64::total_cmp);
            let p99 = samples[samples.len() * 99 / 100];
            assert!((lo..hi).contains(&p99), "{bytes} B: p99 {p99} ms");
        }
    }

    #[test]
    fn faults_fire_at_their_rate_and_only_where_they_apply() {
        let plan = FaultPlan::parse("rate=0.1,kinds=lost-put+short-get")
            .unwrap()
            .unwrap();
        assert_eq!(
            plan.pick(Operation::Put, 0.05, 0.9),
            Some(Fault::LostPutResponse)
        );
        assert_eq!(plan.pick(Operation::Get, 0.05, 0.0), Some(Fault::ShortGet));
        assert_eq!(plan.pick(Operation::Delete, 0.05, 0.0), None);
        assert_eq!(plan.pick(Operation::Put, 0.2, 0.0), None);
        let all = FaultPlan::parse("rate=1").unwrap().unwrap();
        assert_eq!(all.kinds.len(), 6);
        assert!(FaultPlan::parse("rate=2").is_err());
        assert!(FaultPlan::parse("rate=0.1,kinds=fire").is_err());
    }
}
