//! `floe bench calibrate`: times PUT, GET and DELETE of the sizes floe writes against a real
//! store, and fits a latency model file (`latency_fit`) that sweeps and brokers can inject.
//!
//! Requests go through `ObjectClient`, retries included, so the times are what an agent sees.
//! Each round writes, reads back and deletes one object of every size, so a store warming up or
//! slowing down over the run touches all sizes alike; one unmeasured round opens the
//! connections first.

use super::latency_fit::{self, SizeSample};
use crate::clock::Clock;
use crate::store::client::{ObjectClient, ObjectStoreError};
use crate::store::latency_model_file::LatencyModelFile;
use bytes::Bytes;
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct CalibrateSpec {
    /// Object sizes in bytes.
    pub sizes: Vec<u64>,
    /// Measured requests per operation and size.
    pub samples: usize,
    /// The price profile the model file names (`s3-standard`, `s3-express` or a file).
    pub price_profile: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CalibrationReport {
    pub store: String,
    pub put: Vec<SizeSample>,
    pub get: Vec<SizeSample>,
    pub delete: Vec<SizeSample>,
    pub model: LatencyModelFile,
}

/// The built-in price profile for a store URL: S3 Express One Zone for a directory bucket
/// (`s3://name--usw2-az1--x-s3`), S3 Standard otherwise.
pub fn price_profile_for(url: &str) -> &'static str {
    let bucket = url
        .strip_prefix("s3://")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or("");
    if bucket.ends_with("--x-s3") {
        "s3-express"
    } else {
        "s3-standard"
    }
}

pub async fn run(
    client: &ObjectClient,
    spec: &CalibrateSpec,
    run_id: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<CalibrationReport, ObjectStoreError> {
    let clock = Clock::system();
    let payloads: Vec<Bytes> = spec.sizes.iter().map(|&n| payload(n)).collect();
    let mut times = vec![[Vec::new(), Vec::new(), Vec::new()]; spec.sizes.len()];
    let rounds = spec.samples.max(1) + 1;
    for round in 0..rounds {
        for (index, bytes) in payloads.iter().enumerate() {
            let key = format!("calibrate/{run_id}/{round}-{}", bytes.len());
            let started = clock.now();
            client.put(&key, bytes.clone()).await?;
            let put = started.elapsed();
            let started = clock.now();
            // get_range fails unless the whole range comes back.
            client.get_range(&key, 0..bytes.len() as u64).await?;
            let get = started.elapsed();
            let started = clock.now();
            client.delete(&key).await?;
            let delete = started.elapsed();
            if round > 0 {
                for (series, took) in times[index].iter_mut().zip([put, get, delete]) {
                    series.push(took.as_secs_f64() * 1000.0);
                }
            }
        }
        progress(round, rounds);
    }
    let summarise = |op: usize| -> Vec<SizeSample> {
        spec.sizes
            .iter()
            .zip(&times)
            .map(|(&bytes, t)| SizeSample::of(bytes, &t[op]))
            .collect()
    };
    let (put, get, delete) = (summarise(0), summarise(1), summarise(2));
    let model = latency_fit::model(&put, &get, &delete);
    Ok(CalibrationReport {
        store: client.description().to_string(),
        model: LatencyModelFile::new(&model, client.description(), &spec.price_profile),
        put,
        get,
        delete,
    })
}

/// `n` bytes that no store can compress or deduplicate away.
fn payload(n: u64) -> Bytes {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ n;
    let mut out = Vec::with_capacity(n as usize);
    while (out.len() as u64) < n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(n as usize);
    Bytes::from(out)
}

/// The report for a person: a table of percentiles per operation and size, then the model.
pub fn human(report: &CalibrationReport) -> String {
    let mut out = format!("{}\n", report.store);
    out.push_str("op      size        p50 ms   p90 ms   p99 ms   max ms  samples\n");
    for (name, series) in [
        ("PUT", &report.put),
        ("GET", &report.get),
        ("DELETE", &report.delete),
    ] {
        for s in series.iter() {
            out.push_str(&format!(
                "{name:<7} {:>9}  {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8}\n",
                size_name(s.bytes),
                s.p50_ms,
                s.p90_ms,
                s.p99_ms,
                s.max_ms,
                s.samples
            ));
        }
    }
    let m = &report.model;
    for (name, p) in [("PUT", &m.put), ("GET", &m.get), ("other", &m.other)] {
        out.push_str(&format!(
            "model {name:<5} base p50 {:.3} ms, p99 {:.3} ms, {}\n",
            p.p50_ms,
            p.p99_ms,
            if p.bandwidth_bytes_per_second > 0.0 {
                format!("{:.1} MB/s", p.bandwidth_bytes_per_second / 1e6)
            } else {
                "no size term".to_string()
            }
        ));
    }
    out
}

fn size_name(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_buckets_are_priced_as_s3_express() {
        assert_eq!(
            price_profile_for("s3://logs--usw2-az1--x-s3/floe"),
            "s3-express"
        );
        assert_eq!(price_profile_for("s3://logs/floe"), "s3-standard");
        assert_eq!(price_profile_for("gs://logs"), "s3-standard");
    }

    #[test]
    fn payloads_have_the_size_asked_for_and_differ_between_sizes() {
        assert_eq!(payload(65_537).len(), 65_537);
        assert_ne!(payload(64)[..8], payload(65)[..8]);
    }
}
