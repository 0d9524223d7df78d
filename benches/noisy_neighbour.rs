//! A noisy neighbour: how much one tenant sending as fast as it can slows another that stays
//! under its quota, with and without a quota on the noisy one.
//!
//! One `floe serve` (the embedded default) and the two tenants of `tests/support/tenants.rs`:
//! a quiet one sending a 1 KiB produce every 20 ms, a noisy one sending 256 KiB produces as
//! fast as they are answered, ignoring throttle times. Two parts, in one run: the noisy
//! tenant without a quota, then held to a `producer_byte_rate` (held by muting, since it
//! ignores throttle times). In each, after both tenants warm the agent (the noisy tenant's
//! first eleven seconds' quota pass at once, as in Kafka), the noisy tenant pauses and
//! resumes in 5 s slices, and the quiet tenant's latencies alone and beside it are taken from
//! alternate slices (`tenants::alternating`): this machine's speed drifts over minutes, and
//! phases measured minutes apart compared two machines. The test command runs the same
//! tenants, shorter, one phase after another, on a debug build, in
//! `tests/noisy_neighbour.rs`; the latencies are measured here.
//!
//! Run: `cargo bench --bench noisy_neighbour` (`FLOE_NOISY_SECONDS`, default 30, is what is
//! measured on each side; `FLOE_NOISY_QUOTA`, default 4194304, the noisy tenant's quota in
//! bytes per second; `FLOE_NOISY_CONNECTIONS`, default 4, its connections;
//! `FLOE_NOISY_SERVE_ARGS` adds flags to `floe serve`, say
//! `--object-store-latency s3-standard --flush-interval 250ms` for a cloud store's latency).
//!
//! On local files (no `--object-store…` flag) it then measures the disk on its own
//! (`noisy_neighbour/disk.rs`): a small durable write alone and beside a writer at the noisy
//! tenant's rate, in the same data directory: what the disk alone does to the kind of write
//! the quiet tenant's produce makes, to read the quiet tenant's ratio against.

// A benchmark in real time against a real process.
#![allow(clippy::disallowed_methods)]

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "noisy_neighbour/disk.rs"]
mod disk;

use std::time::Duration;
use support::raw::{create_topic, set_quota};
use support::tenants::{QUIET_EVERY, alternating, report};
use support::{Floe, temp_dir};

const WARM_UP: Duration = Duration::from_secs(12);
/// Alone and beside alternate in slices this long, the first `SETTLE` of each not measured.
const SLICE: Duration = Duration::from_secs(5);
const SETTLE: Duration = Duration::from_secs(1);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
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
    let rounds = span.as_secs_f64() / (SLICE - SETTLE).as_secs_f64();
    let rounds = rounds.ceil() as usize;
    let run = |names| {
        let measured = alternating(
            names,
            &bootstrap,
            rounds,
            SLICE,
            SETTLE,
            connections,
            WARM_UP,
        );
        runtime.block_on(measured)
    };
    let unbounded = run(["quiet alone", "noisy, no quota"]);
    set_quota(
        &bootstrap,
        &[("client-id", Some("noisy"))],
        "producer_byte_rate",
        quota,
    );
    let held = run(["quiet alone", "noisy, quota"]);
    println!(
        "quiet tenant: a 1 KiB produce every {} ms; noisy tenant: {connections} connections of 256 KiB produces; quota {:.1} MiB/s; alone and beside alternating in {} s slices, {} s measured each side; floe serve {}",
        QUIET_EVERY.as_millis(),
        quota / 1_048_576.0,
        SLICE.as_secs(),
        span.as_secs(),
        serve_args.join(" ")
    );
    report(&unbounded);
    report(&held);
    if serve_args
        .iter()
        .any(|arg| arg.starts_with("--object-store"))
    {
        return;
    }
    let rate = unbounded[1].noisy_rate();
    let floor = disk::small_writes(dir.path(), rounds, SLICE, SETTLE, rate);
    println!(
        "the disk on its own: a 4 KiB durable write every {} ms, alone and beside 1 MiB durable writes at the noisy tenant's rate",
        QUIET_EVERY.as_millis()
    );
    report(&floor);
}
