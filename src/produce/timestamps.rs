//! Kafka's record timestamp bounds (KIP-937): a topic with `message.timestamp.before.max.ms`
//! or `message.timestamp.after.max.ms` refuses a batch holding a record stamped further in the
//! past or future than that, with `INVALID_TIMESTAMP`. As in Kafka, only `CreateTime` topics
//! are checked, records without a timestamp (-1) pass, and one bad record fails its batch.
//!
//! An uncompressed batch is checked record by record (`protocol::records`). Records inside a
//! compressed batch are not decompressed on the produce path: its header's base timestamp
//! (the first record's) and max timestamp are checked instead, which catches every batch
//! whose records are in time order, as producers write them.

use crate::protocol::record_batch::RecordBatch;
use crate::topic_config::catalog;
use std::collections::BTreeMap;

pub const BEFORE_MAX_MS: &str = catalog::TIMESTAMP_BEFORE_MAX_MS;
pub const AFTER_MAX_MS: &str = catalog::TIMESTAMP_AFTER_MAX_MS;
pub const TIMESTAMP_TYPE: &str = catalog::TIMESTAMP_TYPE;

/// Kafka's "no timestamp".
const NO_TIMESTAMP: i64 = -1;

/// A topic's bounds; `None` is unbounded (`Long.MAX_VALUE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimestampPolicy {
    pub before_max_ms: Option<i64>,
    pub after_max_ms: Option<i64>,
}

impl TimestampPolicy {
    /// The policy a topic's configs set, with Kafka's defaults for what they leave unset
    /// (no bound in the past, one hour in the future); values were validated when set.
    pub fn of(configs: &BTreeMap<String, String>) -> TimestampPolicy {
        if configs.get(TIMESTAMP_TYPE).map(String::as_str) == Some("LogAppendTime") {
            return TimestampPolicy::default();
        }
        let bound = |key| {
            configs
                .get(key)
                .map(String::as_str)
                .or_else(|| catalog::find(key).map(|d| d.default))
                .and_then(|v| v.parse::<i64>().ok())
                .filter(|&ms| ms >= 0 && ms != i64::MAX)
        };
        TimestampPolicy {
            before_max_ms: bound(BEFORE_MAX_MS),
            after_max_ms: bound(AFTER_MAX_MS),
        }
    }

    fn is_unbounded(&self) -> bool {
        self.before_max_ms.is_none() && self.after_max_ms.is_none()
    }

    /// Kafka's message if a record stamped `timestamp` at `offset_delta` is out of range.
    pub fn refusal(&self, offset_delta: i32, timestamp: i64, now_ms: i64) -> Option<String> {
        if self.is_unbounded() || timestamp == NO_TIMESTAMP {
            return None;
        }
        let earliest = self
            .before_max_ms
            .map_or(i64::MIN, |ms| now_ms.saturating_sub(ms));
        let latest = self
            .after_max_ms
            .map_or(i64::MAX, |ms| now_ms.saturating_add(ms));
        (!(earliest..=latest).contains(&timestamp)).then(|| {
            format!(
                "Timestamp {timestamp} of message with offset delta {offset_delta} is out of \
                 range. The timestamp should be within [{earliest}, {latest}]"
            )
        })
    }

    /// For a batch whose records are not walked (compressed): its first record's timestamp
    /// and its max timestamp, from the header.
    pub fn header_refusal(&self, batch: &RecordBatch, now_ms: i64) -> Option<String> {
        self.refusal(0, batch.base_timestamp(), now_ms)
            .or_else(|| self.refusal(batch.last_offset_delta(), batch.max_timestamp(), now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::{BatchSpec, build_batch};
    use crate::protocol::records::walk;

    /// The first refusal among the batch's records.
    fn walked(policy: &TimestampPolicy, batch: &RecordBatch) -> Option<String> {
        let mut refusal = None;
        walk(batch, |r| {
            if refusal.is_none() {
                refusal = policy.refusal(r.offset_delta, r.timestamp, NOW);
            }
        })
        .unwrap();
        refusal
    }

    const NOW: i64 = 1_700_000_000_000;

    fn batch_at(base_timestamp_ms: i64) -> RecordBatch {
        RecordBatch::new(build_batch(BatchSpec {
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: 3,
            value_bytes: 4,
            base_timestamp_ms,
        }))
        .unwrap()
    }

    fn policy(before: &str, after: &str) -> TimestampPolicy {
        TimestampPolicy::of(&BTreeMap::from([
            (BEFORE_MAX_MS.to_string(), before.to_string()),
            (AFTER_MAX_MS.to_string(), after.to_string()),
        ]))
    }

    #[test]
    fn records_outside_the_bounds_fail_their_batch() {
        let policy = policy("60000", "1000");
        for (base, ok) in [
            (NOW, true),
            (NOW - 60_000, true),
            (NOW - 60_001, false),
            (NOW - 1, true),
        ] {
            let batch = batch_at(base);
            assert_eq!(walked(&policy, &batch).is_none(), ok, "{base}");
            assert_eq!(
                policy.header_refusal(&batch, NOW).is_none(),
                ok,
                "header of {base}"
            );
        }
        // Records are stamped base, base+1, base+2: only the last is too far ahead.
        let batch = batch_at(NOW + 999);
        let error = walked(&policy, &batch).expect("refused");
        assert!(error.contains("offset delta 2"), "{error}");
    }

    #[test]
    fn unset_maximal_and_log_append_time_topics_are_not_checked() {
        let batch = batch_at(0);
        assert!(
            TimestampPolicy::of(&BTreeMap::new())
                .header_refusal(&batch, NOW)
                .is_none()
        );
        // Unset, the future is bounded at an hour, as in Kafka 4.
        assert!(
            TimestampPolicy::of(&BTreeMap::new())
                .header_refusal(&batch_at(NOW + 3_600_001), NOW)
                .is_some()
        );
        assert!(
            policy(&i64::MAX.to_string(), "5")
                .header_refusal(&batch, NOW)
                .is_none()
        );
        assert!(
            policy("5", "5").refusal(0, NO_TIMESTAMP, NOW).is_none(),
            "no timestamp"
        );
        let log_append = BTreeMap::from([
            (BEFORE_MAX_MS.to_string(), "1".to_string()),
            (TIMESTAMP_TYPE.to_string(), "LogAppendTime".to_string()),
        ]);
        assert!(
            TimestampPolicy::of(&log_append)
                .header_refusal(&batch, NOW)
                .is_none()
        );
    }
}
