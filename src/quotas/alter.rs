//! AlterClientQuotas entries checked as Kafka's `ClientQuotaControlManager` checks them, with
//! its messages (all INVALID_REQUEST): the entity (known types, user and client id together
//! or an ip alone, no empty names, an ip that is an address), then each operation (a key the
//! entity's kind has, a value above zero, whole where the key is a LONG or INT).

use super::{
    CONNECTION_CREATION_RATE, CONSUMER_BYTE_RATE, CONTROLLER_MUTATION_RATE, PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
};
use crate::metadata::state::client_quotas::{EntityType, QuotaEntity, QuotaValue};
use std::collections::BTreeMap;

/// How a key's value is typed (Kafka's `ConfigDef.Type` of the quota config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueType {
    Long,
    Int,
    Double,
}

/// The keys an entity's kind takes, with their types.
fn keys_of(entity: &QuotaEntity) -> &'static [(&'static str, ValueType)] {
    if entity.name_of(EntityType::Ip).is_some() {
        &[(CONNECTION_CREATION_RATE, ValueType::Int)]
    } else {
        &[
            (PRODUCER_BYTE_RATE, ValueType::Long),
            (CONSUMER_BYTE_RATE, ValueType::Long),
            (REQUEST_PERCENTAGE, ValueType::Double),
            (CONTROLLER_MUTATION_RATE, ValueType::Double),
        ]
    }
}

/// An entity as a request names it: `(type, name)` pairs, `None` for the type's default. A
/// type named twice keeps its last name, as Kafka's map of them does.
pub fn entity(parts: &[(String, Option<String>)]) -> Result<QuotaEntity, String> {
    if parts.is_empty() {
        return Err("Invalid empty client quota entity".into());
    }
    let mut by_type: BTreeMap<EntityType, Option<String>> = BTreeMap::new();
    for (ty, name) in parts {
        let Some(parsed) = EntityType::parse(ty) else {
            return Err(format!("Unhandled client quota entity type: {ty}"));
        };
        if name.as_deref() == Some("") {
            return Err(format!("Empty {ty} not supported"));
        }
        by_type.insert(parsed, name.clone());
    }
    let entity = QuotaEntity(by_type.into_iter().collect());
    if entity.name_of(EntityType::Ip).is_some() && entity.0.len() > 1 {
        return Err(
            "Invalid quota entity combination, IP entity should not be combined with User or \
             ClientId"
                .into(),
        );
    }
    if let Some(Some(ip)) = entity.name_of(EntityType::Ip)
        && ip.parse::<std::net::IpAddr>().is_err()
    {
        return Err(format!("{ip} is not a valid IP address."));
    }
    Ok(entity)
}

/// An entry's operations, `(key, value, remove)` as sent, as the changes the state applies.
/// Removing a key the entity does not hold is allowed and changes nothing, as in Kafka.
pub fn changes(
    entity: &QuotaEntity,
    ops: &[(String, f64, bool)],
) -> Result<Vec<(String, Option<QuotaValue>)>, String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut changes = Vec::with_capacity(ops.len());
    for (key, value, remove) in ops {
        if !seen.insert(key.as_str()) {
            return Err(format!("Duplicate quota key {key}"));
        }
        if *remove {
            changes.push((key.clone(), None));
            continue;
        }
        let Some((_, ty)) = keys_of(entity).iter().find(|(k, _)| k == key) else {
            return Err(format!("Invalid configuration key {key}"));
        };
        // NaN and infinities are refused too (Kafka lets NaN through).
        if !value.is_finite() || *value <= 0.0 {
            return Err(format!("Quota {key} must be greater than 0"));
        }
        match ty {
            ValueType::Long if *value > i64::MAX as f64 => {
                return Err(format!("Proposed value for {key} is too large for a LONG."));
            }
            ValueType::Int if *value > f64::from(i32::MAX) => {
                return Err(format!("Proposed value for {key} is too large for an INT."));
            }
            ValueType::Long | ValueType::Int if (value % 1.0).abs() > 1e-6 => {
                return Err(format!("{key} cannot be a fractional value."));
            }
            _ => {}
        }
        changes.push((key.clone(), Some(QuotaValue(*value))));
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(t, n)| (t.to_string(), n.map(str::to_string)))
            .collect()
    }

    #[test]
    fn entities_are_checked_as_kafka_checks_them() {
        let user_client = entity(&parts(&[("client-id", Some("c")), ("user", None)])).unwrap();
        // Types in order, the default user as None.
        assert_eq!(
            user_client.0,
            vec![
                (EntityType::User, None),
                (EntityType::ClientId, Some("c".into()))
            ]
        );
        assert_eq!(
            entity(&[]).unwrap_err(),
            "Invalid empty client quota entity"
        );
        assert_eq!(
            entity(&parts(&[("group", Some("g"))])).unwrap_err(),
            "Unhandled client quota entity type: group"
        );
        assert_eq!(
            entity(&parts(&[("user", Some(""))])).unwrap_err(),
            "Empty user not supported"
        );
        assert!(
            entity(&parts(&[("ip", Some("10.0.0.1")), ("user", Some("u"))]))
                .unwrap_err()
                .starts_with("Invalid quota entity combination")
        );
        assert_eq!(
            entity(&parts(&[("ip", Some("not-an-ip"))])).unwrap_err(),
            "not-an-ip is not a valid IP address."
        );
        assert!(entity(&parts(&[("ip", None)])).is_ok());
        assert!(entity(&parts(&[("ip", Some("::1"))])).is_ok());
    }

    #[test]
    fn values_are_checked_by_the_keys_type() {
        let user = entity(&parts(&[("user", Some("u"))])).unwrap();
        let ip = entity(&parts(&[("ip", None)])).unwrap();
        let op = |k: &str, v: f64| vec![(k.to_string(), v, false)];
        assert_eq!(
            changes(&user, &op(PRODUCER_BYTE_RATE, 1024.0)).unwrap(),
            vec![(PRODUCER_BYTE_RATE.to_string(), Some(QuotaValue(1024.0)))]
        );
        assert!(changes(&user, &op(REQUEST_PERCENTAGE, 12.5)).is_ok());
        assert_eq!(
            changes(&user, &op(PRODUCER_BYTE_RATE, 10.5)).unwrap_err(),
            "producer_byte_rate cannot be a fractional value."
        );
        assert_eq!(
            changes(&user, &op(CONSUMER_BYTE_RATE, 0.0)).unwrap_err(),
            "Quota consumer_byte_rate must be greater than 0"
        );
        assert!(changes(&user, &op(CONSUMER_BYTE_RATE, f64::NAN)).is_err());
        assert_eq!(
            changes(&user, &op(CONNECTION_CREATION_RATE, 5.0)).unwrap_err(),
            "Invalid configuration key connection_creation_rate"
        );
        assert_eq!(
            changes(&ip, &op(CONNECTION_CREATION_RATE, 3e9)).unwrap_err(),
            "Proposed value for connection_creation_rate is too large for an INT."
        );
        // Removing needs no known key and no value.
        assert_eq!(
            changes(&user, &[("anything".to_string(), 0.0, true)]).unwrap(),
            vec![("anything".to_string(), None)]
        );
        let twice = vec![
            (PRODUCER_BYTE_RATE.to_string(), 1.0, false),
            (PRODUCER_BYTE_RATE.to_string(), 2.0, false),
        ];
        assert!(changes(&user, &twice).unwrap_err().starts_with("Duplicate"));
    }
}
