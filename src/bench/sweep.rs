//! Parameter sweeps: one embedded experiment per measured point (latency model × object size ×
//! flush interval), each priced as a deployment at the target ingest for every agent count and
//! zone layout asked for; written as CSV, a JSON report and plots (`plot`).
//!
//! A 2-core machine cannot hold 1 GiB/s, so latency is measured at a rate it can hold and the
//! bill is extrapolated to the target with the measured per-GiB CPU and the PUT budget
//! (`cost::deployment`); the report says so in `basis`.

use super::experiment::{EmbeddedBroker, ExperimentReport, run_embedded};
use super::load::{BenchError, LoadSpec};
use crate::cost::classic::{self, ClassicBill};
use crate::cost::deployment::{self, AgentCpu, Bill, Deployment};
use crate::cost::frontier::pareto_frontier;
use crate::cost::peers::{PUBLISHED, Published};
use crate::cost::{GIB, PriceProfile};
use serde::Serialize;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct SweepSpec {
    pub flush_intervals: Vec<Duration>,
    pub object_bytes_max: Vec<usize>,
    pub latency_models: Vec<String>,
    pub object_store: String,
}

/// The deployments each measured point is priced as.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PricingSpec {
    /// Ingest to price; `None` prices each point at its measured rate.
    pub target_ingest_bytes_per_second: Option<f64>,
    pub fan_out: f64,
    pub zones: u32,
    pub agents_min: Vec<u32>,
    pub zone_aware: Vec<bool>,
    pub target_utilisation: f64,
    pub quorum_voters: u32,
    pub segment_bytes: f64,
    pub compaction_lag_seconds: f64,
    pub retention_seconds: f64,
}

/// One measured point priced as one deployment.
#[derive(Debug, Clone, Serialize)]
pub struct PricedPoint {
    /// Index into the report's experiments.
    pub experiment: usize,
    pub latency_model: String,
    pub flush_interval_ms: f64,
    pub object_bytes_max: usize,
    pub price_profile: String,
    pub agents_min: u32,
    pub zone_aware: bool,
    pub produce_p50_ms: f64,
    pub produce_p99_ms: f64,
    pub end_to_end_p50_ms: Option<f64>,
    pub end_to_end_p99_ms: Option<f64>,
    pub ingest_bytes_per_second: f64,
    pub bill: Bill,
    pub classic_kafka: ClassicBill,
    pub on_frontier: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    /// How the figures were obtained, in a sentence.
    pub basis: String,
    pub pricing: PricingSpec,
    pub experiments: Vec<ExperimentReport>,
    pub points: Vec<PricedPoint>,
    /// Indices into `points`: the cheapest settings for their produce p99, cost ascending.
    pub frontier: Vec<usize>,
    pub peers: Vec<Published>,
}

pub async fn run(
    sweep: &SweepSpec,
    load: &LoadSpec,
    price_profile: &str,
    retention_hours: f64,
    mut progress: impl FnMut(&ExperimentReport),
) -> Result<Vec<ExperimentReport>, BenchError> {
    let mut reports = Vec::new();
    for model in &sweep.latency_models {
        for &object_bytes_max in &sweep.object_bytes_max {
            for &flush_interval in &sweep.flush_intervals {
                let broker = EmbeddedBroker {
                    flush_interval,
                    object_bytes_max,
                    object_store: sweep.object_store.clone(),
                    latency_model: model.clone(),
                };
                let mut spec = load.clone();
                spec.topic = format!(
                    "sweep-{}",
                    crate::random::Rng::from_entropy().uuid().simple()
                );
                let profile = PriceProfile::resolve(price_profile, model)?;
                let report = run_embedded(&broker, spec, &profile, retention_hours).await?;
                progress(&report);
                reports.push(report);
            }
        }
    }
    Ok(reports)
}

