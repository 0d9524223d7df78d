//! Kafka's checks of topic config values, with its messages (`ConfigDef` and `LogConfig`):
//! an unknown name, a value of the wrong type or out of range, and settings that contradict
//! each other. A valid value is normalised the way Kafka shows it (`true` for `TRUE`,
//! `compact,delete` for `compact, delete`).

use super::catalog::{self, Kind, Rule, TopicConfigDef};
use std::collections::BTreeMap;

/// Kafka refuses longer values (4.1+).
const VALUE_CHARS_MAX: usize = 32_767;

/// The value as Kafka would store and show it, or Kafka's message for why it is invalid.
pub fn normalize(def: &TopicConfigDef, value: &str) -> Result<String, String> {
    let invalid = |shown: &str, why: String| {
        format!(
            "Invalid value {shown} for configuration {}: {why}",
            def.name
        )
    };
    let trimmed = value.trim();
    let not_a_number = || invalid(trimmed, format!("Not a number of type {}", def.kind.name()));
    let normalized = match def.kind {
        Kind::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            "true" => "true".to_string(),
            "false" => "false".to_string(),
            _ => {
                return Err(invalid(
                    trimmed,
                    "Expected value to be either true or false".to_string(),
                ));
            }
        },
        Kind::Int => trimmed
            .parse::<i32>()
            .map_err(|_| not_a_number())?
            .to_string(),
        Kind::Short => trimmed
            .parse::<i16>()
            .map_err(|_| not_a_number())?
            .to_string(),
        Kind::Long => trimmed
            .parse::<i64>()
            .map_err(|_| not_a_number())?
            .to_string(),
        Kind::Double => {
            let number = trimmed.parse::<f64>().map_err(|_| not_a_number())?;
            if !number.is_finite() {
                return Err(not_a_number());
            }
            number.to_string()
        }
        Kind::String => trimmed.to_string(),
        Kind::List if trimmed.is_empty() => String::new(),
        Kind::List => trimmed
            .split(',')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(","),
    };
    check_rule(def, &normalized).map_err(|why| invalid(&normalized, why))?;
    Ok(normalized)
}

fn check_rule(def: &TopicConfigDef, value: &str) -> Result<(), String> {
    let number = || value.parse::<i64>().unwrap_or(0);
    match def.rule {
        Rule::Any => Ok(()),
        Rule::AtLeast(min) if number() < min => Err(format!("Value must be at least {min}")),
        Rule::Between(min, _) if number() < min => Err(format!("Value must be at least {min}")),
        Rule::Between(_, max) if number() > max => Err(format!("Value must be no more than {max}")),
        Rule::AtLeast(_) | Rule::Between(..) => Ok(()),
        Rule::Fraction => {
            let ratio = value.parse::<f64>().unwrap_or(0.0);
            if ratio < 0.0 {
                Err("Value must be at least 0".to_string())
            } else if ratio > 1.0 {
                Err("Value must be no more than 1".to_string())
            } else {
                Ok(())
            }
        }
        Rule::OneOf(allowed) if !allowed.contains(&value) => {
            Err(format!("String must be one of: {}", allowed.join(", ")))
        }
        Rule::OneOf(_) => Ok(()),
        Rule::EachOneOf(allowed) => {
            let elements = value.split(',').filter(|_| !value.is_empty());
            match elements.into_iter().find(|e| !allowed.contains(e)) {
                Some(_) => Err(format!("String must be one of: {}", allowed.join(", "))),
                None => Ok(()),
            }
        }
        Rule::GzipLevel if !(1..=9).contains(&number()) && number() != -1 => {
            Err("Value must be between 1 and 9 or equal to -1".to_string())
        }
        Rule::GzipLevel => Ok(()),
        Rule::ThrottledReplicas => {
            let pair = |e: &str| {
                e.is_empty()
                    || e.split_once(':').is_some_and(|(p, b)| {
                        !p.is_empty()
                            && !b.is_empty()
                            && p.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
                    })
            };
            if value == "*" || value.split(',').all(pair) {
                Ok(())
            } else {
                Err(format!(
                    "{} must be the literal '*' or a list of replicas in the following format: \
                     [partitionId]:[brokerId],[partitionId]:[brokerId],...",
                    def.name
                ))
            }
        }
    }
}

