//! Two tenants of one floe side by side, for the noisy-neighbour test and benchmark. The quiet
//! tenant (client id `quiet`) sends a 1 KiB produce every 20 ms, one at a time, and its
//! latencies (request sent to answer read) are taken. The noisy tenant (client id `noisy`)
//! keeps its connections each sending 256 KiB produces as soon as the last is answered,
//! ignoring throttle times.

use super::raw::produce_request;
use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the quiet tenant sends.
pub const QUIET_EVERY: Duration = Duration::from_millis(20);

/// What one phase measured.
pub struct Phase {
    pub name: &'static str,
    /// The quiet tenant's produce latencies, in the order sent.
    pub latencies: Vec<Duration>,
    /// The quiet tenant's responses that carried a throttle time.
    pub quiet_throttled: u64,
    /// The noisy tenant's accepted bytes while the quiet one was measured, and over how long.
    pub noisy_bytes: f64,
    pub seconds: f64,
    /// The noisy tenant's responses that carried a throttle time, warm-up included.
    pub noisy_throttled: u64,
}

impl Phase {
    /// The noisy tenant's accepted bytes per second while the quiet one was measured.
    pub fn noisy_rate(&self) -> f64 {
        self.noisy_bytes / self.seconds
    }

    /// The quiet tenant's latency at fraction `p` of its requests (0.99: the p99).
    pub fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted[index.min(sorted.len() - 1)]
    }
}

/// The quiet tenant alone for `span` if `connections` is 0; else beside the noisy tenant's
/// `connections`. Both send for `warm_up` before the quiet tenant is measured, in every phase:
/// the first phase, alone, is measured on an agent as warm as the others (measured on a fresh
/// agent, it was the noisiest phase of a run).
pub async fn phase(
    name: &'static str,
    bootstrap: &str,
    span: Duration,
    connections: usize,
    warm_up: Duration,
) -> Phase {
    let stop = Arc::new(AtomicBool::new(false));
    let noisy_sent = Arc::new(AtomicU64::new(0));
    let noisy_throttled = Arc::new(AtomicU64::new(0));
    let mut noise = Vec::new();
    if connections > 0 {
        for _ in 0..connections {
            let task = noisy(
                bootstrap.to_string(),
                stop.clone(),
                noisy_sent.clone(),
                noisy_throttled.clone(),
            );
            noise.push(tokio::spawn(task));
        }
    }
    quiet_apart(bootstrap, warm_up).await;
    let before = noisy_sent.load(Ordering::Relaxed);
    let started = Instant::now();
    let (latencies, quiet_throttled) = quiet_apart(bootstrap, span).await;
    let noisy_bytes = (noisy_sent.load(Ordering::Relaxed) - before) as f64;
    let seconds = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for task in noise {
        task.await.expect("noisy tenant");
    }
    Phase {
        name,
        latencies,
        quiet_throttled,
        noisy_bytes,
        seconds,
        noisy_throttled: noisy_throttled.load(Ordering::Relaxed),
    }
}

/// Prints the phases, the first taken as the quiet tenant alone.
pub fn report(phases: &[Phase]) {
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    let alone_p99 = ms(phases[0].percentile(0.99));
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>12} {:>14}",
        "phase", "requests", "p50 ms", "p99 ms", "max ms", "p99/alone", "noisy MiB/s"
    );
    for phase in phases {
        let p99 = ms(phase.percentile(0.99));
        println!(
            "{:<18} {:>9} {:>9.1} {:>9.1} {:>9.1} {:>12.2} {:>14.1}",
            phase.name,
            phase.latencies.len(),
            ms(phase.percentile(0.5)),
            p99,
            ms(phase.percentile(1.0)),
            p99 / alone_p99,
            phase.noisy_rate() / 1_048_576.0
        );
    }
}

/// The quiet tenant, on a thread and runtime of its own, as a separate application would be:
/// on the noisy tenant's runtime its answers would wait behind the noisy tenant's tasks in the
/// client before it read them, and that wait would be counted as the agent's.
async fn quiet_apart(bootstrap: &str, span: Duration) -> (Vec<Duration>, u64) {
    let bootstrap = bootstrap.to_string();
    tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(quiet(&bootstrap, span))
    })
    .await
    .expect("quiet tenant")
}

/// The quiet tenant's produce latencies over `span`, and how many answers carried a throttle
/// time.
async fn quiet(bootstrap: &str, span: Duration) -> (Vec<Duration>, u64) {
    let (mut tx, mut rx) = floe::client::connect_as(bootstrap, "quiet")
        .await
        .expect("connect");
    let batch = build_test_batch(-1, -1, -1, 1, 1024);
    let (mut latencies, mut throttled) = (Vec::new(), 0);
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
        if response.throttle_time_ms > 0 {
            throttled += 1;
        }
        next = next.max(Instant::now());
    }
    (latencies, throttled)
}

/// The noisy tenant: produces until `stop`, counting the bytes it had accepted and the
/// answers that carried a throttle time.
async fn noisy(
    bootstrap: String,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    throttled: Arc<AtomicU64>,
) {
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
        if response.throttle_time_ms > 0 {
            throttled.fetch_add(1, Ordering::Relaxed);
        }
    }
}