/// Prices every experiment as every deployment of `pricing` (pure).
pub fn price(
    experiments: Vec<ExperimentReport>,
    pricing: &PricingSpec,
    price_profile: &str,
) -> Result<SweepReport, BenchError> {
    let mut points = Vec::new();
    for (index, e) in experiments.iter().enumerate() {
        let model = e.latency_model.clone().unwrap_or_default();
        let profile = PriceProfile::resolve(price_profile, &model)?;
        let measured = e.load.bytes as f64 / e.load.seconds.max(1e-9);
        let ingest = pricing.target_ingest_bytes_per_second.unwrap_or(measured);
        let e2e = e.load.end_to_end_latency_ms.as_ref();
        for &agents_min in &pricing.agents_min {
            for &zone_aware in &pricing.zone_aware {
                let d = Deployment {
                    ingest_bytes_per_second: ingest,
                    fan_out: pricing.fan_out,
                    zones: pricing.zones,
                    agents_min,
                    zone_aware,
                    flush_interval_seconds: e.flush_interval_ms.unwrap_or(250.0) / 1000.0,
                    object_bytes_max: e.object_bytes_max.unwrap_or(8 << 20) as f64,
                    segment_bytes: pricing.segment_bytes,
                    compaction_lag_seconds: pricing.compaction_lag_seconds,
                    retention_seconds: pricing.retention_seconds,
                    target_utilisation: pricing.target_utilisation,
                    quorum_voters: pricing.quorum_voters,
                };
                let cpu = AgentCpu {
                    seconds_per_gib: e.agent_cpu_seconds_per_gib.unwrap_or(0.0),
                    idle_cores: e.agent_idle_cores.unwrap_or(0.0),
                };
                points.push(PricedPoint {
                    experiment: index,
                    latency_model: model.clone(),
                    flush_interval_ms: e.flush_interval_ms.unwrap_or(0.0),
                    object_bytes_max: e.object_bytes_max.unwrap_or(0),
                    price_profile: profile.name.clone(),
                    agents_min,
                    zone_aware,
                    produce_p50_ms: e.load.produce_latency_ms.p50,
                    produce_p99_ms: e.load.produce_latency_ms.p99,
                    end_to_end_p50_ms: e2e.map(|l| l.p50),
                    end_to_end_p99_ms: e2e.map(|l| l.p99),
                    ingest_bytes_per_second: ingest,
                    bill: deployment::price(&d, cpu, &profile),
                    classic_kafka: classic::price(
                        ingest,
                        pricing.fan_out,
                        pricing.retention_seconds,
                        zone_aware,
                        &profile,
                    ),
                    on_frontier: false,
                });
            }
        }
    }
    let frontier = pareto_frontier(
        &points
            .iter()
            .map(|p| (p.bill.per_gib, p.produce_p99_ms))
            .collect::<Vec<_>>(),
    );
    for &i in &frontier {
        points[i].on_frontier = true;
    }
    let measured_mb: Vec<f64> = experiments
        .iter()
        .map(|e| e.load.megabytes_per_second)
        .collect();
    let basis = match pricing.target_ingest_bytes_per_second {
        Some(target) => format!(
            "latency measured on one in-process agent at {:.1}-{:.1} MB/s; bills extrapolated to \
             {:.1} MiB/s with the measured agent CPU per GiB and the PUT budget (N/interval + \
             ingest/object size)",
            measured_mb.iter().copied().fold(f64::INFINITY, f64::min),
            measured_mb.iter().copied().fold(0.0, f64::max),
            target / (1024.0 * 1024.0)
        ),
        None => "latency measured on one in-process agent; bills at each point's measured rate"
            .to_string(),
    };
    Ok(SweepReport {
        basis,
        pricing: pricing.clone(),
        experiments,
        points,
        frontier,
        peers: PUBLISHED.to_vec(),
    })
}

pub const CSV_HEADER: &str = "latency_model,flush_interval_ms,object_bytes_max,agents_min,zone_aware,measured_megabytes_per_second,produce_p50_ms,produce_p99_ms,end_to_end_p50_ms,end_to_end_p99_ms,measured_puts,measured_puts_per_gib,agent_cpu_seconds_per_gib,agent_idle_cores,ingest_mib_per_second,agents,puts_per_second,gets_per_second,object_mib,agents_usd,quorum_usd,puts_usd,gets_usd,compaction_usd,transfer_usd,storage_usd,cross_zone_usd,monthly_usd,usd_per_gib,on_frontier,classic_kafka_monthly_usd,classic_kafka_usd_per_gib";

pub fn csv(report: &SweepReport) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for p in &report.points {
        let e = &report.experiments[p.experiment];
        let b = &p.bill;
        out.push_str(&format!(
            "{},{},{},{},{},{:.3},{:.3},{:.3},{},{},{},{:.1},{},{},{:.3},{},{:.2},{:.2},{:.3},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.6},{},{:.2},{:.6}\n",
            p.latency_model,
            p.flush_interval_ms,
            p.object_bytes_max,
            p.agents_min,
            p.zone_aware,
            e.load.megabytes_per_second,
            p.produce_p50_ms,
            p.produce_p99_ms,
            opt(p.end_to_end_p50_ms),
            opt(p.end_to_end_p99_ms),
            e.object_store.puts,
            e.object_store.puts_per_gib,
            opt(e.agent_cpu_seconds_per_gib),
            opt(e.agent_idle_cores),
            p.ingest_bytes_per_second / (1024.0 * 1024.0),
            b.agents,
            b.puts_per_second,
            b.gets_per_second,
            b.object_bytes / (1024.0 * 1024.0),
            b.compute,
            b.quorum,
            b.put_requests,
            b.get_requests,
            b.compaction_requests,
            b.transfer,
            b.storage,
            b.cross_zone,
            b.total,
            b.per_gib,
            p.on_frontier,
            p.classic_kafka.total,
            p.classic_kafka.per_gib,
        ));
    }
    out
}

/// `1GiB/s`, `100MiB/s`, `500MB/s`, `4096` (bytes per second; binary and decimal units).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_end_matches("/s").trim();
    let units: [(&str, f64); 7] = [
        ("GiB", GIB),
        ("MiB", 1024.0 * 1024.0),
        ("KiB", 1024.0),
        ("GB", 1e9),
        ("MB", 1e6),
        ("KB", 1e3),
        ("B", 1.0),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|&(unit, scale)| t.strip_suffix(unit).map(|n| (n, scale)))
        .unwrap_or((t, 1.0));
    match number.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n * scale),
        _ => Err(format!(
            "'{text}' is not a positive rate (e.g. 1GiB/s, 100MiB/s, 500MB/s)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_rate("1GiB/s"), Ok(GIB));
        assert_eq!(parse_rate("100MiB/s"), Ok(100.0 * 1024.0 * 1024.0));
        assert_eq!(parse_rate("500MB"), Ok(5e8));
        assert_eq!(parse_rate("4096"), Ok(4096.0));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("-1GiB/s").is_err());
    }
}
