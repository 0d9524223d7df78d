//! The randomness seam: one seeded generator per node, handed down from the process root, so
//! object keys, member ids, retry jitter and injected faults repeat exactly for a given seed.
//!
//! This is the one module allowed to draw on the operating system's entropy
//! (`clippy.toml` forbids `Uuid::new_v4` elsewhere): `Rng::from_entropy` seeds a node that was
//! given no seed.

use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// SplitMix64: fast, good enough for jitter, ids and simulation, not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(f64::MIN_POSITIVE);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// A random (version 4) UUID.
    pub fn uuid(&mut self) -> Uuid {
        let bytes = (u128::from(self.next_u64()) << 64 | u128::from(self.next_u64())).to_be_bytes();
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

/// A node's shared generator: cheap to clone, safe to draw from any task.
#[derive(Debug, Clone)]
pub struct Rng(Arc<Mutex<SplitMix64>>);

impl Rng {
    pub fn seeded(seed: u64) -> Rng {
        Rng(Arc::new(Mutex::new(SplitMix64::new(seed))))
    }

    /// Node `node`'s generator in a run seeded with `seed`: nodes of one run draw different
    /// sequences.
    pub fn seeded_for(seed: u64, node: crate::ids::NodeId) -> Rng {
        Rng::seeded(seed ^ SplitMix64::new(node.0).next_u64())
    }

    /// Seeded from the operating system, for a node given no seed.
    #[allow(clippy::disallowed_methods)] // the one draw on real entropy
    pub fn from_entropy() -> Rng {
        // A v4 uuid has 122 random bits; folding its halves leaves every bit random.
        let (high, low) = Uuid::new_v4().as_u64_pair();
        Rng::seeded(high ^ low)
    }

    fn with<T>(&self, f: impl FnOnce(&mut SplitMix64) -> T) -> T {
        let mut inner = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut inner)
    }

    pub fn next_u64(&self) -> u64 {
        self.with(SplitMix64::next_u64)
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&self) -> f64 {
        self.with(SplitMix64::uniform)
    }

    pub fn uuid(&self) -> Uuid {
        self.with(SplitMix64::uuid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_values() {
        let (a, b) = (Rng::seeded(42), Rng::seeded(42));
        assert_eq!(a.uuid(), b.uuid());
        assert_eq!(a.next_u64(), b.next_u64());
        assert_ne!(a.uuid(), Rng::seeded(43).uuid());
        let id = a.uuid();
        assert_eq!(id.get_version_num(), 4, "{id}");
        let (node1, node2) = (crate::ids::NodeId(1), crate::ids::NodeId(2));
        assert_ne!(
            Rng::seeded_for(7, node1).uuid(),
            Rng::seeded_for(7, node2).uuid()
        );
    }
}
