//! The CPU an in-process agent spends, apart from the load generator beside it: the agent runs
//! on its own runtime whose threads carry one name, and Linux counts each thread's time on CPU
//! (`/proc/self/task/<tid>/schedstat`, in nanoseconds).

use std::time::Duration;

/// The agent runtime's thread name (at most 15 bytes: Linux truncates longer names).
pub const THREAD_NAME: &str = "floe-agent";

/// A runtime for an in-process agent. Its blocking threads live as long as it does, so no
/// thread's CPU time leaves the count by exiting mid-run.
pub fn agent_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name(THREAD_NAME)
        .thread_keep_alive(Duration::from_secs(24 * 3600))
        .enable_all()
        .build()
}

/// Core-seconds spent so far by this process's threads whose names begin with `name` (the
/// agent's own threads, such as the pack writer, are named `floe-agent-…`); `None` where the
/// kernel does not say (not Linux, or no scheduler statistics).
pub fn thread_cpu_seconds(name: &str) -> Option<f64> {
    let mut nanos = 0u64;
    let mut seen = false;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let path = task.path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
            continue; // the thread exited while we looked
        };
        if !comm.trim_end().starts_with(name) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(path.join("schedstat")) else {
            continue;
        };
        if let Some(on_cpu) = stat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
        {
            nanos += on_cpu;
            seen = true;
        }
    }
    seen.then_some(nanos as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_named_thread_is_counted_and_others_are_not() {
        if std::fs::metadata("/proc/self/task").is_err() {
            return; // not Linux: the figure is reported as unknown
        }
        let before = thread_cpu_seconds("floe-cpu-test").unwrap_or(0.0);
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (counted, measured) = std::sync::mpsc::channel::<Option<f64>>();
        let busy = std::thread::Builder::new()
            .name("floe-cpu-test".into())
            .spawn(move || {
                let mut x = 0u64;
                for i in 0..50_000_000u64 {
                    x = x.wrapping_mul(31).wrapping_add(i);
                }
                std::hint::black_box(x);
                counted.send(thread_cpu_seconds("floe-cpu-test")).unwrap();
                wait.recv().unwrap();
            })
            .unwrap();
        let spent = measured.recv().unwrap().expect("the busy thread is seen") - before;
        done.send(()).unwrap();
        busy.join().unwrap();
        assert!(spent > 0.0, "{spent}");
        assert_eq!(thread_cpu_seconds("floe-no-such-thread"), None);
    }
}
