//! Kafka's group configs (GROUP config resources, `GroupConfig.java`), pure: the names floe
//! honours, their defaults from the broker's settings, Kafka's checks and messages, and what a
//! share group's reads follow from them.
//!
//! floe honours the share group configs (KIP-932). Kafka's consumer and streams group configs
//! are refused by name rather than stored without effect.

use crate::config::ShareConfig;
use crate::protocol::ErrorCode;
use std::collections::BTreeMap;

pub const SHARE_AUTO_OFFSET_RESET: &str = "share.auto.offset.reset";
pub const SHARE_ISOLATION_LEVEL: &str = "share.isolation.level";
pub const SHARE_RECORD_LOCK_DURATION_MS: &str = "share.record.lock.duration.ms";
pub const SHARE_SESSION_TIMEOUT_MS: &str = "share.session.timeout.ms";
pub const SHARE_HEARTBEAT_INTERVAL_MS: &str = "share.heartbeat.interval.ms";

/// Every group config floe honours, in the order DescribeConfigs lists them.
pub const NAMES: &[&str] = &[
    SHARE_AUTO_OFFSET_RESET,
    SHARE_HEARTBEAT_INTERVAL_MS,
    SHARE_ISOLATION_LEVEL,
    SHARE_RECORD_LOCK_DURATION_MS,
    SHARE_SESSION_TIMEOUT_MS,
];

/// Kafka's broker bounds a group's values must lie within (group.share.min/max.*).
pub const SHARE_MAX_RECORD_LOCK_DURATION_MS: i64 = 60_000;
pub const SHARE_MIN_SESSION_TIMEOUT_MS: i64 = 45_000;
pub const SHARE_MAX_SESSION_TIMEOUT_MS: i64 = 60_000;
pub const SHARE_MIN_HEARTBEAT_INTERVAL_MS: i64 = 5_000;
pub const SHARE_MAX_HEARTBEAT_INTERVAL_MS: i64 = 15_000;

pub type Refusal = (ErrorCode, String);

/// Where a share group starts reading a partition it has not read yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoOffsetReset {
    Earliest,
    Latest,
    /// The first record at or after this long before now.
    ByDuration(i64),
}

/// What a share group's reads follow, from its configs over the broker's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareGroupConfig {
    pub auto_offset_reset: AutoOffsetReset,
    pub read_committed: bool,
    pub record_lock_duration_ms: i64,
    pub session_timeout_ms: i64,
    pub heartbeat_interval_ms: i64,
}

impl ShareGroupConfig {
    pub fn of(configs: Option<&imbl::OrdMap<String, String>>, broker: &ShareConfig) -> Self {
        let get = |name: &str| configs.and_then(|c| c.get(name)).map(String::as_str);
        let ms = |name: &str, default: std::time::Duration| {
            get(name)
                .and_then(|v| v.parse().ok())
                .unwrap_or(default.as_millis() as i64)
        };
        ShareGroupConfig {
            auto_offset_reset: get(SHARE_AUTO_OFFSET_RESET)
                .and_then(parse_reset)
                .unwrap_or(AutoOffsetReset::Latest),
            read_committed: get(SHARE_ISOLATION_LEVEL) == Some("read_committed"),
            record_lock_duration_ms: ms(SHARE_RECORD_LOCK_DURATION_MS, broker.record_lock_duration),
            session_timeout_ms: ms(SHARE_SESSION_TIMEOUT_MS, broker.session_timeout),
            heartbeat_interval_ms: ms(SHARE_HEARTBEAT_INTERVAL_MS, broker.heartbeat_interval),
        }
    }
}

/// A config's default: the broker's setting it overrides.
pub fn default_of(name: &str, broker: &ShareConfig) -> Option<String> {
    Some(match name {
        SHARE_AUTO_OFFSET_RESET => "latest".into(),
        SHARE_ISOLATION_LEVEL => "read_uncommitted".into(),
        SHARE_RECORD_LOCK_DURATION_MS => broker.record_lock_duration.as_millis().to_string(),
        SHARE_SESSION_TIMEOUT_MS => broker.session_timeout.as_millis().to_string(),
        SHARE_HEARTBEAT_INTERVAL_MS => broker.heartbeat_interval.as_millis().to_string(),
        _ => return None,
    })
}