/// Checks a topic's whole set of configs (names, values, and their consistency), returning it
/// normalised; the error is Kafka's message (INVALID_CONFIG).
pub fn check_all(configs: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, String> {
    check_changed(&BTreeMap::new(), configs)
}

/// Checks the configs of `next` that differ from `current` (what a topic holds already was
/// checked when it was set, possibly by an older floe that did not know every rule), then
/// the consistency of the whole; returns `next` with the changed values normalised.
pub fn check_changed(
    current: &BTreeMap<String, String>,
    next: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let mut normalized = BTreeMap::new();
    for (name, value) in next {
        if current.get(name) == Some(value) {
            normalized.insert(name.clone(), value.clone());
            continue;
        }
        let def =
            catalog::find(name).ok_or_else(|| format!("Unknown topic config name: {name}"))?;
        if value.chars().count() > VALUE_CHARS_MAX {
            return Err(format!(
                "The configuration value cannot be added because it exceeds the maximum value \
                 size of {VALUE_CHARS_MAX} bytes."
            ));
        }
        normalized.insert(name.clone(), normalize(def, value)?);
    }
    // The value set, or else the default.
    let long = |name: &str| {
        normalized
            .get(name)
            .map(String::as_str)
            .or_else(|| catalog::find(name).map(|d| d.default))
            .and_then(|v| v.parse::<i64>().ok())
    };
    let (min_lag, max_lag) = (
        long(catalog::MIN_COMPACTION_LAG_MS).unwrap_or(0),
        long(catalog::MAX_COMPACTION_LAG_MS).unwrap_or(i64::MAX),
    );
    if min_lag > max_lag {
        return Err(format!(
            "conflict topic config setting {} ({min_lag}) > {} ({max_lag})",
            catalog::MIN_COMPACTION_LAG_MS,
            catalog::MAX_COMPACTION_LAG_MS
        ));
    }
    if normalized.get("remote.storage.enable").map(String::as_str) == Some("true") {
        // Every floe topic lives in the object store already; there is no local tier to
        // move from, and Kafka refuses the setting on a broker without tiered storage.
        return Err(
            "Tiered Storage functionality is disabled in the broker. Topic cannot be \
                    configured with remote log storage."
                .to_string(),
        );
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pairs: &[(&str, &str)]) -> Result<BTreeMap<String, String>, String> {
        check_all(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn kafka_messages_for_bad_values() {
        for (pairs, message) in [
            (
                vec![("retnetion.ms", "1")],
                "Unknown topic config name: retnetion.ms",
            ),
            (
                vec![("retention.ms", "abc")],
                "Invalid value abc for configuration retention.ms: Not a number of type LONG",
            ),
            (
                vec![("retention.ms", "-5")],
                "Invalid value -5 for configuration retention.ms: Value must be at least -1",
            ),
            (
                vec![("preallocate", "yes")],
                "Invalid value yes for configuration preallocate: Expected value to be either true or false",
            ),
            (
                vec![("compression.type", "GZIP")],
                "Invalid value GZIP for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
            ),
            (
                vec![("cleanup.policy", "compact,foo")],
                "Invalid value compact,foo for configuration cleanup.policy: String must be one of: compact, delete",
            ),
            (
                vec![("min.cleanable.dirty.ratio", "1.5")],
                "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
            ),
            (
                vec![("compression.gzip.level", "0")],
                "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
            ),
            (
                vec![("max.message.bytes", "99999999999")],
                "Invalid value 99999999999 for configuration max.message.bytes: Not a number of type INT",
            ),
            (
                vec![
                    ("min.compaction.lag.ms", "10"),
                    ("max.compaction.lag.ms", "5"),
                ],
                "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)",
            ),
        ] {
            assert_eq!(check(&pairs), Err(message.to_string()), "{pairs:?}");
        }
    }

    #[test]
    fn names_are_unique_and_defaults_are_valid() {
        let all = catalog::TOPIC_CONFIGS;
        for (i, d) in all.iter().enumerate() {
            assert!(
                all[..i].iter().all(|e| e.name != d.name),
                "{} twice",
                d.name
            );
            assert_eq!(
                normalize(d, d.default).as_deref(),
                Ok(d.default),
                "{}",
                d.name
            );
        }
        assert_eq!(all.len(), 33);
    }

    #[test]
    fn values_are_normalised() {
        let got = check(&[
            ("cleanup.policy", " compact , delete "),
            ("preallocate", "TRUE"),
            ("retention.ms", " 1000 "),
            ("leader.replication.throttled.replicas", "0:1,1:2"),
        ])
        .unwrap();
        assert_eq!(got["cleanup.policy"], "compact,delete");
        assert_eq!(got["preallocate"], "true");
        assert_eq!(got["retention.ms"], "1000");
        assert!(check(&[("cleanup.policy", "")]).is_ok());
        assert!(check(&[("leader.replication.throttled.replicas", "*")]).is_ok());
        assert!(check(&[("leader.replication.throttled.replicas", "a:1")]).is_err());
    }
}
