//! Nodes whose wall clocks the test moves: libfaketime (preloaded into each node) reads the
//! node's offset from a file the test rewrites; monotonic time is left alone, as on a host
//! whose NTP failed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct WallClocks {
    dir: PathBuf,
    library: PathBuf,
}

impl WallClocks {
    /// Offsets kept in `dir`, every node's at `+0` to start with.
    pub fn new(dir: &Path, nodes: usize) -> WallClocks {
        let library = PathBuf::from(format!(
            "/usr/lib/{}-linux-gnu/faketime/libfaketimeMT.so.1",
            std::env::consts::ARCH
        ));
        assert!(
            library.exists(),
            "{} is missing: install libfaketime (the README test command does)",
            library.display()
        );
        let clocks = WallClocks {
            dir: dir.to_path_buf(),
            library,
        };
        for id in 1..=nodes {
            clocks.set(id, "+0");
        }
        clocks
    }

    fn file(&self, id: usize) -> PathBuf {
        self.dir.join(format!("node-{id}.skew"))
    }

    /// Moves node `id`'s wall clock by `offset` from the true time: `+3`, `-30` (seconds).
    /// Replaced whole, so libfaketime never reads a half-written file.
    pub fn set(&self, id: usize, offset: &str) {
        let next = self.file(id).with_extension("next");
        std::fs::write(&next, offset).expect("skew file");
        std::fs::rename(&next, self.file(id)).expect("skew file");
    }

    /// Runs node `id` on its skewed wall clock.
    pub fn configure(&self, id: usize, command: &mut Command) {
        command
            .env("LD_PRELOAD", &self.library)
            .env("FAKETIME_TIMESTAMP_FILE", self.file(id))
            // Re-read the offset file every second; monotonic time alone: only the wall clock
            // is wrong, as on a host whose NTP failed.
            .env("FAKETIME_CACHE_DURATION", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
}
