//! Object key schema.
//!
//! `v1/<created_ms, 13 digits>-<uuid v4>.floe` for produce objects, `.seg` for segments: keys
//! sort by creation time (GC and tools list them in order) and never repeat, so a retried PUT
//! cannot overwrite another object's data. The uuid comes from the node's seeded generator, so
//! a simulation names objects the same way on every run.

use crate::ids::ObjectKey;
use crate::random::Rng;

pub fn new_object_key(created_ms: i64, rng: &Rng) -> ObjectKey {
    ObjectKey::new(format!("{PREFIX}{created_ms:013}-{}.floe", rng.uuid()))
}

pub fn new_segment_key(created_ms: i64, rng: &Rng) -> ObjectKey {
    ObjectKey::new(format!("{PREFIX}{created_ms:013}-{}.seg", rng.uuid()))
}

/// Where every key floe writes starts (what the orphan sweep lists).
pub const PREFIX: &str = "v1/";

/// Whether `key` names a segment (one partition's batches, written by compaction) rather than
/// a produce object.
pub fn is_segment(key: &str) -> bool {
    key.starts_with(PREFIX) && key.ends_with(".seg")
}

/// When an object of floe's key schema was created; `None` for any other key (the orphan
/// sweep leaves what it did not write alone).
pub fn created_ms(key: &str) -> Option<i64> {
    let name = key.strip_prefix(PREFIX)?;
    let name = name
        .strip_suffix(".floe")
        .or_else(|| name.strip_suffix(".seg"))?;
    let (ms, uuid) = name.split_once('-')?;
    if ms.len() != 13 || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    uuid::Uuid::parse_str(uuid).ok()?;
    ms.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_time_ordered() {
        let rng = Rng::seeded(1);
        let a = new_object_key(5, &rng);
        let b = new_object_key(5, &rng);
        assert_ne!(a, b);
        assert!(new_object_key(4, &rng) < new_object_key(40, &rng));
        assert!(a.as_str().starts_with("v1/0000000000005-"));
        assert_eq!(
            new_object_key(5, &Rng::seeded(1)),
            a,
            "the same seed, the same key"
        );
    }

    #[test]
    fn the_creation_time_is_read_back_from_floe_keys_only() {
        let rng = Rng::seeded(2);
        assert_eq!(created_ms(new_object_key(1234, &rng).as_str()), Some(1234));
        assert_eq!(created_ms(new_segment_key(99, &rng).as_str()), Some(99));
        for other in [
            "v1/0000000001234-x.floe",
            "probe/0000000001234-0f8fad5b-d9cb-469f-a165-70867728950e",
            "v1/123-0f8fad5b-d9cb-469f-a165-70867728950e.floe",
            "v1/0000000001234-0f8fad5b-d9cb-469f-a165-70867728950e.tmp",
        ] {
            assert_eq!(created_ms(other), None, "{other}");
        }
    }
}
