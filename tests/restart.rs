//! Crash and restart: kill -9 the broker mid-load, restart on the same data directory; every
//! acknowledged record is there at its acknowledged offset, and offsets continue after it.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use support::kafka::{Seen, consume, flush, load_until_stopped, produce, producer};
use support::{Floe, temp_dir};

#[test]
fn acked_records_survive_a_crash_and_offsets_continue() {
    let dir = temp_dir();
    let data = dir.path().join("data");
    let mut floe = Floe::start(&data, &["--default-partitions", "4"]);
    let bootstrap = floe.bootstrap();
    let (p, acks) = producer(&bootstrap, "lz4");
    let stop = Arc::new(AtomicBool::new(false));
    // Undelivered records fail after message.timeout.ms; only acks count, so the final
    // flush's result does not matter.
    let load = load_until_stopped(p, "crash", 4, 500, stop.clone(), Duration::from_secs(1));
    // Let acknowledgements accumulate on every partition, then crash the broker in the middle
    // of the load.
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let counts: Vec<usize> = (0..4)
            .map(|p| {
                acks.by_partition
                    .lock()
                    .unwrap()
                    .get(&p)
                    .map_or(0, Vec::len)
            })
            .collect();
        if counts.iter().all(|&n| n >= 1_250) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "acks per partition stayed at {counts:?}; producer errors: {:?}",
            acks.errors.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    floe.kill();
    stop.store(true, Ordering::Relaxed);
    let _ = load.join().expect("producer thread");
    let acked: BTreeMap<i32, Vec<Seen>> = acks.by_partition.lock().unwrap().clone();
    assert!(acked.values().map(Vec::len).sum::<usize>() >= 5_000);

    let floe = Floe::start(&data, &["--default-partitions", "4"]);
    // Read everything that was committed: at least every acked offset.
    let high: BTreeMap<i32, usize> = acked
        .iter()
        .map(|(p, v)| {
            (
                *p,
                v.iter().map(|r| r.offset).max().unwrap_or(-1) as usize + 1,
            )
        })
        .collect();
    let got = consume(&floe.bootstrap(), "crash", &high);
    for (partition, records) in &acked {
        let read = &got[partition];
        for a in records {
            let r = read
                .get(a.offset as usize)
                .unwrap_or_else(|| panic!("offset {} missing", a.offset));
            assert_eq!(
                (r.offset, &r.key, &r.value),
                (a.offset, &a.key, &a.value),
                "partition {partition}"
            );
        }
    }

    // New writes continue after the highest committed offset of each partition.
    let (p, acks) = producer(&floe.bootstrap(), "none");
    produce(&p, "crash", 4, 8, "after");
    flush(&p);
    let before = acked;
    for (partition, records) in acks.by_partition.lock().unwrap().iter() {
        let last_acked = before
            .get(partition)
            .and_then(|v| v.iter().map(|r| r.offset).max())
            .unwrap_or(-1);
        assert!(
            records[0].offset > last_acked,
            "partition {partition}: offsets went backwards"
        );
    }
}

/// A broker restarted on another port shows its new address from its first Metadata answer:
/// its previous life's registration, whose lease has not run out, names a port that no
/// longer answers (clients sent there see "broker transport failure").
#[test]
fn a_restarted_broker_shows_its_new_address_at_once() {
    use floe::protocol::messages::{MetadataRequest, RequestBody, ResponseBody};
    let dir = temp_dir();
    let data = dir.path().join("data");
    Floe::start(&data, &[] as &[&str]).stop();
    for _ in 0..3 {
        let mut again = Floe::start(&data, &[] as &[&str]);
        let answer = support::kafka_call(
            &again.bootstrap(),
            12,
            RequestBody::Metadata(MetadataRequest::default()),
        );
        let ResponseBody::Metadata(metadata) = answer else {
            panic!("not a metadata answer: {answer:?}");
        };
        let ports: Vec<i32> = metadata.brokers.iter().map(|b| b.port).collect();
        assert_eq!(ports, vec![i32::from(again.addr.port())], "{metadata:?}");
        again.stop();
    }
}
