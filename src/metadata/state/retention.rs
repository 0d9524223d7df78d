//! Retention: where a partition's log starts once Kafka's `retention.ms` and `retention.bytes`
//! have been applied. Pure; `MetadataState::enforce_retention` applies it to every partition.
//!
//! As in Kafka, retention drops whole index entries (Kafka: whole segments) from the front: an
//! entry goes when its newest record is older than `retention.ms`, or while the partition
//! without it still holds at least `retention.bytes`. The log start moves to the first entry
//! kept, or to the high watermark when none is. Only topics whose `cleanup.policy` includes
//! `delete` (the default) are retained so; `-1` turns either bound off.

use super::index::PartitionState;
use crate::ids::Offset;
use std::collections::BTreeMap;

/// Kafka's defaults: seven days, no size bound.
pub const RETENTION_MS_DEFAULT: i64 = 7 * 24 * 3_600_000;
pub const RETENTION_BYTES_DEFAULT: i64 = -1;

/// A topic's retention, read from its configs (values are validated before they are stored;
/// an unreadable one counts as unset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub ms: i64,
    pub bytes: i64,
}

impl Retention {
    /// `None` for a topic that is compacted only (nothing is deleted by age or size).
    pub fn of(configs: &BTreeMap<String, String>) -> Option<Retention> {
        let deletes = configs
            .get("cleanup.policy")
            .is_none_or(|p| p.split(',').any(|p| p.trim() == "delete"));
        if !deletes {
            return None;
        }
        let read = |key: &str, default: i64| {
            configs
                .get(key)
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Some(Retention {
            ms: read("retention.ms", RETENTION_MS_DEFAULT),
            bytes: read("retention.bytes", RETENTION_BYTES_DEFAULT),
        })
    }

    /// The log start offset after retention at `now_ms`, or `None` if it stays.
    pub fn new_log_start(&self, partition: &PartitionState, now_ms: i64) -> Option<Offset> {
        let mut bytes = partition.bytes;
        let mut start = None;
        for r in partition.index.iter() {
            let expired = self.ms >= 0 && r.max_timestamp < now_ms.saturating_sub(self.ms);
            let oversize = self.bytes >= 0 && bytes.saturating_sub(r.byte_len) >= self.bytes as u64;
            if !(expired || oversize) {
                break;
            }
            bytes = bytes.saturating_sub(r.byte_len);
            start = Some(r.end_offset);
        }
        start.filter(|s| *s > partition.log_start_offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::BatchRef;
    use crate::metadata::state::objects::ObjectId;

    fn partition(entries: &[(i64, i64, u64, i64)]) -> PartitionState {
        PartitionState {
            log_start_offset: Offset(0),
            high_watermark: Offset(entries.last().map_or(0, |e| e.1)),
            index: entries
                .iter()
                .map(|&(base, end, len, ts)| BatchRef {
                    base_offset: Offset(base),
                    end_offset: Offset(end),
                    object: ObjectId(base as u64),
                    byte_start: 0,
                    byte_len: len,
                    max_timestamp: ts,
                })
                .collect(),
            bytes: entries.iter().map(|e| e.2).sum(),
        }
    }

    fn configs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn by_time_drops_entries_whose_newest_record_is_older_than_retention() {
        let p = partition(&[
            (0, 10, 100, 1_000),
            (10, 20, 100, 5_000),
            (20, 30, 100, 2_000),
        ]);
        let r = Retention::of(&configs(&[("retention.ms", "3000")])).unwrap();
        // At 6000 the cut-off is 3000: the first entry goes, the second (newest 5000) stays
        // and so does the third behind it, although its records are older.
        assert_eq!(r.new_log_start(&p, 6_000), Some(Offset(10)));
        assert_eq!(r.new_log_start(&p, 4_500), Some(Offset(10)));
        assert_eq!(
            r.new_log_start(&p, 4_000),
            None,
            "1,000 is not older than 1,000"
        );
        assert_eq!(r.new_log_start(&p, 100_000), Some(Offset(30)));
    }

    #[test]
    fn by_size_keeps_at_least_retention_bytes() {
        let p = partition(&[(0, 10, 100, 0), (10, 20, 100, 0), (20, 30, 100, 0)]);
        let r = Retention::of(&configs(&[
            ("retention.ms", "-1"),
            ("retention.bytes", "150"),
        ]));
        assert_eq!(r.unwrap().new_log_start(&p, 10), Some(Offset(10)));
        let r = Retention::of(&configs(&[
            ("retention.ms", "-1"),
            ("retention.bytes", "0"),
        ]));
        assert_eq!(r.unwrap().new_log_start(&p, 10), Some(Offset(30)));
        let r = Retention::of(&configs(&[("retention.ms", "-1")]));
        assert_eq!(r.unwrap().new_log_start(&p, i64::MAX), None);
    }

    #[test]
    fn defaults_and_compacted_topics() {
        let r = Retention::of(&BTreeMap::new()).unwrap();
        assert_eq!((r.ms, r.bytes), (RETENTION_MS_DEFAULT, -1));
        assert!(Retention::of(&configs(&[("cleanup.policy", "compact")])).is_none());
        assert!(Retention::of(&configs(&[("cleanup.policy", "compact,delete")])).is_some());
    }
}
