//! Object key schema.
//!
//! `v1/<created_ms, 13 digits>-<uuid v4>.floe`: keys sort by creation time (GC and
//! tools list them in order) and never repeat, so a retried PUT cannot overwrite another
//! object's data. The uuid comes from the node's seeded generator, so a simulation names
//! objects the same way on every run.

use crate::ids::ObjectKey;
use crate::random::Rng;

pub fn new_object_key(created_ms: i64, rng: &Rng) -> ObjectKey {
    ObjectKey::new(format!("v1/{created_ms:013}-{}.floe", rng.uuid()))
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
}
