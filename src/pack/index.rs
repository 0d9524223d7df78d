//! Where each live object lies, and which packs hold live objects (pure).
//!
//! The index decides what a write or a delete frees: a record overwritten or deleted has its
//! blocks given back (a hole punched), and a pack with nothing live left, once it is no
//! longer the one being appended to, is removed whole.

use super::record::{RecordHeader, padded};
use std::collections::{BTreeMap, HashMap};

/// One live object: its record's place in a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub pack: u64,
    /// Where the record (its header) starts.
    pub offset: u64,
    /// Where its payload starts, from the pack's start.
    pub payload_offset: u64,
    pub payload_len: u64,
    pub written_ms: i64,
}

impl Location {
    /// The record `header` describes, starting at `offset` in `pack`.
    pub fn of(pack: u64, offset: u64, header: &RecordHeader) -> Location {
        Location {
            pack,
            offset,
            payload_offset: offset + header.prefix_len(),
            payload_len: header.payload_len,
            written_ms: header.written_ms,
        }
    }

    /// The record with its padding: the bytes a delete gives back.
    pub fn padded_len(&self) -> u64 {
        padded(self.payload_offset - self.offset + self.payload_len)
    }
}

/// What to give back to the filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaim {
    /// The record's blocks, punched out of its pack.
    Record(Location),
    /// The whole pack file: nothing in it is live and nothing more goes into it.
    Pack(u64),
}

#[derive(Debug, Default)]
pub struct Index {
    objects: HashMap<String, Location>,
    /// Live objects per pack, for every pack file that exists.
    live: BTreeMap<u64, usize>,
    /// The pack being appended to.
    active: u64,
}

impl Index {
    pub fn new(active: u64) -> Index {
        let mut index = Index {
            active,
            ..Index::default()
        };
        index.live.insert(active, 0);
        index
    }

    pub fn active(&self) -> u64 {
        self.active
    }

    pub fn get(&self, key: &str) -> Option<Location> {
        self.objects.get(key).copied()
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Packs that exist, oldest first.
    pub fn packs(&self) -> impl Iterator<Item = u64> + '_ {
        self.live.keys().copied()
    }

    /// A pack found on disk (recovery), before its records are inserted.
    pub fn add_pack(&mut self, pack: u64) {
        self.live.entry(pack).or_insert(0);
    }

    /// Records `key` at `at`; what the write frees (the record it replaces).
    pub fn insert(&mut self, key: &str, at: Location) -> Vec<Reclaim> {
        *self.live.entry(at.pack).or_insert(0) += 1;
        match self.objects.insert(key.to_string(), at) {
            Some(old) => self.release(old),
            None => Vec::new(),
        }
    }

    /// Forgets `key`; what the delete frees, or `None` when there was no such object.
    pub fn remove(&mut self, key: &str) -> Option<Vec<Reclaim>> {
        let old = self.objects.remove(key)?;
        Some(self.release(old))
    }

    /// Appends go to `pack` from now on; the previous pack goes if nothing in it is live.
    pub fn roll_to(&mut self, pack: u64) -> Vec<Reclaim> {
        let previous = std::mem::replace(&mut self.active, pack);
        self.live.insert(pack, 0);
        self.drop_if_empty(previous).into_iter().collect()
    }

    /// Packs with nothing live, other than the active one (recovery removes them).
    pub fn empty_packs(&mut self) -> Vec<Reclaim> {
        let empty: Vec<u64> = self
            .live
            .iter()
            .filter(|(pack, live)| **live == 0 && **pack != self.active)
            .map(|(pack, _)| *pack)
            .collect();
        empty
            .into_iter()
            .filter_map(|p| self.drop_if_empty(p))
            .collect()
    }

