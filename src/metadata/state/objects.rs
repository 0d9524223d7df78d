//! The objects the partitions' indexes point into: each key stored once, under a small id the
//! index entries carry, with a count of the entries that refer to it. An object no entry refers
//! to any more (its runs were compacted into segments, fell out of retention, or its topic was
//! deleted) becomes dead; the collector deletes it from the store once it has been dead for a
//! grace period (reads planned before it died may still be under way), then the state forgets
//! it. A live object is never handed to the collector: that is what `refs` is for.

use crate::ids::ObjectKey;
use imbl::OrdMap;
use serde::{Deserialize, Serialize};

/// An object's id in the state: what index entries carry instead of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ObjectId(pub u64);

/// Where a segment's footer (its offset and time index) lies in the segment object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FooterAt {
    pub start: u64,
    pub len: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredObject {
    pub key: ObjectKey,
    /// Index entries that point into it.
    pub refs: u32,
    /// The state's time when it was committed.
    pub committed_ms: i64,
    /// Set for a segment (one partition's data, written by compaction); produce objects hold
    /// runs of many partitions and have none.
    pub footer: Option<FooterAt>,
}

impl StoredObject {
    pub fn is_segment(&self) -> bool {
        self.footer.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadObject {
    pub key: ObjectKey,
    /// The state's time when its last reference went.
    pub since_ms: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Objects {
    next_id: u64,
    #[serde(deserialize_with = "super::persistent::ord_map")]
    live: OrdMap<ObjectId, StoredObject>,
    #[serde(deserialize_with = "super::persistent::ord_map")]
    dead: OrdMap<ObjectId, DeadObject>,
    /// Live and dead keys, so a key is never registered twice (a compactor's segment key
    /// must be new) and the orphan sweep can tell a known key from a stray one.
    #[serde(deserialize_with = "super::persistent::ord_map")]
    by_key: OrdMap<ObjectKey, ObjectId>,
}

impl Objects {
    pub fn get(&self, id: ObjectId) -> Option<&StoredObject> {
        self.live.get(&id)
    }

    pub fn key(&self, id: ObjectId) -> Option<&ObjectKey> {
        self.live.get(&id).map(|o| &o.key)
    }

    /// The id of a key the state knows, live or dead.
    pub fn id_of(&self, key: &ObjectKey) -> Option<ObjectId> {
        self.by_key.get(key).copied()
    }

    /// Whether the state knows the key, live or dead.
    pub fn knows(&self, key: &ObjectKey) -> bool {
        self.id_of(key).is_some()
    }

    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    pub fn dead(&self) -> impl Iterator<Item = (ObjectId, &DeadObject)> {
        self.dead.iter().map(|(id, d)| (*id, d))
    }

    pub fn dead_count(&self) -> usize {
        self.dead.len()
    }

    /// Registers a new object with no references yet; `None` if the key is known.
    pub(super) fn register(
        &mut self,
        key: ObjectKey,
        now_ms: i64,
        footer: Option<FooterAt>,
    ) -> Option<ObjectId> {
        if self.by_key.contains_key(&key) {
            return None;
        }
        let id = ObjectId(self.next_id);
        self.next_id += 1;
        self.by_key.insert(key.clone(), id);
        self.live.insert(
            id,
            StoredObject {
                key,
                refs: 0,
                committed_ms: now_ms,
                footer,
            },
        );
        Some(id)
    }

    pub(super) fn add_ref(&mut self, id: ObjectId) {
        if let Some(object) = self.live.get_mut(&id) {
            object.refs = object.refs.saturating_add(1);
        }
    }

    pub(super) fn drop_ref(&mut self, id: ObjectId, now_ms: i64) {
        if let Some(object) = self.live.get_mut(&id) {
            object.refs = object.refs.saturating_sub(1);
        }
        self.bury_if_unreferenced(id, now_ms);
    }

    /// Moves an object without references to the dead (a commit whose batches were all
    /// refused or duplicates leaves its object so too).
    pub(super) fn bury_if_unreferenced(&mut self, id: ObjectId, now_ms: i64) {
        if self.live.get(&id).is_some_and(|o| o.refs == 0)
            && let Some(object) = self.live.remove(&id)
        {
            self.dead.insert(
                id,
                DeadObject {
                    key: object.key,
                    since_ms: now_ms,
                },
            );
        }
    }

    /// Forgets dead objects the collector has deleted; live ones are never forgotten.
    pub(super) fn forget(&mut self, ids: &[ObjectId]) -> usize {
        let mut forgotten = 0;
        for id in ids {
            if let Some(dead) = self.dead.remove(id) {
                self.by_key.remove(&dead.key);
                forgotten += 1;
            }
        }
        forgotten
    }
}