/// Kafka's `ConfigType` id of a group config: STRING (2) or INT (3).
pub fn config_type(name: &str) -> i8 {
    match name {
        SHARE_AUTO_OFFSET_RESET | SHARE_ISOLATION_LEVEL => 2,
        _ => 3,
    }
}

/// Checks one value as Kafka's `GroupConfig.validateValues` does; the value as stored.
pub fn validate(
    name: &str,
    value: &str,
    min_record_lock_duration_ms: i64,
) -> Result<String, Refusal> {
    let invalid = |why: String| {
        Err((
            ErrorCode::InvalidConfig,
            format!("Invalid value {value} for configuration {name}: {why}"),
        ))
    };
    let ranged = |min: i64, max: i64| match value.trim().parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v.to_string()),
        Ok(_) => invalid(format!("Value must be in the range [{min}, {max}]")),
        Err(_) => invalid("Not a number of type INT".into()),
    };
    match name {
        SHARE_AUTO_OFFSET_RESET => match parse_reset(value) {
            Some(_) => Ok(value.to_string()),
            None => {
                invalid("String must be one of: latest, earliest, by_duration:PnDTnHnMn.nS".into())
            }
        },
        SHARE_ISOLATION_LEVEL => match value {
            "read_committed" | "read_uncommitted" => Ok(value.to_string()),
            _ => invalid("String must be one of: read_committed, read_uncommitted".into()),
        },
        SHARE_RECORD_LOCK_DURATION_MS => ranged(
            min_record_lock_duration_ms,
            SHARE_MAX_RECORD_LOCK_DURATION_MS,
        ),
        SHARE_SESSION_TIMEOUT_MS => {
            ranged(SHARE_MIN_SESSION_TIMEOUT_MS, SHARE_MAX_SESSION_TIMEOUT_MS)
        }
        SHARE_HEARTBEAT_INTERVAL_MS => ranged(
            SHARE_MIN_HEARTBEAT_INTERVAL_MS,
            SHARE_MAX_HEARTBEAT_INTERVAL_MS,
        ),
        _ => Err((
            ErrorCode::InvalidConfig,
            format!(
                "Unknown group config name: {name} (floe honours the share group configs: {})",
                NAMES.join(", ")
            ),
        )),
    }
}

/// Applies IncrementalAlterConfigs operations (0 SET, 1 DELETE; the list operations do not
/// apply to any group config) to a group's configs: the changes to store, or Kafka's refusal.
pub fn incremental(
    current: &BTreeMap<String, String>,
    ops: &[(String, i8, Option<String>)],
    min_record_lock_duration_ms: i64,
) -> Result<Vec<(String, Option<String>)>, Refusal> {
    let mut changes = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, op, value) in ops {
        if !seen.insert(name) {
            return Err((
                ErrorCode::InvalidRequest,
                format!("Error due to duplicate config keys: {name}"),
            ));
        }
        match op {
            0 => {
                let Some(value) = value else {
                    return Err((
                        ErrorCode::InvalidRequest,
                        format!("Null value not supported for : {name}"),
                    ));
                };
                let value = validate(name, value, min_record_lock_duration_ms)?;
                if current.get(name) != Some(&value) {
                    changes.push((name.clone(), Some(value)));
                }
            }
            1 => {
                validate_name(name)?;
                if current.contains_key(name) {
                    changes.push((name.clone(), None));
                }
            }
            2 | 3 => {
                return Err((
                    ErrorCode::InvalidConfig,
                    format!("Config value append/subtract is not allowed for config key: {name}"),
                ));
            }
            other => {
                return Err((
                    ErrorCode::InvalidRequest,
                    format!("Unknown config operation {other}"),
                ));
            }
        }
    }
    Ok(changes)
}

