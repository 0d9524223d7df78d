//! Every topic config Kafka 4.x accepts (its `LogConfig`), with its type, default, rule and
//! the broker configs that set its default (Kafka's `ServerTopicConfigSynonyms`).
//!
//! floe accepts them all, so client configurations written for Kafka work unchanged, and
//! describes them with Kafka's defaults. `effective` says which ones floe acts on; the rest
//! (replication, local segments, flushing, tiering) have no meaning in a diskless broker and
//! are kept and echoed only.

/// A config's type, as DescribeConfigs v3+ reports it (`config_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    String,
    Int,
    Short,
    Long,
    Double,
    List,
}

impl Kind {
    /// Kafka's `ConfigType` id.
    pub fn id(self) -> i8 {
        match self {
            Kind::Boolean => 1,
            Kind::String => 2,
            Kind::Int => 3,
            Kind::Short => 4,
            Kind::Long => 5,
            Kind::Double => 6,
            Kind::List => 7,
        }
    }

    /// The name Kafka's parse errors use ("Not a number of type LONG").
    pub fn name(self) -> &'static str {
        match self {
            Kind::Boolean => "BOOLEAN",
            Kind::String => "STRING",
            Kind::Int => "INT",
            Kind::Short => "SHORT",
            Kind::Long => "LONG",
            Kind::Double => "DOUBLE",
            Kind::List => "LIST",
        }
    }
}

/// What a value must satisfy beyond its type (Kafka's validators).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    Any,
    AtLeast(i64),
    Between(i64, i64),
    Fraction,
    OneOf(&'static [&'static str]),
    EachOneOf(&'static [&'static str]),
    GzipLevel,
    ThrottledReplicas,
}

/// One topic config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopicConfigDef {
    pub name: &'static str,
    pub kind: Kind,
    /// The value DescribeConfigs shows when neither the topic nor floe sets it.
    pub default: &'static str,
    pub rule: Rule,
    /// Broker configs that set the default, the primary one first.
    pub synonyms: &'static [&'static str],
    /// What the config means, and what floe does with it (DescribeConfigs' documentation).
    pub doc: &'static str,
}

pub const CLEANUP_POLICY: &str = "cleanup.policy";
pub const COMPRESSION_TYPE: &str = "compression.type";
pub const MAX_MESSAGE_BYTES: &str = "max.message.bytes";
pub const TIMESTAMP_TYPE: &str = "message.timestamp.type";
pub const TIMESTAMP_BEFORE_MAX_MS: &str = "message.timestamp.before.max.ms";
pub const TIMESTAMP_AFTER_MAX_MS: &str = "message.timestamp.after.max.ms";
pub const MIN_COMPACTION_LAG_MS: &str = "min.compaction.lag.ms";
pub const MAX_COMPACTION_LAG_MS: &str = "max.compaction.lag.ms";

pub const COMPRESSION_TYPES: &[&str] =
    &["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"];

const fn def(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    rule: Rule,
    synonyms: &'static [&'static str],
    doc: &'static str,
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        kind,
        default,
        rule,
        synonyms,
        doc,
    }
}

const LONG_MAX: &str = "9223372036854775807";

