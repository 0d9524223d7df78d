//! Object key schema.
//!
//! `v1/<created_ms, 13 digits>-<uuid v4>.floe`: keys sort by creation time (GC and
//! tools list them in order) and never repeat, so a retried PUT cannot overwrite another
//! object's data.

pub fn new_object_key(created_ms: i64) -> String {
    format!("v1/{created_ms:013}-{}.floe", uuid::Uuid::new_v4())
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_unique_and_time_ordered() {
        let a = super::new_object_key(5);
        let b = super::new_object_key(5);
        assert_ne!(a, b);
        assert!(super::new_object_key(4) < super::new_object_key(40));
        assert!(a.starts_with("v1/0000000000005-"));
    }
}
