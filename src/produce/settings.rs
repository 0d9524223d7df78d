//! What a topic's configs make the produce path do: Kafka's `max.message.bytes`,
//! `cleanup.policy=compact` (records need keys), `message.timestamp.type` (LogAppendTime
//! stamps batches with the broker's time), the timestamp bounds, and `compression.type`.
//!
//! floe stores batches byte for byte and never recompresses: a topic whose
//! `compression.type` names a codec accepts batches in that codec (or uncompressed control
//! batches) and refuses others with a clear error, where Kafka would recompress them.

use super::timestamps::TimestampPolicy;
use crate::protocol::record_batch::Compression;
use crate::topic_config::catalog;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicSettings {
    /// Largest batch accepted.
    pub max_message_bytes: usize,
    /// `cleanup.policy` includes `compact`: every record needs a key.
    pub compacted: bool,
    /// `message.timestamp.type=LogAppendTime`.
    pub log_append_time: bool,
    pub timestamps: TimestampPolicy,
    /// The codec batches must use, if the topic names one.
    pub compression: Option<Compression>,
}

impl TopicSettings {
    /// The settings of a topic with `configs`. `default_max_bytes` is the broker's
    /// `message.max.bytes`; a topic may raise it up to `ceiling_bytes` (what one produce
    /// request and the produce buffer can hold).
    pub fn of(
        configs: &BTreeMap<String, String>,
        default_max_bytes: usize,
        ceiling_bytes: usize,
    ) -> TopicSettings {
        let get = |name: &str| configs.get(name).map(String::as_str);
        let max_message_bytes = get(catalog::MAX_MESSAGE_BYTES)
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(default_max_bytes)
            .min(ceiling_bytes);
        let compacted = get(catalog::CLEANUP_POLICY)
            .unwrap_or("delete")
            .split(',')
            .any(|p| p.trim() == "compact");
        let compression = match get(catalog::COMPRESSION_TYPE).unwrap_or("producer") {
            "uncompressed" => Some(Compression::None),
            "gzip" => Some(Compression::Gzip),
            "snappy" => Some(Compression::Snappy),
            "lz4" => Some(Compression::Lz4),
            "zstd" => Some(Compression::Zstd),
            _ => None,
        };
        TopicSettings {
            max_message_bytes,
            compacted,
            log_append_time: get(catalog::TIMESTAMP_TYPE) == Some("LogAppendTime"),
            timestamps: TimestampPolicy::of(configs),
            compression,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_become_settings() {
        let configs = BTreeMap::from([
            ("max.message.bytes".to_string(), "5000000".to_string()),
            ("cleanup.policy".to_string(), "delete,compact".to_string()),
            (
                "message.timestamp.type".to_string(),
                "LogAppendTime".to_string(),
            ),
            ("compression.type".to_string(), "zstd".to_string()),
        ]);
        let settings = TopicSettings::of(&configs, 1000, 4_000_000);
        assert_eq!(
            settings.max_message_bytes, 4_000_000,
            "capped at the ceiling"
        );
        assert!(settings.compacted && settings.log_append_time);
        assert_eq!(settings.compression, Some(Compression::Zstd));
        let plain = TopicSettings::of(&BTreeMap::new(), 1000, 4_000_000);
        assert_eq!(plain.max_message_bytes, 1000);
        assert!(!plain.compacted && !plain.log_append_time);
        assert_eq!(plain.compression, None);
    }
}