    /// Keys under `prefix` (`prefix/…`, as object stores list), with their places, in key
    /// order.
    pub fn under(&self, prefix: Option<&str>) -> Vec<(String, Location)> {
        let mut found: Vec<(String, Location)> = self
            .objects
            .iter()
            .filter(|(key, _)| match prefix {
                None | Some("") => true,
                Some(p) => key.starts_with(p) && key[p.len()..].starts_with('/'),
            })
            .map(|(key, at)| (key.clone(), *at))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    fn release(&mut self, old: Location) -> Vec<Reclaim> {
        let Some(live) = self.live.get_mut(&old.pack) else {
            // Cannot happen while the index is consistent; if it does, keep the bytes.
            tracing::error!(
                pack = old.pack,
                "an indexed object's pack is not counted; its space is kept"
            );
            return Vec::new();
        };
        *live -= 1;
        match self.drop_if_empty(old.pack) {
            Some(pack) => vec![pack],
            None => vec![Reclaim::Record(old)],
        }
    }

    fn drop_if_empty(&mut self, pack: u64) -> Option<Reclaim> {
        if pack == self.active || self.live.get(&pack) != Some(&0) {
            return None;
        }
        self.live.remove(&pack);
        Some(Reclaim::Pack(pack))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(pack: u64, offset: u64) -> Location {
        Location {
            pack,
            offset,
            payload_offset: offset + 40,
            payload_len: 10,
            written_ms: 0,
        }
    }

    #[test]
    fn deletes_punch_records_until_a_finished_pack_empties() {
        let mut index = Index::new(1);
        assert!(index.insert("a", at(1, 0)).is_empty());
        assert!(index.insert("b", at(1, 4096)).is_empty());
        // The active pack is never removed, even when nothing in it is live.
        assert_eq!(index.remove("a"), Some(vec![Reclaim::Record(at(1, 0))]));
        assert!(index.roll_to(2).is_empty());
        assert!(index.insert("c", at(2, 0)).is_empty());
        assert_eq!(index.remove("b"), Some(vec![Reclaim::Pack(1)]));
        assert_eq!(index.remove("b"), None);
        assert_eq!(index.packs().collect::<Vec<_>>(), vec![2]);
        assert_eq!(index.remove("c"), Some(vec![Reclaim::Record(at(2, 0))]));
        assert_eq!(index.roll_to(3), vec![Reclaim::Pack(2)]);
    }

    #[test]
    fn an_overwrite_frees_the_record_it_replaces() {
        let mut index = Index::new(1);
        index.insert("a", at(1, 0));
        assert_eq!(
            index.insert("a", at(1, 4096)),
            vec![Reclaim::Record(at(1, 0))]
        );
        assert_eq!(index.get("a"), Some(at(1, 4096)));
        assert_eq!(index.len(), 1);
    }

    #[test]
    fn listing_matches_whole_path_segments() {
        let mut index = Index::new(1);
        for (i, key) in ["objects/a", "objects/b/c", "objectsx/d", "probe/e"]
            .iter()
            .enumerate()
        {
            index.insert(key, at(1, i as u64 * 4096));
        }
        let keys = |p| -> Vec<String> { index.under(p).into_iter().map(|(k, _)| k).collect() };
        assert_eq!(keys(Some("objects")), vec!["objects/a", "objects/b/c"]);
        assert_eq!(keys(Some("objects/b")), vec!["objects/b/c"]);
        assert!(keys(Some("objects/b/c")).is_empty());
        assert_eq!(keys(None).len(), 4);
    }

    #[test]
    fn recovery_removes_the_packs_nothing_lives_in() {
        let mut index = Index::new(5);
        for pack in [2, 3, 4] {
            index.add_pack(pack);
        }
        index.insert("a", at(3, 0));
        let mut gone = index.empty_packs();
        gone.sort_by_key(|r| format!("{r:?}"));
        assert_eq!(gone, vec![Reclaim::Pack(2), Reclaim::Pack(4)]);
        assert_eq!(index.packs().collect::<Vec<_>>(), vec![3, 5]);
    }
}
