//! Random values for the codec round-trip tests.

use bytes::Bytes;

/// Random, valid-for-the-version values of a generated struct (round-trip tests).
pub trait Sample {
    fn sample(rng: &mut SampleRng, version: i16) -> Self;
}

/// A small deterministic generator (SplitMix64) so a failing seed reproduces exactly.
pub struct SampleRng(u64);

impl SampleRng {
    pub fn new(seed: u64) -> Self {
        SampleRng(seed)
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
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
