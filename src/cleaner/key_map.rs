//! The latest offset of each key in a partition's dirty section, in bounded memory: Kafka's
//! `SkimpyOffsetMap`. A key is held as a 16-byte digest beside its offset, 24 bytes an entry
//! whatever the key's length, in an open-addressing table filled to at most 90% (Kafka's
//! `log.cleaner.io.buffer.load.factor`). Two keys whose digests collide would be taken for
//! one; at 128 bits that does not happen at any key count a partition holds.

use super::transactions::Transactions;
use crate::protocol::compression::decompressed_limit;
use crate::protocol::record_batch::RecordBatch;
use crate::protocol::records::{self, RecordsError};

/// The bytes one entry takes: a 16-byte digest and an 8-byte offset.
pub const ENTRY_BYTES: usize = 24;

/// How full the table may get before it counts as full (Kafka's default load factor).
const LOAD_FACTOR: f64 = 0.9;

#[derive(Clone, Copy)]
struct Slot {
    digest: [u8; 16],
    /// -1: empty.
    offset: i64,
}

pub struct KeyMap {
    slots: Vec<Slot>,
    entries: usize,
    most: usize,
    /// One past the last offset put: records at or after it are beyond what the map covers.
    end: Option<i64>,
}

impl KeyMap {
    /// A map in `memory` bytes (at least one entry).
    pub fn with_memory(memory: usize) -> KeyMap {
        let slots = (memory / ENTRY_BYTES).max(1);
        KeyMap {
            slots: vec![
                Slot {
                    digest: [0; 16],
                    offset: -1
                };
                slots
            ],
            entries: 0,
            most: ((slots as f64 * LOAD_FACTOR) as usize).max(1),
            end: None,
        }
    }

    /// The memory a map needs to hold `keys` distinct keys (`with_memory`).
    pub fn memory_for(keys: u64) -> u64 {
        let slots = (keys as f64 / LOAD_FACTOR).ceil() as u64 + 1;
        slots.saturating_mul(ENTRY_BYTES as u64)
    }

    /// How many keys the map holds.
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// How many distinct keys it can hold.
    pub fn capacity(&self) -> usize {
        self.most
    }

    /// One past the last offset put into the map (`None` before any): the end of the section
    /// a pass cleans. A record at or after it is kept whatever its key.
    pub fn end_offset(&self) -> Option<i64> {
        self.end
    }

    /// Records `key` at `offset` (offsets come in increasing order). `false` when the key is
    /// new and the map is full: nothing is changed then.
    pub fn put(&mut self, key: &[u8], offset: i64) -> bool {
        let digest = digest(key);
        let at = self.position(&digest);
        let slot = &mut self.slots[at];
        if slot.offset < 0 {
            if self.entries >= self.most {
                return false;
            }
            self.entries += 1;
            slot.digest = digest;
        }
        slot.offset = offset;
        self.end = Some(offset + 1);
        true
    }

    /// The latest offset recorded for `key`.
    pub fn get(&self, key: &[u8]) -> Option<i64> {
        let slot = self.slots[self.position(&digest(key))];
        (slot.offset >= 0).then_some(slot.offset)
    }

    /// The slot holding `digest`, or the empty one it would go in (linear probing; the table
    /// is never full, so one is found).
    fn position(&self, digest: &[u8; 16]) -> usize {
        let start = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"));
        let mut at = (start % self.slots.len() as u64) as usize;
        loop {
            let slot = &self.slots[at];
            if slot.offset < 0 || &slot.digest == digest {
                return at;
            }
            at = (at + 1) % self.slots.len();
        }
    }

    /// Puts the keys of `batches` (a partition's dirty section, from `first_dirty` on, in
    /// offset order) into the map, as Kafka's `buildOffsetMap` does: records of aborted
    /// transactions and markers are left out. Stops at the first key that does not fit.
    /// `end_offset` then says how far the pass covers: at least the clean section before
    /// `first_dirty` (its keys are each other's latest already), then as far as the map got.
    /// `aborted` is the partition's aborted transactions, by first offset.
    pub fn build<'a>(
        &mut self,
        first_dirty: i64,
        batches: impl IntoIterator<Item = &'a RecordBatch>,
        aborted: &[AbortedTxn],
    ) -> Result<(), RecordsError> {
        self.end = Some(self.end.map_or(first_dirty, |end| end.max(first_dirty)));
        let mut transactions = Transactions::new(aborted);
        for batch in batches {
            let base = batch.base_offset();
            let skipped = if batch.is_control() {
                transactions.on_marker(batch);
                true
            } else {
                transactions.on_data(batch)
            };
            if skipped {
                // Nothing of it is a key's latest: covered all the same.
                self.end = Some(self.end.unwrap_or(base).max(base + batch.offset_count()));
                continue;
            }
            for record in records::decode(batch, decompressed_limit(batch.size()))? {
                let Some(key) = &record.key else { continue };
                if !self.put(key, base + i64::from(record.offset_delta)) {
                    return Ok(());
                }
            }
            // The whole batch is covered, its gaps included.
            self.end = Some(self.end.unwrap_or(base).max(base + batch.offset_count()));
        }
        Ok(())
    }
}

use super::transactions::AbortedTxn;

fn digest(key: &[u8]) -> [u8; 16] {
    let full = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, key);
    full.as_ref()[..16]
        .try_into()
        .expect("a SHA-256 digest has 32 bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_offset_of_each_key_and_stops_when_full() {
        let mut map = KeyMap::with_memory(10 * ENTRY_BYTES);
        assert_eq!(map.capacity(), 9);
        for offset in 0..9 {
            assert!(map.put(format!("k{offset}").as_bytes(), offset));
        }
        assert!(map.put(b"k3", 20), "an update of a known key always fits");
        assert!(!map.put(b"new", 21), "a new key does not fit");
        assert_eq!(map.get(b"k3"), Some(20));
        assert_eq!(map.get(b"k4"), Some(4));
        assert_eq!(map.get(b"new"), None);
        assert_eq!(map.end_offset(), Some(21));
        assert_eq!(map.len(), 9);
    }

    #[test]
    fn a_map_sized_for_a_key_count_holds_that_many() {
        for keys in (0..2_000).chain([65_535, 1_000_000]) {
            let memory = usize::try_from(KeyMap::memory_for(keys)).unwrap();
            let map = KeyMap::with_memory(memory);
            assert!(
                map.capacity() as u64 >= keys,
                "{keys} keys in {memory} bytes"
            );
            assert!(
                memory as u64 <= (keys + 2) * 27,
                "{keys} keys: about 27 bytes each"
            );
        }
    }
}