fn validate_name(name: &str) -> Result<(), Refusal> {
    if NAMES.contains(&name) {
        Ok(())
    } else {
        validate(name, "", 0).map(|_| ())
    }
}

/// `earliest`, `latest` or `by_duration:<ISO-8601 duration>` (PnDTnHnMn.nS, not negative).
fn parse_reset(value: &str) -> Option<AutoOffsetReset> {
    match value {
        "earliest" => Some(AutoOffsetReset::Earliest),
        "latest" => Some(AutoOffsetReset::Latest),
        _ => {
            parse_duration_ms(value.strip_prefix("by_duration:")?).map(AutoOffsetReset::ByDuration)
        }
    }
}

/// An ISO-8601 duration as Java's `Duration.parse` reads it (days, hours, minutes, seconds).
fn parse_duration_ms(text: &str) -> Option<i64> {
    let rest = text.strip_prefix('P').or_else(|| text.strip_prefix('p'))?;
    let (date, time) = match rest.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut ms: f64 = 0.0;
    let mut any = false;
    let mut read = |part: &str, units: &[(char, f64)]| -> Option<()> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
                continue;
            }
            let scale = units.iter().find(|(u, _)| c.eq_ignore_ascii_case(u))?.1;
            ms += number.parse::<f64>().ok()? * scale;
            number.clear();
            any = true;
        }
        number.is_empty().then_some(())
    };
    read(date, &[('D', 86_400_000.0)])?;
    if let Some(time) = time {
        read(time, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1_000.0)])?;
    }
    (any && ms.is_finite() && ms < 9.0e15).then_some(ms as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_values_are_checked_as_kafka_checks_them() {
        assert_eq!(
            validate(SHARE_AUTO_OFFSET_RESET, "earliest", 15_000).unwrap(),
            "earliest"
        );
        assert!(validate(SHARE_AUTO_OFFSET_RESET, "by_duration:PT1H30M", 15_000).is_ok());
        assert!(validate(SHARE_AUTO_OFFSET_RESET, "by_duration:P1D", 15_000).is_ok());
        assert!(validate(SHARE_AUTO_OFFSET_RESET, "by_duration:1h", 15_000).is_err());
        assert!(validate(SHARE_AUTO_OFFSET_RESET, "none", 15_000).is_err());
        assert!(validate(SHARE_RECORD_LOCK_DURATION_MS, "3000", 15_000).is_err());
        assert!(validate(SHARE_RECORD_LOCK_DURATION_MS, "3000", 1_000).is_ok());
        assert!(validate(SHARE_SESSION_TIMEOUT_MS, "45000", 1_000).is_ok());
        let unknown = validate("consumer.session.timeout.ms", "45000", 1_000).unwrap_err();
        assert_eq!(unknown.0, ErrorCode::InvalidConfig);
    }

    #[test]
    fn durations_read_as_java_reads_them() {
        assert_eq!(parse_duration_ms("PT1H30M"), Some(5_400_000));
        assert_eq!(parse_duration_ms("P1DT0.5S"), Some(86_400_500));
        assert_eq!(parse_duration_ms("P"), None);
        assert_eq!(parse_duration_ms("PT"), None);
        assert_eq!(parse_duration_ms("PT5"), None);
    }

    #[test]
    fn set_and_delete_become_changes() {
        let mut current = BTreeMap::new();
        current.insert(
            SHARE_ISOLATION_LEVEL.to_string(),
            "read_committed".to_string(),
        );
        let ops = vec![
            (
                SHARE_AUTO_OFFSET_RESET.to_string(),
                0,
                Some("earliest".to_string()),
            ),
            (SHARE_ISOLATION_LEVEL.to_string(), 1, None),
        ];
        assert_eq!(
            incremental(&current, &ops, 15_000).unwrap(),
            vec![
                (
                    SHARE_AUTO_OFFSET_RESET.to_string(),
                    Some("earliest".to_string())
                ),
                (SHARE_ISOLATION_LEVEL.to_string(), None),
            ]
        );
    }
}
