//! Two tenants of one floe side by side, for the noisy-neighbour test and benchmark. The quiet
//! tenant (client id `quiet`) sends a 1 KiB produce every 20 ms, one at a time, and its
//! latencies (request sent to answer read) are taken. The noisy tenant (client id `noisy`)
//! keeps its connections each sending 256 KiB produces as soon as the last is answered,
//! ignoring throttle times.

use super::raw::produce_request;
use floe::protocol::messages::*;
use floe::protocol::record_batch::build_test_batch;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

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
    /// A phase of the quiet tenant's `samples`.
    fn of<'a>(
        name: &'static str,
        samples: impl Iterator<Item = &'a Sample> + Clone,
        noisy_bytes: f64,
        seconds: f64,
        noisy_throttled: u64,
    ) -> Phase {
        Phase {
            name,
            latencies: samples.clone().map(|s| s.latency).collect(),
            quiet_throttled: samples.filter(|s| s.throttled).count() as u64,
            noisy_bytes,
            seconds,
            noisy_throttled,
        }
    }

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
    let (noise, tasks) = Noise::start(bootstrap, connections);
    let done = Arc::new(AtomicBool::new(false));
    quiet_apart(bootstrap, Some(warm_up), done.clone()).await;
    let before = noise.sent.load(Ordering::Relaxed);
    let started = Instant::now();
    let samples = quiet_apart(bootstrap, Some(span), done).await;
    let noisy_bytes = (noise.sent.load(Ordering::Relaxed) - before) as f64;
    let seconds = started.elapsed().as_secs_f64();
    noise.stop(tasks).await;
    let noisy_throttled = noise.throttled.load(Ordering::Relaxed);
    Phase::of(name, samples.iter(), noisy_bytes, seconds, noisy_throttled)
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

