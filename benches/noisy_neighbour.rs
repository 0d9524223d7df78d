//! A noisy neighbour: how much one tenant sending as fast as it can slows another that stays
//! under its quota, with and without a quota on the noisy one.
//!
//! One `floe serve` (the embedded default). The quiet tenant (client id `quiet`) sends a
//! 1 KiB produce every 20 ms, one at a time, and its latencies (request sent to answer
//! read) are taken. The noisy tenant (client id `noisy`) keeps its connections each sending
//! 256 KiB produces as soon as the last is answered, ignoring throttle times. Three phases, in
//! one run: the quiet tenant alone; beside the noisy one without a quota; beside it held to a
//! `producer_byte_rate` (held by muting, since it ignores throttle times). The noisy tenant
//! runs for a warm-up before each measured phase (its first ten seconds' quota pass at once,
//! as in Kafka).
//!
//! Run: `cargo bench --bench noisy_neighbour` (`FLOE_NOISY_SECONDS`, default 30, is each
//! phase's measured span; `FLOE_NOISY_QUOTA`, default 4194304, the noisy tenant's quota in
//! bytes per second; `FLOE_NOISY_CONNECTIONS`, default 4, its connections;
//! `FLOE_NOISY_SERVE_ARGS` adds flags to `floe serve`, say
//! `--object-store-latency s3-standard --flush-interval 250ms` for a cloud store's latency).

// A benchmark in real time against a real process.
#![allow(clippy::disallowed_methods)]

#[path = "../tests/support/mod.rs"]
mod support;

use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::raw::{create_topic, produce_request, set_quota};
use support::{Floe, temp_dir};

const QUIET_EVERY: Duration = Duration::from_millis(20);
const WARM_UP: Duration = Duration::from_secs(12);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The quiet tenant's produce latencies over `span`.
async fn quiet(bootstrap: &str, span: Duration) -> Vec<Duration> {
    let (mut tx, mut rx) = floe::client::connect_as(bootstrap, "quiet")
        .await
        .expect("connect");
    let batch = build_test_batch(-1, -1, -1, 1, 1024);
    let mut latencies = Vec::new();
    let started = Instant::now();
    let mut next = started;
    while started.elapsed() < span {
        tokio::time::sleep_until(next.into()).await;
        next += QUIET_EVERY;
        let sent = Instant::now();
        let response = floe::client::call(&mut tx, &mut rx, 9, produce_request("quiet", &batch))
            .await
            .expect("produce");
        latencies.push(sent.elapsed());
        let ResponseBody::Produce(response) = response else {
            panic!("not a Produce response");
        };
        assert_eq!(response.responses[0].partition_responses[0].error_code, 0);
        next = next.max(Instant::now());
    }
    latencies
}

/// The noisy tenant: produces until `stop`, counting the bytes it had accepted.
async fn noisy(bootstrap: String, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    let (mut tx, mut rx) = floe::client::connect_as(&bootstrap, "noisy")
        .await
        .expect("connect");
    let batch = build_test_batch(-1, -1, -1, 256, 1024);
    while !stop.load(Ordering::Relaxed) {
        let response = floe::client::call(&mut tx, &mut rx, 9, produce_request("noisy", &batch))
            .await
            .expect("produce");
        let ResponseBody::Produce(response) = response else {
            panic!("not a Produce response");
        };
        if response.responses[0].partition_responses[0].error_code == 0 {
            sent.fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
    }
}

struct Phase {
    name: &'static str,
    latencies: Vec<Duration>,
    /// The noisy tenant's accepted bytes per second while the quiet one was measured.
    noisy_rate: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

async fn phase(name: &'static str, bootstrap: &str, span: Duration, connections: usize) -> Phase {
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let mut noise = Vec::new();
    if connections > 0 {
        for _ in 0..connections {
            let task = noisy(bootstrap.to_string(), stop.clone(), sent.clone());
            noise.push(tokio::spawn(task));
        }
        tokio::time::sleep(WARM_UP).await;
    }
    let before = sent.load(Ordering::Relaxed);
    let started = Instant::now();
    let latencies = quiet(bootstrap, span).await;
    let noisy_rate =
        (sent.load(Ordering::Relaxed) - before) as f64 / started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for task in noise {
        task.await.expect("noisy tenant");
    }
    Phase {
        name,
        latencies,
        noisy_rate,
    }
}

fn main() {
    let span = Duration::from_secs(env_or("FLOE_NOISY_SECONDS", 30));
    let quota: f64 = env_or("FLOE_NOISY_QUOTA", 4_194_304.0);
    let connections: usize = env_or("FLOE_NOISY_CONNECTIONS", 4);
    let serve_args = std::env::var("FLOE_NOISY_SERVE_ARGS").unwrap_or_default();
    let serve_args: Vec<&str> = serve_args.split_whitespace().collect();
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &serve_args);
    let bootstrap = floe.bootstrap();
    create_topic(&bootstrap, "quiet", 1);
    create_topic(&bootstrap, "noisy", 1);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut phases = Vec::new();
    phases.push(runtime.block_on(phase("quiet alone", &bootstrap, span, 0)));
    phases.push(runtime.block_on(phase("noisy, no quota", &bootstrap, span, connections)));
    set_quota(
        &bootstrap,
        &[("client-id", Some("noisy"))],
        "producer_byte_rate",
        quota,
    );
    phases.push(runtime.block_on(phase("noisy, quota", &bootstrap, span, connections)));
    let alone_p99 = percentile(&sorted(&phases[0].latencies), 0.99);
    println!(
        "quiet tenant: a 1 KiB produce every {} ms; noisy tenant: {connections} connections of 256 KiB produces; quota {:.1} MiB/s; {} s measured each; floe serve {}",
        QUIET_EVERY.as_millis(),
        quota / 1_048_576.0,
        span.as_secs(),
        serve_args.join(" ")
    );
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>12} {:>14}",
        "phase", "requests", "p50 ms", "p99 ms", "max ms", "p99/alone", "noisy MiB/s"
    );
    for phase in &phases {
        let sorted = sorted(&phase.latencies);
        let p99 = percentile(&sorted, 0.99);
        println!(
            "{:<18} {:>9} {:>9.1} {:>9.1} {:>9.1} {:>12.2} {:>14.1}",
            phase.name,
            sorted.len(),
            ms(percentile(&sorted, 0.5)),
            ms(p99),
            ms(*sorted.last().expect("latencies")),
            ms(p99) / ms(alone_p99),
            phase.noisy_rate / 1_048_576.0
        );
    }
}

fn sorted(latencies: &[Duration]) -> Vec<Duration> {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    sorted
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}
