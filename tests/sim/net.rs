//! The simulated network: every message between simulated nodes waits here for its delivery
//! time. Loss, delay (and so reordering) and partitions are drawn from the run's generator.

use super::{Addr, Msg};
use floe::random::SplitMix64;
use std::collections::BTreeSet;

/// One message on the wire.
pub struct InFlight {
    pub deliver_at: u64,
    /// Send order: ties on `deliver_at` deliver in it, so a run repeats exactly.
    pub seq: u64,
    pub from: Addr,
    pub to: Addr,
    pub msg: Msg,
}

pub struct Network {
    in_flight: Vec<InFlight>,
    sent: u64,
    /// Directed links that drop everything: `(from, to)`.
    cut: BTreeSet<(Addr, Addr)>,
    pub loss: f64,
    pub delay_min_ms: u64,
    pub delay_max_ms: u64,
}

impl Network {
    pub fn new(loss: f64) -> Network {
        Network {
            in_flight: Vec::new(),
            sent: 0,
            cut: BTreeSet::new(),
            loss,
            delay_min_ms: 1,
            delay_max_ms: 12,
        }
    }

    pub fn send(&mut self, rng: &mut SplitMix64, now: u64, from: Addr, to: Addr, msg: Msg) {
        if self.cut.contains(&(from, to)) || rng.uniform() < self.loss {
            return;
        }
        let spread = self.delay_max_ms - self.delay_min_ms + 1;
        let deliver_at = now + self.delay_min_ms + rng.next_u64() % spread;
        self.sent += 1;
        self.in_flight.push(InFlight {
            deliver_at,
            seq: self.sent,
            from,
            to,
            msg,
        });
    }

    /// The messages due at `now`, in delivery order.
    pub fn due(&mut self, now: u64) -> Vec<InFlight> {
        let (mut due, later): (Vec<_>, Vec<_>) =
            self.in_flight.drain(..).partition(|m| m.deliver_at <= now);
        self.in_flight = later;
        due.sort_by_key(|m| (m.deliver_at, m.seq));
        due
    }

    /// Cuts `a` off from every node of `others`, one way (`a` hears nothing from them) or both.
    pub fn isolate(&mut self, a: Addr, others: impl Iterator<Item = Addr>, both_ways: bool) {
        for b in others.filter(|&b| b != a) {
            self.cut.insert((b, a));
            if both_ways {
                self.cut.insert((a, b));
            }
        }
    }

    pub fn heal(&mut self) {
        self.cut.clear();
    }

    pub fn is_cut(&self) -> bool {
        !self.cut.is_empty()
    }
}