/// Kafka 4.x's topic configs, in its definition order (the order validation reports in).
#[rustfmt::skip]
pub const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    def("segment.bytes", Kind::Int, "1073741824", Rule::AtLeast(1_048_576), &["log.segment.bytes"], "The size at which Kafka closes a log segment file and starts the next. floe uses it as the target size of the segment objects its background compaction merges a partition's small runs into (never more than retention.bytes when that is set)."),
    def("segment.ms", Kind::Long, "604800000", Rule::AtLeast(1), &["log.roll.ms", "log.roll.hours"], "How long Kafka keeps a segment open before rolling a new one, even if it is not full. Accepted and shown for compatibility, but no effect in floe: it has no open segment files to roll, and background compaction cuts segments by size."),
    def("segment.jitter.ms", Kind::Long, "0", Rule::AtLeast(0), &["log.roll.jitter.ms", "log.roll.jitter.hours"], "A random amount Kafka takes off segment.ms so that segments do not all roll at the same time. Accepted and shown for compatibility, but no effect in floe, which rolls no segments by time."),
    def("segment.index.bytes", Kind::Int, "10485760", Rule::AtLeast(4), &["log.index.size.max.bytes"], "The size Kafka preallocates for the offset and time index files of each segment. Accepted and shown for compatibility, but no effect in floe: it keeps no local index files, and a segment object's index footer is sized to its data."),
    def("flush.messages", Kind::Long, LONG_MAX, Rule::AtLeast(1), &["log.flush.interval.messages"], "How many messages Kafka lets accumulate in the log before it forces an fsync to disk. Accepted and shown for compatibility, but no effect in floe: there is no local log to sync; data lives in the object store, written once in whole objects."),
    def("flush.ms", Kind::Long, LONG_MAX, Rule::AtLeast(0), &["log.flush.interval.ms", "log.flush.scheduler.interval.ms"], "How long Kafka lets a message sit in the log before it forces an fsync to disk. Accepted and shown for compatibility, but no effect in floe: there is no local log to sync; data lives in the object store, written once in whole objects."),
    def("retention.bytes", Kind::Long, "-1", Rule::Any, &["log.retention.bytes"], "The most data a partition keeps before Kafka deletes its oldest segments (-1: no size limit). floe enforces it when cleanup.policy includes delete: the collector drops whole runs or segments from the front of the partition, and no segment is built larger than this."),
    def("retention.ms", Kind::Long, "604800000", Rule::AtLeast(-1), &["log.retention.ms", "log.retention.minutes", "log.retention.hours"], "How long Kafka keeps records before their segment may be deleted (-1: forever). floe enforces it when cleanup.policy includes delete: the collector drops the oldest runs or segments whose newest record is older than this."),
    def(MAX_MESSAGE_BYTES, Kind::Int, "1048588", Rule::AtLeast(0), &["message.max.bytes"], "The largest record batch Kafka accepts for this topic. floe enforces it on produce (the broker's message.max.bytes when the topic does not set it), capped at what one produce request and the produce buffer can hold."),
    def("index.interval.bytes", Kind::Int, "4096", Rule::AtLeast(0), &["log.index.interval.bytes"], "How many bytes of records Kafka writes between two entries of a segment's offset index. floe uses it the same way for the offset and time index in the footer of each segment object it writes."),
    def("delete.retention.ms", Kind::Long, "86400000", Rule::AtLeast(0), &["log.cleaner.delete.retention.ms"], "How long the tombstones (delete markers) of a compacted topic stay once a cleaning pass has first seen them, so that consumers still see them. floe's cleaner stamps each batch holding tombstones with that horizon (Kafka's delete horizon) and drops them at the first pass after it."),
    def(MIN_COMPACTION_LAG_MS, Kind::Long, "0", Rule::AtLeast(0), &["log.cleaner.min.compaction.lag.ms"], "The least time a record stays uncompacted in a compacted topic. floe's cleaner leaves an index entry whose newest record (by its timestamp) is younger than this."),
    def(MAX_COMPACTION_LAG_MS, Kind::Long, LONG_MAX, Rule::AtLeast(1), &["log.cleaner.max.compaction.lag.ms"], "The most time a record may stay uncompacted in a compacted topic. floe's cleaner runs a pass, whatever the dirty ratio, once the oldest uncleaned entry's newest record is older than this."),
    def("file.delete.delay.ms", Kind::Long, "60000", Rule::AtLeast(0), &["log.segment.delete.delay.ms"], "How long Kafka waits before deleting a segment file from disk once it has left the log. Accepted and shown for compatibility, but no effect in floe: it has no local files, and the collector deletes objects no longer referenced after its own grace period."),
    def("min.cleanable.dirty.ratio", Kind::Double, "0.5", Rule::Fraction, &["log.cleaner.min.cleanable.ratio"], "The share of a compacted log that must be uncompacted before the cleaner compacts it. floe's cleaner compares it with the bytes not yet cleaned over all the bytes it may clean."),
    def(CLEANUP_POLICY, Kind::List, "delete", Rule::EachOneOf(&["compact", "delete"]), &["log.cleanup.policy"], "What Kafka does with old records: delete them by retention.ms and retention.bytes, compact them to the latest record per key, or both. floe applies retention when the list includes delete; with compact it requires every record to have a key, and its cleaner keeps the latest record of each key (tombstones for delete.retention.ms), offsets unchanged."),
    def("unclean.leader.election.enable", Kind::Boolean, "false", Rule::Any, &["unclean.leader.election.enable"], "Whether Kafka may elect a replica that is not in sync as leader, at the risk of losing records. Accepted and shown for compatibility, but no effect in floe: it does not replicate partitions between brokers; their data lives in the object store."),
    def("min.insync.replicas", Kind::Int, "1", Rule::AtLeast(1), &["min.insync.replicas"], "With acks=all, the least number of in-sync replicas Kafka needs before it acknowledges a write. Accepted and shown for compatibility, but no effect in floe: there are no broker replicas; a write is acknowledged once its object is in the object store and committed to the metadata quorum."),
    def(COMPRESSION_TYPE, Kind::String, "producer", Rule::OneOf(COMPRESSION_TYPES), &["compression.type"], "The codec Kafka stores the topic's batches in: producer keeps the producer's codec, any other value makes Kafka recompress. floe never recompresses: with producer it stores batches as sent, and with a named codec it refuses batches in any other codec (uncompressed control batches aside)."),
    def("compression.gzip.level", Kind::Int, "-1", Rule::GzipLevel, &["compression.gzip.level"], "The gzip level Kafka uses when it recompresses batches for compression.type=gzip. Accepted and shown for compatibility, but no effect in floe, which stores batches as the producer compressed them."),
    def("compression.lz4.level", Kind::Int, "9", Rule::Between(1, 17), &["compression.lz4.level"], "The lz4 level Kafka uses when it recompresses batches for compression.type=lz4. Accepted and shown for compatibility, but no effect in floe, which stores batches as the producer compressed them."),
    def("compression.zstd.level", Kind::Int, "3", Rule::Between(-131_072, 22), &["compression.zstd.level"], "The zstd level Kafka uses when it recompresses batches for compression.type=zstd. Accepted and shown for compatibility, but no effect in floe, which stores batches as the producer compressed them."),
    def("preallocate", Kind::Boolean, "false", Rule::Any, &["log.preallocate"], "Whether Kafka preallocates a new segment's file on disk. Accepted and shown for compatibility, but no effect in floe: it has no local segment files; data lives in the object store, written once in whole objects."),
    def(TIMESTAMP_TYPE, Kind::String, "CreateTime", Rule::OneOf(&["CreateTime", "LogAppendTime"]), &["log.message.timestamp.type"], "Whether record timestamps are the producer's (CreateTime) or the broker's time when it appends them (LogAppendTime). floe enforces it: with LogAppendTime it stamps each batch with its own clock when it accepts it."),
    def(TIMESTAMP_BEFORE_MAX_MS, Kind::Long, LONG_MAX, Rule::AtLeast(0), &["log.message.timestamp.before.max.ms"], "How far in the past a record's timestamp may be before Kafka refuses the batch (CreateTime topics only). floe enforces it on produce with INVALID_TIMESTAMP; for a compressed batch it checks the header's first and max timestamps rather than each record."),
    def(TIMESTAMP_AFTER_MAX_MS, Kind::Long, "3600000", Rule::AtLeast(0), &["log.message.timestamp.after.max.ms"], "How far in the future a record's timestamp may be before Kafka refuses the batch (CreateTime topics only). floe enforces it on produce with INVALID_TIMESTAMP; for a compressed batch it checks the header's first and max timestamps rather than each record."),
    def("leader.replication.throttled.replicas", Kind::List, "", Rule::ThrottledReplicas, &[], "The replicas whose replication Kafka throttles on the leader's side, as during a reassignment. Accepted and shown for compatibility, but no effect in floe: it does not replicate partitions between brokers; their data lives in the object store."),
    def("follower.replication.throttled.replicas", Kind::List, "", Rule::ThrottledReplicas, &[], "The replicas whose replication Kafka throttles on the follower's side, as during a reassignment. Accepted and shown for compatibility, but no effect in floe: it does not replicate partitions between brokers; their data lives in the object store."),
    def("remote.storage.enable", Kind::Boolean, "false", Rule::Any, &[], "Whether Kafka tiers the topic's closed segments to remote storage. floe refuses true, as Kafka does on a broker without tiered storage: every byte is in the object store already, so there is no local tier to move it from."),
    def("local.retention.ms", Kind::Long, "-2", Rule::AtLeast(-2), &["log.local.retention.ms"], "With tiered storage, how long Kafka keeps segments on local disk (-2: as long as retention.ms). Accepted and shown for compatibility, but no effect in floe: it has no local tier, so retention.ms alone applies."),
    def("local.retention.bytes", Kind::Long, "-2", Rule::AtLeast(-2), &["log.local.retention.bytes"], "With tiered storage, how much data Kafka keeps on local disk per partition (-2: as much as retention.bytes). Accepted and shown for compatibility, but no effect in floe: it has no local tier, so retention.bytes alone applies."),
    def("remote.log.copy.disable", Kind::Boolean, "false", Rule::Any, &[], "With tiered storage, stops Kafka copying new segments to remote storage. Accepted and shown for compatibility, but no effect in floe, which has no tiered storage: data is in the object store from the start."),
    def("remote.log.delete.on.disable", Kind::Boolean, "false", Rule::Any, &[], "With tiered storage, whether Kafka deletes the remote data when tiering is turned off for the topic. Accepted and shown for compatibility, but no effect in floe, which has no tiered storage."),
];

/// The config named `name`, if Kafka has one.
pub fn find(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIGS.iter().find(|d| d.name == name)
}
