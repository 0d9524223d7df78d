//! A noisy neighbour, as the test command runs it: a quiet tenant under its quota beside a
//! tenant producing as fast as it is answered, first without a quota, then held to one while
//! it ignores its throttle times (`tests/support/tenants.rs`).
//!
//! What is asserted is what does not depend on timing: the quiet tenant is never throttled,
//! every one of its produces succeeds, the noisy tenant goes unthrottled without a quota and is
//! held to its quota (and its first burst) with one, and the agent counts the noisy tenant's
//! batches as heavy (they leave the PUT budget's second saved PUT to the quiet tenant) and the
//! quiet tenant's alone as light. The quiet tenant's latencies are printed
//! beside its latencies alone, not asserted: a latency ratio is a timed assertion, and a debug
//! build on a shared machine says little about it. The benchmark (`cargo bench --bench
//! noisy_neighbour`) measures them on a release build.
//!
//! Its own test binary, so that no other test shares the machine while the noisy tenant runs.

// Real processes over real sockets, in real time.
#![allow(clippy::disallowed_methods)]

mod support;

use std::time::Duration;
use support::raw::{create_topic, set_quota};
use support::tenants::{Phase, phase, report};
use support::{Floe, metric, temp_dir};

/// Each phase's measured span.
const SPAN: Duration = Duration::from_secs(10);
/// The noisy tenant's connections, and how long both tenants send before the quiet one is
/// measured.
const CONNECTIONS: usize = 4;
const WARM_UP: Duration = Duration::from_secs(3);
/// The quotas: the noisy tenant's when it has one (its burst is eleven of its requests, so it
/// is held however slow the machine), and the quiet tenant's (it sends 50 KiB/s).
const NOISY_QUOTA: f64 = 262_144.0;
const QUIET_QUOTA: f64 = 1_048_576.0;
/// The first burst, in seconds of quota.
const BURST: f64 = 11.0;
/// A noisy produce request at most: 256 records of 1 KiB and their framing.
const REQUEST_BYTES_MAX: f64 = 270_000.0;

#[test]
fn a_noisy_tenant_neither_throttles_nor_fails_a_quiet_one() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    let bootstrap = floe.bootstrap();
    create_topic(&bootstrap, "quiet", 1);
    create_topic(&bootstrap, "noisy", 1);
    let quiet_entity = [("client-id", Some("quiet"))];
    set_quota(&bootstrap, &quiet_entity, "producer_byte_rate", QUIET_QUOTA);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let measure =
        |name, connections| runtime.block_on(phase(name, &bootstrap, SPAN, connections, WARM_UP));
    let heavy = || metric(floe.admin, "floe_produce_batches_total{standing=\"heavy\"}");
    let alone = measure("quiet alone", 0);
    assert_eq!(heavy(), Some(0.0), "the quiet tenant alone was heavy");
    let unbounded = measure("noisy, no quota", CONNECTIONS);
    // Without a quota, the noisy tenant is heavy by its rate beside the quiet one.
    let heavy_unbounded = heavy().expect("the heavy batches' metric");
    assert!(heavy_unbounded > 0.0, "the noisy tenant was never heavy");
    let noisy_entity = [("client-id", Some("noisy"))];
    set_quota(&bootstrap, &noisy_entity, "producer_byte_rate", NOISY_QUOTA);
    let held = measure("noisy, quota", CONNECTIONS);
    let phases = [alone, unbounded, held];
    report(&phases);
    let [alone, unbounded, held]: &[Phase; 3] = &phases;

    for phase in [alone, unbounded, held] {
        assert_eq!(
            phase.quiet_throttled, 0,
            "{}: quiet tenant throttled",
            phase.name
        );
        assert!(
            !phase.latencies.is_empty(),
            "{}: nothing measured",
            phase.name
        );
    }
    assert_eq!(unbounded.noisy_throttled, 0, "throttled without a quota");
    assert!(
        held.noisy_throttled > 0,
        "the noisy tenant was never throttled"
    );
    // What it moved while measured: no more than its quota over that time, its first burst
    // (if the warm-up had not spent it) and a request on each connection.
    let most = NOISY_QUOTA * (held.seconds + BURST) + CONNECTIONS as f64 * REQUEST_BYTES_MAX;
    assert!(
        held.noisy_bytes <= most,
        "{:.0} bytes in {:.1} s against a quota of {NOISY_QUOTA} B/s",
        held.noisy_bytes,
        held.seconds
    );
}
