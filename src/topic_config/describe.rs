//! How DescribeConfigs shows a topic's configs, as Kafka's `ConfigHelper` does: every config,
//! with its value, where the value comes from (the topic, the broker, or the default) and,
//! when asked, its synonyms from the most to the least specific.

use super::catalog::TOPIC_CONFIGS;
use std::collections::BTreeMap;

/// Kafka's `ConfigSource` ids.
pub const SOURCE_TOPIC: i8 = 1;
pub const SOURCE_STATIC_BROKER: i8 = 4;
pub const SOURCE_DEFAULT: i8 = 5;

/// The broker configs whose own default is null in Kafka: a topic config they set shows no
/// default synonym (Kafka drops the list up to the primary synonym, which then is absent).
const NULL_PRIMARY_DEFAULT: &[&str] = &[
    "retention.ms",
    "segment.ms",
    "segment.jitter.ms",
    "flush.ms",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synonym {
    pub name: String,
    pub value: String,
    pub source: i8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub value: String,
    pub source: i8,
    pub synonyms: Vec<Synonym>,
    /// Kafka's `ConfigType` id (0: unknown, for a name Kafka does not define).
    pub config_type: i8,
    /// What the config means (DescribeConfigs v3+, when asked); `None` for a name Kafka does
    /// not define.
    pub documentation: Option<String>,
}

/// The entries of a topic whose configs are `configs`; `broker` holds the topic configs that
/// floe's own settings change from Kafka's defaults (by topic config name).
pub fn topic_entries(
    configs: &BTreeMap<String, String>,
    broker: &BTreeMap<&str, String>,
) -> Vec<Entry> {
    let mut entries: Vec<Entry> = TOPIC_CONFIGS
        .iter()
        .map(|def| {
            let mut synonyms = Vec::new();
            if let Some(value) = configs.get(def.name) {
                synonyms.push(Synonym {
                    name: def.name.to_string(),
                    value: value.clone(),
                    source: SOURCE_TOPIC,
                });
            }
            if let Some(primary) = def.synonyms.first() {
                if let Some(value) = broker.get(def.name) {
                    synonyms.push(Synonym {
                        name: primary.to_string(),
                        value: value.clone(),
                        source: SOURCE_STATIC_BROKER,
                    });
                }
                if !NULL_PRIMARY_DEFAULT.contains(&def.name) {
                    synonyms.push(Synonym {
                        name: primary.to_string(),
                        value: def.default.to_string(),
                        source: SOURCE_DEFAULT,
                    });
                }
            }
            let value = configs
                .get(def.name)
                .or_else(|| broker.get(def.name))
                .cloned()
                .unwrap_or_else(|| def.default.to_string());
            Entry {
                name: def.name.to_string(),
                value,
                source: synonyms.first().map_or(SOURCE_DEFAULT, |s| s.source),
                synonyms,
                config_type: def.kind.id(),
                documentation: Some(def.doc.to_string()),
            }
        })
        .collect();
    // Names Kafka does not know (stored before floe validated names) are shown as set.
    for (name, value) in configs {
        if !entries.iter().any(|e| &e.name == name) {
            entries.push(Entry {
                name: name.clone(),
                value: value.clone(),
                source: SOURCE_TOPIC,
                synonyms: vec![Synonym {
                    name: name.clone(),
                    value: value.clone(),
                    source: SOURCE_TOPIC,
                }],
                config_type: 0,
                documentation: None,
            });
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_follow_where_the_value_comes_from() {
        let configs = BTreeMap::from([("retention.ms".to_string(), "1000".to_string())]);
        let broker = BTreeMap::from([("max.message.bytes", "2000000".to_string())]);
        let entries = topic_entries(&configs, &broker);
        assert_eq!(entries.len(), 33);
        let get = |name: &str| entries.iter().find(|e| e.name == name).unwrap().clone();
        let retention = get("retention.ms");
        assert_eq!(
            (retention.value.as_str(), retention.source),
            ("1000", SOURCE_TOPIC)
        );
        assert_eq!(retention.synonyms.len(), 1);
        let max = get("max.message.bytes");
        assert_eq!(
            (max.value.as_str(), max.source),
            ("2000000", SOURCE_STATIC_BROKER)
        );
        assert_eq!(
            max.synonyms.iter().map(|s| s.source).collect::<Vec<_>>(),
            vec![SOURCE_STATIC_BROKER, SOURCE_DEFAULT]
        );
        let segment = get("segment.bytes");
        assert_eq!(
            (segment.value.as_str(), segment.source),
            ("1073741824", SOURCE_DEFAULT)
        );
        assert_eq!(segment.synonyms[0].name, "log.segment.bytes");
        assert_eq!(get("cleanup.policy").config_type, 7);
    }
}
