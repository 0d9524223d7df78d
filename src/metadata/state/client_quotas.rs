//! Client quotas (Kafka's `ClientQuotaRecord`s): for each quota entity — a user, a client id,
//! a user and client id, or an ip, each name or its type's default — the quotas set on it,
//! such as `producer_byte_rate`. Keys and values are checked where they arrive
//! (`quotas::alter`); here only how many there are and how long the names are.

use imbl::OrdMap;
use serde::{Deserialize, Serialize};

/// The most entities with quotas.
pub const QUOTA_ENTITIES_MAX: usize = 10_000;
/// The most quotas one entity holds (Kafka has five keys).
pub const QUOTAS_PER_ENTITY_MAX: usize = 8;
/// The longest entity name or quota key.
pub const QUOTA_NAME_BYTES_MAX: usize = 255;

/// What a quota entity is made of (Kafka's `ClientQuotaEntity` types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EntityType {
    User,
    ClientId,
    Ip,
}

impl EntityType {
    /// Kafka's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            EntityType::User => "user",
            EntityType::ClientId => "client-id",
            EntityType::Ip => "ip",
        }
    }

    pub fn parse(name: &str) -> Option<EntityType> {
        Some(match name {
            "user" => EntityType::User,
            "client-id" => EntityType::ClientId,
            "ip" => EntityType::Ip,
            _ => return None,
        })
    }
}

/// One quota entity: its types, each once and in order, with their names (`None`: the type's
/// default, which applies to every name without its own quota).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QuotaEntity(pub Vec<(EntityType, Option<String>)>);

impl QuotaEntity {
    /// The name the entity gives `ty`: `None` if it has no such part, `Some(None)` for the
    /// type's default.
    pub fn name_of(&self, ty: EntityType) -> Option<Option<&str>> {
        self.0
            .iter()
            .find(|(t, _)| *t == ty)
            .map(|(_, n)| n.as_deref())
    }
}

/// As Kafka's tools spell an entity: `user=alice,client-id=app`, a default as `<default>`.
impl std::fmt::Display for QuotaEntity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (ty, name)) in self.0.iter().enumerate() {
            let separator = if i == 0 { "" } else { "," };
            let name = name.as_deref().unwrap_or("<default>");
            write!(f, "{separator}{}={name}", ty.name())?;
        }
        Ok(())
    }
}

/// A quota's value: Kafka's double. Compared by its bits, so the state stays `Eq`; values
/// are finite and positive (`quotas::alter` refuses the rest).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct QuotaValue(pub f64);

impl PartialEq for QuotaValue {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for QuotaValue {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientQuotaError {
    /// Too many entities or quotas, or a name too long.
    OutOfBounds,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientQuotas {
    #[serde(deserialize_with = "super::persistent::ord_map_of_maps")]
    by_entity: OrdMap<QuotaEntity, OrdMap<String, QuotaValue>>,
}

impl ClientQuotas {
    /// Every entity with quotas, in order.
    pub fn entities(&self) -> impl Iterator<Item = (&QuotaEntity, &OrdMap<String, QuotaValue>)> {
        self.by_entity.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.by_entity.is_empty()
    }

    pub fn of(&self, entity: &QuotaEntity) -> Option<&OrdMap<String, QuotaValue>> {
        self.by_entity.get(entity)
    }

    /// Sets quotas outside the replicated state's commands, for tests of what reads them.
    #[cfg(test)]
    pub fn alter_for_test(
        &mut self,
        entity: &QuotaEntity,
        changes: &[(String, Option<QuotaValue>)],
    ) {
        self.alter(entity, changes).expect("within bounds");
    }

    /// Sets (`Some`) or removes (`None`) each quota of an entity, all or none; an entity
    /// left without quotas is forgotten, as Kafka forgets it.
    pub(super) fn alter(
        &mut self,
        entity: &QuotaEntity,
        changes: &[(String, Option<QuotaValue>)],
    ) -> Result<(), ClientQuotaError> {
        let too_long = entity
            .0
            .iter()
            .filter_map(|(_, n)| n.as_ref())
            .chain(changes.iter().map(|(k, _)| k))
            .any(|name| name.len() > QUOTA_NAME_BYTES_MAX);
        if too_long || entity.0.is_empty() {
            return Err(ClientQuotaError::OutOfBounds);
        }
        let mut quotas = self.by_entity.get(entity).cloned().unwrap_or_default();
        for (key, value) in changes {
            match value {
                Some(value) => quotas.insert(key.clone(), *value),
                None => quotas.remove(key),
            };
        }
        if quotas.len() > QUOTAS_PER_ENTITY_MAX {
            return Err(ClientQuotaError::OutOfBounds);
        }
        if quotas.is_empty() {
            self.by_entity.remove(entity);
        } else {
            if !self.by_entity.contains_key(entity) && self.by_entity.len() >= QUOTA_ENTITIES_MAX {
                return Err(ClientQuotaError::OutOfBounds);
            }
            self.by_entity.insert(entity.clone(), quotas);
        }
        Ok(())
    }
}
