//! Each tenant's share of the bytes this agent accepts, for the PUT budget: a tenant taking
//! much more than the others is *heavy*, and its batches do not spend the PUT the budget keeps
//! for the rest (`batcher`'s `Standing`). A tenant is whoever a quota would name: a user and a
//! client id, quota or none.
//!
//! A tenant is heavy when others send too and its rate is above half the mean rate of the
//! tenants sending here. So a tenant alone is never heavy (there is no one to keep a PUT for),
//! tenants sending alike are all heavy (the budget then behaves as though one PUT were saved,
//! which is the same rate of PUTs), and one sending at full speed beside others sending
//! little is heavy while they are light. Rates are exponentially weighted over about a second.
//!
//! A tenant that has sent nothing for a second is no longer one of the tenants sending, and is
//! forgotten: counted with its rate decaying, a neighbour that had stopped lowered the mean
//! until the one tenant still sending was heavy beside it, for as long as fifteen seconds
//! after a burst. Bounded: past `TENANTS_MAX` a new tenant is not tracked (it counts as light:
//! it is new here).
//!
//! Pure: time comes in as an argument.

use std::collections::HashMap;

/// How long a rate remembers (the time constant of its exponential weighting), in ms; a
/// tenant that has sent nothing for this long is no longer sending.
const MEMORY_MS: f64 = 1_000.0;
/// How often tenants no longer sending are forgotten, in ms.
const SWEEP_EVERY_MS: i64 = 100;
/// The most tenants tracked at once.
const TENANTS_MAX: usize = 4_096;

/// Bytes per second, exponentially weighted, as of `at_ms` (when bytes were last added).
#[derive(Debug, Clone, Copy, Default)]
struct Rate {
    per_second: f64,
    at_ms: i64,
}

impl Rate {
    fn at(&self, now_ms: i64) -> f64 {
        let elapsed = (now_ms - self.at_ms).max(0) as f64;
        self.per_second * (-elapsed / MEMORY_MS).exp()
    }

    fn add(&mut self, bytes: f64, now_ms: i64) {
        self.per_second = self.at(now_ms) + bytes * 1_000.0 / MEMORY_MS;
        self.at_ms = self.at_ms.max(now_ms);
    }
}

#[derive(Debug, Default)]
pub struct Shares {
    tenants: HashMap<(String, String), Rate>,
    total: Rate,
    swept_ms: i64,
}

impl Shares {
    /// Counts `bytes` from the tenant (`user`, `client_id`) at `now_ms`, and answers whether
    /// the tenant, so counted, is heavy.
    pub fn count(&mut self, user: &str, client_id: &str, bytes: f64, now_ms: i64) -> bool {
        if now_ms - self.swept_ms >= SWEEP_EVERY_MS {
            self.tenants
                .retain(|_, rate| now_ms - rate.at_ms < MEMORY_MS as i64);
            self.swept_ms = now_ms;
        }
        self.total.add(bytes, now_ms);
        let key = (user.to_string(), client_id.to_string());
        if self.tenants.len() >= TENANTS_MAX && !self.tenants.contains_key(&key) {
            return false;
        }
        let rate = self.tenants.entry(key).or_default();
        rate.add(bytes, now_ms);
        let own = rate.per_second;
        let sending = self.tenants.len();
        sending > 1 && own > self.total.at(now_ms) / sending as f64 / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `tenants` (client id, bytes per 10 ms) for `seconds`; answers who was heavy at
    /// the end.
    fn run(shares: &mut Shares, tenants: &[(&str, f64)], from_ms: i64, seconds: i64) -> Vec<bool> {
        let mut heavy = vec![false; tenants.len()];
        for tick in 0..seconds * 100 {
            for (i, (id, bytes)) in tenants.iter().enumerate() {
                heavy[i] = shares.count("", id, *bytes, from_ms + tick * 10);
            }
        }
        heavy
    }

    #[test]
    fn one_sending_much_beside_others_sending_little_is_heavy() {
        let mut shares = Shares::default();
        // Alone, never heavy.
        assert_eq!(run(&mut shares, &[("noisy", 3e6)], 0, 2), [false]);
        // Beside a tenant sending a thousandth as much: heavy, and the other light.
        let both = [("noisy", 3e6), ("quiet", 1e3)];
        assert_eq!(run(&mut shares, &both, 2_000, 2), [true, false]);
        // Tenants sending alike are all heavy.
        let alike = [("a", 1e5), ("b", 1e5), ("c", 1e5)];
        assert_eq!(run(&mut shares, &alike, 10_000, 5), [true, true, true]);
        // Two sending much beside one sending little.
        let two = [("a", 1e6), ("b", 1e6), ("quiet", 1e3)];
        assert_eq!(run(&mut shares, &two, 20_000, 5), [true, true, false]);
    }

    #[test]
    fn tenants_no_longer_sending_are_forgotten_and_the_map_is_bounded() {
        let mut shares = Shares::default();
        for i in 0..TENANTS_MAX + 10 {
            shares.count("", &i.to_string(), 100.0, 0);
        }
        assert_eq!(shares.tenants.len(), TENANTS_MAX);
        // Untracked, a new tenant is light.
        assert!(!shares.count("", "new", 1e9, 0));
        // A second later they are no longer sending and are swept.
        assert!(!shares.count("", "late", 1.0, 1_000));
        assert_eq!(shares.tenants.len(), 1);
    }

    #[test]
    fn a_tenant_that_stopped_does_not_make_the_one_still_sending_heavy() {
        let mut shares = Shares::default();
        let both = [("noisy", 4e4), ("quiet", 1e3)];
        assert_eq!(run(&mut shares, &both, 0, 2), [true, false]);
        // The noisy tenant stops; for the next twenty seconds the quiet one is the only one
        // sending, and stays light while the noisy one's rate decays below its own.
        for tick in 0..2_000 {
            let at = 2_000 + tick * 10;
            assert!(
                !shares.count("", "quiet", 1e3, at),
                "quiet heavy at {at} ms"
            );
        }
    }
}
