//! Object key schema.
//!
//! `v1/<created_ms, 13 digits>-<uuid v4>.floe` for produce objects, `.seg` for segments
//! (`.cleaned.seg` for those the cleaner of a compacted topic writes): keys
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

/// A new key for a segment the cleaner of a compacted topic wrote: a segment like any, whose
/// name says its batches hold only what a cleaning pass kept (`is_cleaned_segment`), and the
/// earliest delete horizon among its tombstones and markers, if it keeps any
/// (`delete_horizon`): past it, a pass has something to drop.
pub fn new_cleaned_segment_key(created_ms: i64, horizon_ms: Option<i64>, rng: &Rng) -> ObjectKey {
    let horizon = horizon_ms.map_or(String::new(), |h| format!(".h{:013}", h.max(0)));
    ObjectKey::new(format!(
        "{PREFIX}{created_ms:013}-{}{horizon}{CLEANED}.seg",
        rng.uuid()
    ))
}

const CLEANED: &str = ".cleaned";

/// Whether `key` names a segment the cleaner wrote: a compacted partition's entries up to the
/// last such segment are its clean section (Kafka's cleaner checkpoint).
pub fn is_cleaned_segment(key: &str) -> bool {
    is_segment(key) && key.ends_with(&format!("{CLEANED}.seg"))
}

/// The earliest delete horizon a cleaned segment's name carries.
pub fn delete_horizon(key: &str) -> Option<i64> {
    let name = key.strip_suffix(&format!("{CLEANED}.seg"))?;
    let (_, horizon) = name.rsplit_once(".h")?;
    horizon.parse().ok()
}

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
    let name = name.strip_suffix(CLEANED).unwrap_or(name);
    let name = name.rsplit_once(".h").map_or(name, |(before, _)| before);
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
        let cleaned = new_cleaned_segment_key(77, None, &rng);
        assert_eq!(created_ms(cleaned.as_str()), Some(77));
        assert!(is_segment(cleaned.as_str()) && is_cleaned_segment(cleaned.as_str()));
        assert_eq!(delete_horizon(cleaned.as_str()), None);
        let horizon = new_cleaned_segment_key(78, Some(5_000), &rng);
        assert_eq!(created_ms(horizon.as_str()), Some(78));
        assert!(is_cleaned_segment(horizon.as_str()));
        assert_eq!(delete_horizon(horizon.as_str()), Some(5_000));
        assert!(!is_cleaned_segment(new_segment_key(77, &rng).as_str()));
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
