//! One cost-versus-latency experiment: run the load (against an embedded broker or a running
//! one), read the object-store requests it caused, and price them.

use super::agent_cpu;
use super::load::{self, BenchError, LoadReport, LoadSpec};
use crate::clock::Clock;
use crate::config::Config;
use crate::cost::{GIB, MonthlyCost, PriceProfile, Rates, kafka_cross_zone_monthly, monthly_cost};
use crate::store::chaos::Operation;
use crate::store::latency_model_file;
use crate::store::open::ObjectStoreConfig;
use serde::Serialize;
use std::time::Duration;

/// The broker an experiment starts in-process.
#[derive(Debug, Clone)]
pub struct EmbeddedBroker {
    pub flush_interval: Duration,
    pub object_bytes_max: usize,
    /// `memory://` by default: the latency model stands in for the real store.
    pub object_store: String,
    pub latency_model: String,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ObjectStoreUse {
    pub puts: u64,
    pub gets: u64,
    pub put_bytes: u64,
    pub get_bytes: u64,
    pub puts_per_gib: f64,
    pub gets_per_gib: f64,
}

/// The background jobs' object-store requests during the load (compaction, retention,
/// deletion), counted apart from produce and fetch, and the month they project to.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct JobsUse {
    pub puts: u64,
    pub gets: u64,
    pub deletes: u64,
    pub lists: u64,
    pub monthly_usd: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentReport {
    pub flush_interval_ms: Option<f64>,
    pub object_bytes_max: Option<usize>,
    pub latency_model: Option<String>,
    pub price_profile: String,
    pub load: LoadReport,
    pub object_store: ObjectStoreUse,
    pub jobs: JobsUse,
    pub monthly_usd: MonthlyCost,
    pub classic_kafka_cross_zone_monthly_usd: f64,
    /// The agent's CPU core-seconds per GiB ingested (with the consumer reading it once),
    /// beyond what it spends idle; measured for an embedded agent only.
    pub agent_cpu_seconds_per_gib: Option<f64>,
    /// Cores the embedded agent spent with no load, measured for a second before the run.
    pub agent_idle_cores: Option<f64>,
}

/// Object-store request counters: (puts, gets, put bytes, get bytes), and the jobs' (puts,
/// gets, deletes, lists).
type Counters = ((u64, u64, u64, u64), [u64; 4]);

const JOB_OPERATIONS: [Operation; 4] = [
    Operation::Put,
    Operation::Get,
    Operation::Delete,
    Operation::List,
];

/// Reads the object-store counters from a running broker's `/metrics`.
async fn scrape(admin_url: &str) -> Result<Counters, BenchError> {
    let text = reqwest::get(format!("{}/metrics", admin_url.trim_end_matches('/')))
        .await
        .map_err(|e| BenchError::Broker(format!("cannot read {admin_url}/metrics: {e}")))?
        .text()
        .await
        .map_err(|e| BenchError::Broker(e.to_string()))?;
    let value = |family: &str, op: &str| {
        let prefix = format!("{family}{{op=\"{op}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0) as u64
    };
    Ok((
        (
            value("floe_object_store_requests_total", "put"),
            value("floe_object_store_requests_total", "get"),
            value("floe_object_store_bytes_total", "put"),
            value("floe_object_store_bytes_total", "get"),
        ),
        JOB_OPERATIONS.map(|op| value("floe_jobs_object_store_requests_total", op.name())),
    ))
}

/// The jobs' requests between two readings, priced at the load's duration (S3 bills LIST as a
/// PUT-class request and DELETE not at all).
fn jobs_use(before: [u64; 4], after: [u64; 4], seconds: f64, profile: &PriceProfile) -> JobsUse {
    let [puts, gets, deletes, lists] = [0, 1, 2, 3].map(|i| after[i].saturating_sub(before[i]));
    let rates = Rates {
        puts_per_second: (puts + lists) as f64 / seconds.max(1e-9),
        gets_per_second: gets as f64 / seconds.max(1e-9),
        ..Rates::default()
    };
    JobsUse {
        puts,
        gets,
        deletes,
        lists,
        monthly_usd: monthly_cost(profile, &rates, 0.0).total,
    }
}

fn usage((before, _): Counters, (after, _): Counters, produced_bytes: u64) -> ObjectStoreUse {
    let gib = (produced_bytes as f64 / GIB).max(1e-12);
    let puts = after.0.saturating_sub(before.0);
    let gets = after.1.saturating_sub(before.1);
    ObjectStoreUse {
        puts,
        gets,
        put_bytes: after.2.saturating_sub(before.2),
        get_bytes: after.3.saturating_sub(before.3),
        puts_per_gib: puts as f64 / gib,
        gets_per_gib: gets as f64 / gib,
    }
}

fn price(
    load: &LoadReport,
    store: &ObjectStoreUse,
    profile: &PriceProfile,
    retention_hours: f64,
) -> (MonthlyCost, f64) {
    let seconds = load.seconds.max(1e-9);
    let rates = Rates {
        puts_per_second: store.puts as f64 / seconds,
        gets_per_second: store.gets as f64 / seconds,
        put_bytes_per_second: store.put_bytes as f64 / seconds,
        get_bytes_per_second: store.get_bytes as f64 / seconds,
        ingest_bytes_per_second: load.bytes as f64 / seconds,
    };
    (
        monthly_cost(profile, &rates, retention_hours * 3600.0),
        kafka_cross_zone_monthly(profile, rates.ingest_bytes_per_second),
    )
}

/// How long the agent is watched with no load before a run.
const IDLE_SAMPLE: Duration = Duration::from_secs(1);

/// Cores the in-process agent spends over `sample` with no load; a short settle first lets its
/// start-up work (store probe, registration) finish.
async fn idle_cores(sample: Duration) -> Option<f64> {
    let clock = Clock::system();
    clock.sleep(Duration::from_millis(200)).await;
    let before = agent_cpu::thread_cpu_seconds(agent_cpu::THREAD_NAME)?;
    let started = clock.now();
    clock.sleep(sample).await;
    let after = agent_cpu::thread_cpu_seconds(agent_cpu::THREAD_NAME)?;
    Some((after - before).max(0.0) / started.elapsed().as_secs_f64().max(1e-9))
}

/// Runs the load against a broker this process starts.
pub async fn run_embedded(
    broker: &EmbeddedBroker,
    mut spec: LoadSpec,
    profile: &PriceProfile,
    retention_hours: f64,
) -> Result<ExperimentReport, BenchError> {
    let dir = std::env::temp_dir().join(format!(
        "floe-bench-{}",
        crate::random::Rng::from_entropy().uuid()
    ));
    let mut config = Config::local(dir.clone());
    config.kafka_addr = "127.0.0.1:0".into();
    config.admin_addr = None;
    config.flush_interval = broker.flush_interval;
    config.object_bytes_max = broker.object_bytes_max;
    config.default_partitions = spec.partitions;
    config.object_store = ObjectStoreConfig {
        url: broker.object_store.clone(),
        latency: latency_model_file::parse_model(&broker.latency_model)?,
        ..Default::default()
    };
    // The agent runs on its own named threads, so its CPU is counted apart from the load's.
    let agent = agent_cpu::agent_runtime()
        .map_err(|e| BenchError::Broker(format!("cannot start the agent's runtime: {e}")))?;
    let running = agent
        .spawn(crate::node::start(config))
        .await
        .map_err(|e| BenchError::Broker(format!("the embedded agent panicked: {e}")))?
        .map_err(BenchError::Embedded)?;
    spec.bootstrap = running.local_addr.to_string();
    let counters = |r: &crate::node::Running| {
        let m = r.broker.store.metrics();
        let put = m.operation(Operation::Put);
        let get = m.operation(Operation::Get);
        let jobs = r.broker.jobs_store.metrics();
        (
            (put.requests, get.requests, put.bytes, get.bytes),
            JOB_OPERATIONS.map(|op| jobs.operation(op).requests),
        )
    };
    let idle_cores = idle_cores(IDLE_SAMPLE).await;
    let before = counters(&running);
    let cpu_before = agent_cpu::thread_cpu_seconds(agent_cpu::THREAD_NAME);
    let started = Clock::system().now();
    let result = load::run(&spec).await;
    let cpu_after = agent_cpu::thread_cpu_seconds(agent_cpu::THREAD_NAME);
    let loaded_seconds = started.elapsed().as_secs_f64();
    let after = counters(&running);
    let _ = agent.spawn(running.stop()).await;
    agent.shutdown_background();
    let _ = std::fs::remove_dir_all(&dir);
    let load = result?;
    let store = usage(before, after, load.bytes);
    let jobs = jobs_use(before.1, after.1, load.seconds, profile);
    let (monthly_usd, kafka) = price(&load, &store, profile, retention_hours);
    let agent_cpu_seconds_per_gib = match (cpu_before, cpu_after) {
        (Some(before), Some(after)) if load.bytes > 0 => {
            let idle = idle_cores.unwrap_or(0.0) * loaded_seconds;
            Some((after - before - idle).max(0.0) / (load.bytes as f64 / GIB))
        }
        _ => None,
    };
    Ok(ExperimentReport {
        jobs,
        agent_cpu_seconds_per_gib,
        agent_idle_cores: idle_cores,
        flush_interval_ms: Some(broker.flush_interval.as_secs_f64() * 1000.0),
        object_bytes_max: Some(broker.object_bytes_max),
        latency_model: Some(broker.latency_model.clone()),
        price_profile: profile.name.clone(),
        load,
        object_store: store,
        monthly_usd,
        classic_kafka_cross_zone_monthly_usd: kafka,
    })
}

/// Runs the load against a running broker, reading its object-store counters over admin HTTP.
pub async fn run_remote(
    spec: LoadSpec,
    admin_url: &str,
    profile: &PriceProfile,
    retention_hours: f64,
) -> Result<ExperimentReport, BenchError> {
    let before = scrape(admin_url).await?;
    let load = load::run(&spec).await?;
    let after = scrape(admin_url).await?;
    let store = usage(before, after, load.bytes);
    let jobs = jobs_use(before.1, after.1, load.seconds, profile);
    let (monthly_usd, kafka) = price(&load, &store, profile, retention_hours);
    Ok(ExperimentReport {
        jobs,
        agent_cpu_seconds_per_gib: None,
        agent_idle_cores: None,
        flush_interval_ms: None,
        object_bytes_max: None,
        latency_model: None,
        price_profile: profile.name.clone(),
        load,
        object_store: store,
        monthly_usd,
        classic_kafka_cross_zone_monthly_usd: kafka,
    })
}

/// A short human summary.
pub fn human(report: &ExperimentReport) -> String {
    let l = &report.load;
    let mut out = format!(
        "throughput   {:.1} MB/s, {:.0} records/s over {:.1} s ({} errors)\n\
         produce      p50 {:.1} ms  p90 {:.1}  p99 {:.1}  p999 {:.1}  max {:.1}\n",
        l.megabytes_per_second,
        l.records_per_second,
        l.seconds,
        l.produce_errors,
        l.produce_latency_ms.p50,
        l.produce_latency_ms.p90,
        l.produce_latency_ms.p99,
        l.produce_latency_ms.p999,
        l.produce_latency_ms.max
    );
    if let Some(e) = &l.end_to_end_latency_ms {
        out.push_str(&format!(
            "end to end   p50 {:.1} ms  p90 {:.1}  p99 {:.1}  p999 {:.1}  max {:.1}  ({} records read)\n",
            e.p50, e.p90, e.p99, e.p999, e.max, l.consumed_records
        ));
    }
    if let Some(cpu) = report.agent_cpu_seconds_per_gib {
        out.push_str(&format!(
            "agent CPU    {cpu:.2} core-s per GiB ingested (and read once) beyond {:.3} cores idle\n",
            report.agent_idle_cores.unwrap_or(0.0)
        ));
    }
    let s = &report.object_store;
    out.push_str(&format!(
        "object store {} PUTs, {} GETs: {:.0} PUTs/GiB, {:.0} GETs/GiB\n\
         cost/month   ${:.2} at this rate ({}): PUT ${:.2}, GET ${:.2}, transfer ${:.2}, storage ${:.2}\n\
         classic Kafka cross-zone transfer for the same ingest: ${:.2}/month\n\
         jobs         {} PUTs, {} GETs, {} DELETEs, {} LISTs (compaction, retention, deletion): ${:.2}/month\n",
        s.puts,
        s.gets,
        s.puts_per_gib,
        s.gets_per_gib,
        report.monthly_usd.total,
        report.price_profile,
        report.monthly_usd.put_requests,
        report.monthly_usd.get_requests,
        report.monthly_usd.transfer,
        report.monthly_usd.storage,
        report.classic_kafka_cross_zone_monthly_usd,
        report.jobs.puts,
        report.jobs.gets,
        report.jobs.deletes,
        report.jobs.lists,
        report.jobs.monthly_usd
    ));
    out
}
