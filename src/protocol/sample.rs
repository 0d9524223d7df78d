//! Random values for the codec round-trip tests.

use crate::random::SplitMix64;
use bytes::Bytes;

/// Random, valid-for-the-version values of a generated struct (round-trip tests).
pub trait Sample {
    fn sample(rng: &mut SampleRng, version: i16) -> Self;
}

/// Random values from a seed, so a failing seed reproduces exactly.
pub struct SampleRng(SplitMix64);

impl SampleRng {
    pub fn new(seed: u64) -> Self {
        SampleRng(SplitMix64::new(seed))
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    pub fn bool(&mut self) -> bool {
        self.next() & 1 == 1
    }

    pub fn uuid(&mut self) -> uuid::Uuid {
        uuid::Uuid::from_u64_pair(self.next(), self.next())
    }

    pub fn string(&mut self) -> String {
        let len = (self.next() % 12) as usize;
        (0..len)
            .map(|_| ['a', 'Z', '0', '-', '.', 'é', '€', '_'][(self.next() % 8) as usize])
            .collect()
    }

    pub fn bytes(&mut self) -> Bytes {
        let len = (self.next() % 40) as usize;
        (0..len)
            .map(|_| self.next() as u8)
            .collect::<Vec<u8>>()
            .into()
    }

    pub fn vec<T>(&mut self, mut item: impl FnMut(&mut Self) -> T) -> Vec<T> {
        let len = (self.next() % 4) as usize;
        (0..len).map(|_| item(self)).collect()
    }
}
