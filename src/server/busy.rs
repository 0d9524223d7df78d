//! The time a request keeps the agent busy: the time its code runs (each poll of its
//! futures, and its decoding), not the time it waits (for a commit, a long poll).
//!
//! Kafka charges a client's `request_percentage` quota with the time its requests take on
//! the broker's request handler threads, up to the point a request is parked (its
//! `requestThreadTimeNanos`). floe's requests run as futures on the runtime's threads, so
//! their thread time is the sum of their polls: the same measure, taken the only way it
//! exists here.

use crate::clock::Clock;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// One request's busy time, shared by the futures that serve it. Timing is off (and free)
/// for a client no request quota binds.
#[derive(Debug, Clone, Default)]
pub struct Busy(Option<Arc<Spent>>);

#[derive(Debug)]
struct Spent {
    clock: Clock,
    nanos: AtomicU64,
    /// Taken to be charged (once per request).
    taken: AtomicBool,
}

impl Busy {
    /// Timing on `clock`, or off.
    pub fn new(clock: &Clock, timed: bool) -> Busy {
        Busy(timed.then(|| {
            Arc::new(Spent {
                clock: clock.clone(),
                nanos: AtomicU64::new(0),
                taken: AtomicBool::new(false),
            })
        }))
    }

    /// Adds the time since `began` (on the clock `new` was given), which the request spent
    /// outside what `run` times.
    pub fn add_since(&self, began: tokio::time::Instant) {
        if let Some(s) = &self.0 {
            let spent = s.clock.now().saturating_duration_since(began);
            let nanos = u64::try_from(spent.as_nanos()).unwrap_or(u64::MAX);
            s.nanos.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Runs `future`, adding the time each of its polls takes.
    pub async fn run<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        std::future::poll_fn(|cx| {
            let Some(s) = &self.0 else {
                return future.as_mut().poll(cx);
            };
            let began = s.clock.now();
            let polled = future.as_mut().poll(cx);
            self.add_since(began);
            polled
        })
        .await
    }

    /// The time spent so far, the first time it is asked for (a request is charged once);
    /// `None` after that, or when timing is off.
    pub fn take(&self) -> Option<Duration> {
        let s = self.0.as_ref()?;
        if s.taken.swap(true, Ordering::Relaxed) {
            return None;
        }
        Some(Duration::from_nanos(s.nanos.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a paused clock, time moves only when the test moves it: a poll that moves it is
    /// busy for that long, a wait between polls is not.
    #[tokio::test(start_paused = true)]
    async fn polls_are_timed_waits_are_not_and_it_is_taken_once() {
        let clock = Clock::system();
        let busy = Busy::new(&clock, true);
        let began = clock.now();
        tokio::time::advance(Duration::from_millis(1)).await;
        busy.add_since(began);
        let out = busy
            .run(async {
                // A second of waiting, between polls.
                clock.sleep(Duration::from_secs(1)).await;
                7
            })
            .await;
        assert_eq!(out, 7);
        let spent = busy.take().expect("timed");
        assert_eq!(spent, Duration::from_millis(1), "waiting is not busy");
        assert_eq!(busy.take(), None, "charged once");
    }

    #[tokio::test]
    async fn off_is_off() {
        let clock = Clock::system();
        let busy = Busy::new(&clock, false);
        assert_eq!(busy.run(async { 1 }).await, 1);
        busy.add_since(clock.now());
        assert_eq!(busy.take(), None);
    }
}
