//! A write-through cache of recently uploaded objects.
//!
//! The produce pipeline puts every object it uploads here; fetches of fresh data (consumers
//! keeping up, the common case) are served from memory instead of a ranged GET, so end-to-end
//! latency is close to produce latency and GET requests (and their cost) stay low. Bounded by
//! bytes (`Config::object_cache_bytes_max`); the least recently used objects go first.

use bytes::Bytes;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct ObjectCache {
    objects: Option<moka::sync::Cache<String, Bytes>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl ObjectCache {
    /// A cache holding at most `bytes_max` bytes of objects; 0 disables it.
    pub fn new(bytes_max: u64) -> ObjectCache {
        let objects = (bytes_max > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(bytes_max)
                .weigher(|_key: &String, object: &Bytes| {
                    u32::try_from(object.len()).unwrap_or(u32::MAX)
                })
                .build()
        });
        ObjectCache {
            objects,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub fn insert(&self, key: &str, object: Bytes) {
        if let Some(cache) = &self.objects {
            cache.insert(key.to_string(), object);
        }
    }

    /// The bytes of `range` in object `key`, if the object is cached and holds the range.
    pub fn get_range(&self, key: &str, range: Range<u64>) -> Option<Bytes> {
        let found = self.lookup(key, range);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Reads served from the cache, and reads that went to the store.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// Bytes of objects held now.
    pub fn bytes(&self) -> u64 {
        self.objects.as_ref().map_or(0, |c| {
            c.run_pending_tasks();
            c.weighted_size()
        })
    }

    fn lookup(&self, key: &str, range: Range<u64>) -> Option<Bytes> {
        let object = self.objects.as_ref()?.get(key)?;
        let (start, end) = (
            usize::try_from(range.start).ok()?,
            usize::try_from(range.end).ok()?,
        );
        (start <= end && end <= object.len()).then(|| object.slice(start..end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_cached_ranges_and_nothing_else() {
        let cache = ObjectCache::new(1 << 20);
        cache.insert("a", Bytes::from_static(b"0123456789"));
        assert_eq!(cache.get_range("a", 2..5), Some(Bytes::from_static(b"234")));
        assert_eq!(cache.get_range("a", 8..11), None, "beyond the object");
        assert_eq!(cache.get_range("b", 0..1), None);
        assert_eq!(cache.hits_and_misses(), (1, 2));
        let off = ObjectCache::new(0);
        off.insert("a", Bytes::from_static(b"x"));
        assert_eq!(off.get_range("a", 0..1), None);
    }
}
