//! The disk on its own, without floe: a small durable write (4 KiB, direct I/O,
//! `fdatasync`, one every 20 ms, as the quiet tenant's produce) alone and beside a writer of
//! 1 MiB durable writes at a given rate (the noisy tenant's), in another file, alternating in
//! slices as the tenants do. On local files the quiet tenant's produce makes two such
//! writes, its object's and the Raft log's: the ratio here is what the disk alone does to each.

use super::support::tenants::{Phase, QUIET_EVERY};
use floe::pack::{AlignedBuffer, open_for_append};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SMALL: usize = 4096;
const LARGE: usize = 1 << 20;
/// Writes wrap around within this many bytes of their file, to bound the disk used.
const FILE_BYTES: u64 = 1 << 30;

/// The small writes alone and beside a writer of `rate` bytes per second, `rounds` slices
/// each, the first `settle` of each slice not measured.
pub fn small_writes(
    dir: &Path,
    rounds: usize,
    slice: Duration,
    settle: Duration,
    rate: f64,
) -> [Phase; 2] {
    let (stop, writing) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let writer = {
        let file = open(&dir.join("disk-large"));
        let (stop, writing) = (stop.clone(), writing.clone());
        std::thread::spawn(move || large_writes(&file, rate, &writing, &stop))
    };
    let file = open(&dir.join("disk-small"));
    let mut buffer = AlignedBuffer::default();
    let buffer = &buffer.grow_to(SMALL)[..SMALL];
    let mut latencies: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut offset = 0u64;
    for _ in 0..rounds {
        for side in [0, 1] {
            writing.store(side == 1, Ordering::Relaxed);
            let started = Instant::now();
            let mut next = started;
            while started.elapsed() < slice {
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                next += QUIET_EVERY;
                let sent = Instant::now();
                durable_write(&file, buffer, offset);
                if sent >= started + settle {
                    latencies[side].push(sent.elapsed());
                }
                offset = (offset + SMALL as u64) % FILE_BYTES;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("large writer");
    let seconds = rounds as f64 * (slice - settle).as_secs_f64();
    let [alone, beside] = latencies;
    let phase = |name, latencies, noisy_bytes| Phase {
        name,
        latencies,
        quiet_throttled: 0,
        noisy_bytes,
        seconds,
        noisy_throttled: 0,
    };
    [
        phase("disk alone", alone, 0.0),
        phase("disk, writer", beside, rate * seconds),
    ]
}

/// 1 MiB durable writes at `rate` while `writing`, until `stop`.
fn large_writes(file: &File, rate: f64, writing: &AtomicBool, stop: &AtomicBool) {
    let mut buffer = AlignedBuffer::default();
    let buffer = &buffer.grow_to(LARGE)[..LARGE];
    let every = Duration::from_secs_f64(LARGE as f64 / rate);
    let (mut next, mut offset) = (Instant::now(), 0u64);
    while !stop.load(Ordering::Relaxed) {
        if !writing.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
            next = Instant::now();
            continue;
        }
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        next = (next + every).max(Instant::now());
        durable_write(file, buffer, offset);
        offset = (offset + LARGE as u64) % FILE_BYTES;
    }
}

/// Opens `path` as the packs are: for direct I/O, buffered where it is refused.
fn open(path: &Path) -> File {
    open_for_append(path, false)
        .or_else(|_| open_for_append(path, true))
        .expect("open a file for the disk alone")
}

fn durable_write(file: &File, buffer: &[u8], offset: u64) {
    file.write_all_at(buffer, offset).expect("write");
    file.sync_data().expect("fdatasync");
}
