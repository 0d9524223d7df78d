//! What AlterConfigs (legacy: the request replaces every topic config) and
//! IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT) make of a topic's configs, as
//! Kafka's controller computes it. Pure: the handler proposes the result to the quorum.

use super::catalog::{self, Kind};
use super::validate::{check_all, check_changed};
use crate::protocol::ErrorCode;
use std::collections::BTreeMap;

pub type Refusal = (ErrorCode, String);

/// One operation of IncrementalAlterConfigs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Set,
    Delete,
    Append,
    Subtract,
}

impl Op {
    pub fn from_id(id: i8) -> Result<Op, Refusal> {
        match id {
            0 => Ok(Op::Set),
            1 => Ok(Op::Delete),
            2 => Ok(Op::Append),
            3 => Ok(Op::Subtract),
            _ => Err((
                ErrorCode::InvalidRequest,
                format!("Unknown operations type {id}"),
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Op::Set => "SET",
            Op::Delete => "DELETE",
            Op::Append => "APPEND",
            Op::Subtract => "SUBTRACT",
        }
    }
}

/// Request-level checks both APIs share: a key named twice, and null values.
fn check_request<'a>(
    entries: impl Iterator<Item = (&'a str, bool)> + Clone,
) -> Result<(), Refusal> {
    let mut seen = std::collections::BTreeSet::new();
    if !entries.clone().all(|(name, _)| seen.insert(name)) {
        return Err((
            ErrorCode::InvalidRequest,
            "Error due to duplicate config keys".to_string(),
        ));
    }
    let nulls: Vec<&str> = entries.filter(|(_, null)| *null).map(|(n, _)| n).collect();
    if !nulls.is_empty() {
        return Err((
            ErrorCode::InvalidRequest,
            format!("Null value not supported for : {}", nulls.join(", ")),
        ));
    }
    Ok(())
}

/// The topic's configs after `ops` (name, operation, value), validated and normalised.
pub fn incremental(
    current: &BTreeMap<String, String>,
    ops: &[(String, i8, Option<String>)],
) -> Result<BTreeMap<String, String>, Refusal> {
    let parsed = ops
        .iter()
        .map(|(name, op, value)| Ok((name.as_str(), Op::from_id(*op)?, value.as_deref())))
        .collect::<Result<Vec<_>, Refusal>>()?;
    check_request(
        parsed
            .iter()
            .map(|(name, op, value)| (*name, *op != Op::Delete && value.is_none())),
    )?;
    let mut next = current.clone();
    for (name, op, value) in parsed {
        let value = value.unwrap_or_default();
        match op {
            Op::Set => {
                next.insert(name.to_string(), value.to_string());
            }
            Op::Delete => {
                next.remove(name);
            }
            Op::Append | Op::Subtract => {
                let def = catalog::find(name)
                    .filter(|d| d.kind == Kind::List)
                    .ok_or_else(|| {
                        (
                            ErrorCode::InvalidConfig,
                            format!(
                                "Can't {} to key {name} because its type is not LIST.",
                                op.name()
                            ),
                        )
                    })?;
                let base = next.get(name).map_or(def.default, String::as_str);
                let mut list: Vec<String> = base
                    .split(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(str::to_string)
                    .collect();
                for element in value.split(',').map(str::trim) {
                    if op == Op::Append && !list.iter().any(|e| e == element) {
                        list.push(element.to_string());
                    } else if op == Op::Subtract
                        && let Some(at) = list.iter().position(|e| e == element)
                    {
                        list.remove(at);
                    }
                }
                // Removing the last element leaves an empty list, not the default.
                next.insert(name.to_string(), list.join(","));
            }
        }
    }
    check_changed(current, &next).map_err(|message| (ErrorCode::InvalidConfig, message))
}

/// The topic's configs after a legacy AlterConfigs: exactly those the request names.
pub fn replace(entries: &[(String, Option<String>)]) -> Result<BTreeMap<String, String>, Refusal> {
    check_request(entries.iter().map(|(n, v)| (n.as_str(), v.is_none())))?;
    let wanted: BTreeMap<String, String> = entries
        .iter()
        .map(|(n, v)| (n.clone(), v.clone().unwrap_or_default()))
        .collect();
    check_all(&wanted).map_err(|message| (ErrorCode::InvalidConfig, message))
}

/// The changes (set, or remove with `None`) that turn `current` into `wanted`.
pub fn changes(
    current: &BTreeMap<String, String>,
    wanted: &BTreeMap<String, String>,
) -> Vec<(String, Option<String>)> {
    let removed = current
        .keys()
        .filter(|k| !wanted.contains_key(*k))
        .map(|k| (k.clone(), None));
    let set = wanted
        .iter()
        .filter(|(k, v)| current.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), Some(v.clone())));
    removed.chain(set).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn op(name: &str, op: i8, value: Option<&str>) -> (String, i8, Option<String>) {
        (name.to_string(), op, value.map(str::to_string))
    }

    #[test]
    fn append_and_subtract_work_on_lists_from_the_default() {
        let none = BTreeMap::new();
        // Unset cleanup.policy is "delete": appending compact gives both, once.
        let both = incremental(&none, &[op("cleanup.policy", 2, Some("compact,delete"))]).unwrap();
        assert_eq!(both, map(&[("cleanup.policy", "delete,compact")]));
        let compact = incremental(&both, &[op("cleanup.policy", 3, Some("delete"))]).unwrap();
        assert_eq!(compact, map(&[("cleanup.policy", "compact")]));
        let empty = incremental(&compact, &[op("cleanup.policy", 3, Some("compact"))]).unwrap();
        assert_eq!(empty, map(&[("cleanup.policy", "")]));
        assert_eq!(
            incremental(&none, &[op("retention.ms", 2, Some("1"))]),
            Err((
                ErrorCode::InvalidConfig,
                "Can't APPEND to key retention.ms because its type is not LIST.".to_string()
            ))
        );
    }

    #[test]
    fn set_delete_and_request_errors() {
        let current = map(&[("retention.ms", "1000")]);
        assert_eq!(
            incremental(
                &current,
                &[op("retention.ms", 1, None), op("unknown.key", 1, None)]
            ),
            Ok(BTreeMap::new()),
            "deleting what is not set succeeds"
        );
        assert_eq!(
            incremental(&current, &[op("retention.ms", 0, None)])
                .unwrap_err()
                .0,
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            incremental(&current, &[op("a", 1, None), op("a", 1, None)])
                .unwrap_err()
                .0,
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            incremental(&current, &[op("retention.ms", 7, Some("1"))])
                .unwrap_err()
                .0,
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            incremental(&current, &[op("retention.mss", 0, Some("1"))]),
            Err((
                ErrorCode::InvalidConfig,
                "Unknown topic config name: retention.mss".to_string()
            ))
        );
    }

    #[test]
    fn legacy_alter_replaces_everything() {
        let current = map(&[("retention.ms", "1000"), ("cleanup.policy", "compact")]);
        let wanted = replace(&[("segment.ms".to_string(), Some("5000".to_string()))]).unwrap();
        assert_eq!(
            changes(&current, &wanted),
            vec![
                ("cleanup.policy".to_string(), None),
                ("retention.ms".to_string(), None),
                ("segment.ms".to_string(), Some("5000".to_string())),
            ]
        );
    }
}