/// The quiet tenant alternately alone and beside the noisy tenant's `connections`, `rounds`
/// times each, `slice` at a time, after both sent for `warm_up`. The first `settle` of each
/// slice is not measured (the noisy tenant's requests in flight when it pauses, or its rate
/// building up when it resumes), nor, when it pauses, the time until its last requests are
/// answered (held by muting, a request is answered when its hold ends). Alternating in short
/// slices, a machine whose speed drifts over minutes (a disk's p99 alone moved from 0.7 to
/// 1.9 ms between runs) weighs on both sides alike, where phases minutes apart compared two
/// machines.
pub async fn alternating(
    names: [&'static str; 2],
    bootstrap: &str,
    rounds: usize,
    slice: Duration,
    settle: Duration,
    connections: usize,
    warm_up: Duration,
) -> [Phase; 2] {
    let (noise, tasks) = Noise::start(bootstrap, connections);
    let done = Arc::new(AtomicBool::new(false));
    let quiet = tokio::spawn(quiet_apart(bootstrap.to_string(), None, done.clone()));
    tokio::time::sleep(warm_up).await;
    // Measured windows, alone and beside, and the noisy tenant's bytes in the latter.
    let mut windows: [Vec<(Instant, Instant)>; 2] = [Vec::new(), Vec::new()];
    let mut noisy_bytes = 0;
    for _ in 0..rounds {
        for (side, pause) in [(0, true), (1, false)] {
            noise.paused.store(pause, Ordering::Relaxed);
            let switched = Instant::now();
            tokio::time::sleep(settle).await;
            // A tenant held by muting answers its last request when its hold ends.
            while pause && noise.in_flight.load(Ordering::Relaxed) > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let (from, before) = (Instant::now(), noise.sent.load(Ordering::Relaxed));
            tokio::time::sleep_until((switched + slice).max(from + slice - settle).into()).await;
            windows[side].push((from, Instant::now()));
            if side == 1 {
                noisy_bytes += noise.sent.load(Ordering::Relaxed) - before;
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    let samples = quiet.await.expect("quiet tenant");
    noise.stop(tasks).await;
    let noisy_throttled = noise.throttled.load(Ordering::Relaxed);
    let phase = |side: usize, noisy_bytes| {
        let windows = &windows[side];
        let within = |s: &&Sample| windows.iter().any(|(a, b)| s.sent >= *a && s.sent < *b);
        let seconds = windows.iter().map(|(a, b)| (*b - *a).as_secs_f64()).sum();
        let measured = samples.iter().filter(within);
        Phase::of(names[side], measured, noisy_bytes, seconds, noisy_throttled)
    };
    [phase(0, 0.0), phase(1, noisy_bytes as f64)]
}

/// One quiet produce: when it was sent, how long its answer took, whether it was throttled.
struct Sample {
    sent: Instant,
    latency: Duration,
    throttled: bool,
}

/// The quiet tenant, on a thread and runtime of its own, as a separate application would be:
/// on the noisy tenant's runtime its answers would wait behind the noisy tenant's tasks in the
/// client before it read them, and that wait would be counted as the agent's.
async fn quiet_apart(
    bootstrap: impl Into<String>,
    span: Option<Duration>,
    done: Arc<AtomicBool>,
) -> Vec<Sample> {
    let bootstrap = bootstrap.into();
    tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(quiet(&bootstrap, span, &done))
    })
    .await
    .expect("quiet tenant")
}

/// The quiet tenant's produces over `span`, or until `done`.
async fn quiet(bootstrap: &str, span: Option<Duration>, done: &AtomicBool) -> Vec<Sample> {
    let (mut tx, mut rx) = floe::client::connect_as(bootstrap, "quiet")
        .await
        .expect("connect");
    let batch = build_test_batch(-1, -1, -1, 1, 1024);
    let mut samples = Vec::new();
    let started = Instant::now();
    let mut next = started;
    while span.is_none_or(|span| started.elapsed() < span) && !done.load(Ordering::Relaxed) {
        tokio::time::sleep_until(next.into()).await;
        next += QUIET_EVERY;
        let sent = Instant::now();
        let response = floe::client::call(&mut tx, &mut rx, 9, produce_request("quiet", &batch))
            .await
            .expect("produce");
        let latency = sent.elapsed();
        let ResponseBody::Produce(response) = response else {
            panic!("not a Produce response");
        };
        assert_eq!(response.responses[0].partition_responses[0].error_code, 0);
        samples.push(Sample {
            sent,
            latency,
            throttled: response.throttle_time_ms > 0,
        });
        next = next.max(Instant::now());
    }
    samples
}

/// The noisy tenant's connections, and what they share with whoever drives them.
#[derive(Default)]
struct Noise {
    stopped: AtomicBool,
    paused: AtomicBool,
    /// Connections waiting for an answer.
    in_flight: AtomicUsize,
    /// Bytes accepted, and answers that carried a throttle time.
    sent: AtomicU64,
    throttled: AtomicU64,
}

impl Noise {
    /// `connections` of the noisy tenant, sending.
    fn start(bootstrap: &str, connections: usize) -> (Arc<Noise>, Vec<JoinHandle<()>>) {
        let noise = Arc::new(Noise::default());
        let tasks = (0..connections)
            .map(|_| tokio::spawn(noisy(bootstrap.to_string(), noise.clone())))
            .collect();
        (noise, tasks)
    }

    async fn stop(&self, tasks: Vec<JoinHandle<()>>) {
        self.stopped.store(true, Ordering::Relaxed);
        for task in tasks {
            task.await.expect("noisy tenant");
        }
    }
}

/// One connection of the noisy tenant: produces until stopped, but for while paused.
async fn noisy(bootstrap: String, noise: Arc<Noise>) {
    let (mut tx, mut rx) = floe::client::connect_as(&bootstrap, "noisy")
        .await
        .expect("connect");
    let batch = build_test_batch(-1, -1, -1, 256, 1024);
    while !noise.stopped.load(Ordering::Relaxed) {
        if noise.paused.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        noise.in_flight.fetch_add(1, Ordering::Relaxed);
        let response = floe::client::call(&mut tx, &mut rx, 9, produce_request("noisy", &batch))
            .await
            .expect("produce");
        noise.in_flight.fetch_sub(1, Ordering::Relaxed);
        let ResponseBody::Produce(response) = response else {
            panic!("not a Produce response");
        };
        if response.responses[0].partition_responses[0].error_code == 0 {
            noise.sent.fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
        if response.throttle_time_ms > 0 {
            noise.throttled.fetch_add(1, Ordering::Relaxed);
        }
    }
}
