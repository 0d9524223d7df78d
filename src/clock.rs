//! The time seam: every read of the clock and every wait goes through a `Clock`.
//!
//! Pure code (state machine, batcher, planners) never reads it: time arrives as an argument.
//! The shells around them hold a `Clock` handed down from the process root, so a test or a
//! simulation can give a node a clock of its own — today a skewed wall clock (`Clock::skewed`);
//! waits run on tokio's timer, which `tokio::time::pause` makes virtual and deterministic.
//! This is the one module allowed to call `SystemTime::now`, `Instant::now` and
//! `tokio::time::sleep` (`clippy.toml` forbids them elsewhere).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use tokio::time::Instant;
pub use tokio::time::error::Elapsed;

/// Where a `Clock` reads the time.
pub trait TimeSource: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch by this node's wall clock.
    fn wall_ms(&self) -> i64;
}

/// The operating system's wall clock.
#[derive(Debug)]
struct SystemTime;

impl TimeSource for SystemTime {
    #[allow(clippy::disallowed_methods)] // the one real wall-clock read
    fn wall_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

/// Another clock shifted by a fixed amount: a node whose wall clock is wrong.
#[derive(Debug)]
struct Skewed {
    inner: Arc<dyn TimeSource>,
    skew_ms: i64,
}

impl TimeSource for Skewed {
    fn wall_ms(&self) -> i64 {
        self.inner.wall_ms().saturating_add(self.skew_ms)
    }
}

/// A cheap handle to a node's clock: wall time (for timestamps and what the quorum leader
/// proposes as the state's time) and monotonic time with waits (for timeouts and intervals
/// this node measures alone).
#[derive(Debug, Clone)]
pub struct Clock {
    wall: Arc<dyn TimeSource>,
    /// Where `monotonic_ms` counts from.
    origin: Instant,
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::system()
    }
}

impl Clock {
    /// The real clock.
    #[allow(clippy::disallowed_methods)]
    pub fn system() -> Clock {
        Clock {
            wall: Arc::new(SystemTime),
            origin: Instant::now(),
        }
    }

    /// This clock with its wall time moved by `skew_ms` (negative: behind).
    pub fn skewed(&self, skew_ms: i64) -> Clock {
        Clock {
            wall: Arc::new(Skewed {
                inner: self.wall.clone(),
                skew_ms,
            }),
            origin: self.origin,
        }
    }

    /// Milliseconds since the Unix epoch (0 if the clock is before it).
    pub fn now_ms(&self) -> i64 {
        self.wall.wall_ms()
    }

    /// Milliseconds of monotonic time since this clock was made: for durations this node
    /// measures alone (a group member's session), which a wall clock that jumps would cut
    /// short or stretch.
    pub fn monotonic_ms(&self) -> i64 {
        let since = self.now().saturating_duration_since(self.origin);
        i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
    }

    /// Monotonic now, on tokio's timer (virtual when the runtime's time is paused).
    #[allow(clippy::disallowed_methods)]
    pub fn now(&self) -> Instant {
        Instant::now()
    }

    #[allow(clippy::disallowed_methods)]
    pub async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await
    }

    #[allow(clippy::disallowed_methods)]
    pub async fn sleep_until(&self, deadline: Instant) {
        tokio::time::sleep_until(deadline).await
    }

    /// Runs `future` for at most `duration`.
    #[allow(clippy::disallowed_methods)]
    pub async fn timeout<F: Future>(
        &self,
        duration: Duration,
        future: F,
    ) -> Result<F::Output, Elapsed> {
        tokio::time::timeout(duration, future).await
    }

    /// Runs `future` until `deadline` at the latest.
    #[allow(clippy::disallowed_methods)]
    pub async fn timeout_at<F: Future>(
        &self,
        deadline: Instant,
        future: F,
    ) -> Result<F::Output, Elapsed> {
        tokio::time::timeout_at(deadline, future).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skewed_clock_moves_wall_time_only() {
        let clock = Clock::system();
        let ahead = clock.skewed(60_000);
        let difference = ahead.now_ms() - clock.now_ms();
        assert!((59_000..=61_000).contains(&difference), "{difference}");
        assert!(ahead.skewed(-60_000).now_ms() - clock.now_ms() < 1_000);
    }

    #[tokio::test(start_paused = true)]
    async fn waits_follow_the_runtime_timer() {
        let clock = Clock::system();
        let start = clock.now();
        clock.sleep(Duration::from_secs(3600)).await;
        assert!(clock.now() - start >= Duration::from_secs(3600));
        let never = std::future::pending::<()>();
        assert!(clock.timeout(Duration::from_secs(5), never).await.is_err());
    }
}
