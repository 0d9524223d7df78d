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
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        kind,
        default,
        rule,
        synonyms,
    }
}

const LONG_MAX: &str = "9223372036854775807";

/// Kafka 4.x's topic configs, in its definition order (the order validation reports in).
#[rustfmt::skip]
pub const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    def("segment.bytes", Kind::Int, "1073741824", Rule::AtLeast(1_048_576), &["log.segment.bytes"]),
    def("segment.ms", Kind::Long, "604800000", Rule::AtLeast(1), &["log.roll.ms", "log.roll.hours"]),
    def("segment.jitter.ms", Kind::Long, "0", Rule::AtLeast(0), &["log.roll.jitter.ms", "log.roll.jitter.hours"]),
    def("segment.index.bytes", Kind::Int, "10485760", Rule::AtLeast(4), &["log.index.size.max.bytes"]),
    def("flush.messages", Kind::Long, LONG_MAX, Rule::AtLeast(1), &["log.flush.interval.messages"]),
    def("flush.ms", Kind::Long, LONG_MAX, Rule::AtLeast(0), &["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]),
    def("retention.bytes", Kind::Long, "-1", Rule::Any, &["log.retention.bytes"]),
    def("retention.ms", Kind::Long, "604800000", Rule::AtLeast(-1), &["log.retention.ms", "log.retention.minutes", "log.retention.hours"]),
    def(MAX_MESSAGE_BYTES, Kind::Int, "1048588", Rule::AtLeast(0), &["message.max.bytes"]),
    def("index.interval.bytes", Kind::Int, "4096", Rule::AtLeast(0), &["log.index.interval.bytes"]),
    def("delete.retention.ms", Kind::Long, "86400000", Rule::AtLeast(0), &["log.cleaner.delete.retention.ms"]),
    def(MIN_COMPACTION_LAG_MS, Kind::Long, "0", Rule::AtLeast(0), &["log.cleaner.min.compaction.lag.ms"]),
    def(MAX_COMPACTION_LAG_MS, Kind::Long, LONG_MAX, Rule::AtLeast(1), &["log.cleaner.max.compaction.lag.ms"]),
    def("file.delete.delay.ms", Kind::Long, "60000", Rule::AtLeast(0), &["log.segment.delete.delay.ms"]),
    def("min.cleanable.dirty.ratio", Kind::Double, "0.5", Rule::Fraction, &["log.cleaner.min.cleanable.ratio"]),
    def(CLEANUP_POLICY, Kind::List, "delete", Rule::EachOneOf(&["compact", "delete"]), &["log.cleanup.policy"]),
    def("unclean.leader.election.enable", Kind::Boolean, "false", Rule::Any, &["unclean.leader.election.enable"]),
    def("min.insync.replicas", Kind::Int, "1", Rule::AtLeast(1), &["min.insync.replicas"]),
    def(COMPRESSION_TYPE, Kind::String, "producer", Rule::OneOf(COMPRESSION_TYPES), &["compression.type"]),
    def("compression.gzip.level", Kind::Int, "-1", Rule::GzipLevel, &["compression.gzip.level"]),
    def("compression.lz4.level", Kind::Int, "9", Rule::Between(1, 17), &["compression.lz4.level"]),
    def("compression.zstd.level", Kind::Int, "3", Rule::Between(-131_072, 22), &["compression.zstd.level"]),
    def("preallocate", Kind::Boolean, "false", Rule::Any, &["log.preallocate"]),
    def(TIMESTAMP_TYPE, Kind::String, "CreateTime", Rule::OneOf(&["CreateTime", "LogAppendTime"]), &["log.message.timestamp.type"]),
    def(TIMESTAMP_BEFORE_MAX_MS, Kind::Long, LONG_MAX, Rule::AtLeast(0), &["log.message.timestamp.before.max.ms"]),
    def(TIMESTAMP_AFTER_MAX_MS, Kind::Long, "3600000", Rule::AtLeast(0), &["log.message.timestamp.after.max.ms"]),
    def("leader.replication.throttled.replicas", Kind::List, "", Rule::ThrottledReplicas, &[]),
    def("follower.replication.throttled.replicas", Kind::List, "", Rule::ThrottledReplicas, &[]),
    def("remote.storage.enable", Kind::Boolean, "false", Rule::Any, &[]),
    def("local.retention.ms", Kind::Long, "-2", Rule::AtLeast(-2), &["log.local.retention.ms"]),
    def("local.retention.bytes", Kind::Long, "-2", Rule::AtLeast(-2), &["log.local.retention.bytes"]),
    def("remote.log.copy.disable", Kind::Boolean, "false", Rule::Any, &[]),
    def("remote.log.delete.on.disable", Kind::Boolean, "false", Rule::Any, &[]),
];

/// The config named `name`, if Kafka has one.
pub fn find(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIGS.iter().find(|d| d.name == name)
}
