//! What each quota entity's clients used through this agent, and the throttle times they were
//! answered, for metrics: one series per quota kind and entity that bound someone (the entity
//! Kafka's tools name, `user=alice,client-id=app` or `user=<default>`), never more than
//! `ENTITIES_MAX` series; beyond, usage is added to an `other` series of its kind. Bounded by
//! the entities set, not by the clients: the users a default entity covers share its series.

use super::kind::QuotaKind;
use crate::metadata::state::client_quotas::QuotaEntity;
use std::collections::HashMap;
use std::sync::Mutex;

/// The most series (a quota kind and an entity each) kept apart.
pub const ENTITIES_MAX: usize = 1_000;

/// One entity's totals for one quota kind.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct EntityUsage {
    /// What was used, in the quota's unit (bytes; partitions; connections; percent of a thread
    /// times seconds).
    pub used: f64,
    /// The throttle times answered, summed (ms).
    pub throttle_ms: u64,
}

impl EntityUsage {
    fn add(&mut self, used: f64, throttle_ms: u64) {
        self.used += used;
        self.throttle_ms += throttle_ms;
    }
}

#[derive(Debug, Default)]
struct Totals {
    by_entity: HashMap<(QuotaKind, QuotaEntity), EntityUsage>,
    others: [EntityUsage; QuotaKind::ALL.len()],
}

#[derive(Debug, Default)]
pub struct UsageByEntity {
    totals: Mutex<Totals>,
}

impl UsageByEntity {
    /// Adds `used` and a throttle time answered (0: none) to `entity`'s totals of `kind`.
    pub fn add(&self, kind: QuotaKind, entity: &QuotaEntity, used: f64, throttle_ms: u64) {
        let mut totals = self.totals.lock().expect("usage by entity lock");
        let key = (kind, entity.clone());
        if let Some(usage) = totals.by_entity.get_mut(&key) {
            usage.add(used, throttle_ms);
        } else if totals.by_entity.len() < ENTITIES_MAX {
            totals
                .by_entity
                .entry(key)
                .or_default()
                .add(used, throttle_ms);
        } else {
            totals.others[kind.index()].add(used, throttle_ms);
        }
    }

    /// Every series: quota kind, entity label (`other` for what had no series of its own), and
    /// totals, sorted; `other` only where something was added to it.
    pub fn series(&self) -> Vec<(QuotaKind, String, EntityUsage)> {
        let totals = self.totals.lock().expect("usage by entity lock");
        let mut series: Vec<_> = totals
            .by_entity
            .iter()
            .map(|((kind, entity), usage)| (*kind, entity.to_string(), *usage))
            .collect();
        for kind in QuotaKind::ALL {
            let other = totals.others[kind.index()];
            if other != EntityUsage::default() {
                series.push((kind, "other".to_string(), other));
            }
        }
        series.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::client_quotas::EntityType;

    fn user(name: Option<&str>) -> QuotaEntity {
        QuotaEntity(vec![(EntityType::User, name.map(String::from))])
    }

    #[test]
    fn series_are_per_entity_and_bounded() {
        let usage = UsageByEntity::default();
        usage.add(QuotaKind::Produce, &user(Some("alice")), 100.0, 0);
        usage.add(QuotaKind::Produce, &user(Some("alice")), 50.0, 20);
        usage.add(QuotaKind::Fetch, &user(None), 7.0, 0);
        let series = usage.series();
        assert_eq!(
            series,
            vec![
                (
                    QuotaKind::Produce,
                    "user=alice".to_string(),
                    EntityUsage {
                        used: 150.0,
                        throttle_ms: 20
                    }
                ),
                (
                    QuotaKind::Fetch,
                    "user=<default>".to_string(),
                    EntityUsage {
                        used: 7.0,
                        throttle_ms: 0
                    }
                ),
            ]
        );
        for i in 0..ENTITIES_MAX + 5 {
            let name = format!("u{i}");
            usage.add(QuotaKind::Produce, &user(Some(&name)), 1.0, 1);
        }
        let series = usage.series();
        assert_eq!(series.len(), ENTITIES_MAX + 1);
        let other = series.iter().find(|(_, label, _)| label == "other");
        // 1,000 series kept: alice, the default user and 998 of the new ones.
        assert_eq!(other.map(|(_, _, u)| u.used), Some(7.0));
    }
}
