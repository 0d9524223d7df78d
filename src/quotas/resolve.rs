//! Which quota binds a client, and whose usage it is counted against (Kafka's
//! `DefaultQuotaCallback`).
//!
//! For one quota key, the first entity in this order that sets it wins:
//!
//! ```text
//! 1. user + client id      5. default user + default client id
//! 2. user + default client 6. default user
//! 3. user                  7. client id
//! 4. default user + client id    8. default client id
//! ```
//!
//! Usage is counted per *account*: the user and/or client id the winning entity is made of,
//! with a default standing for each name it covers. So a default user quota of 1 MB/s gives
//! every user 1 MB/s of their own, and a quota on user `alice` is shared by all her clients.

use crate::metadata::state::client_quotas::{ClientQuotas, EntityType, QuotaEntity};

/// Whose usage one quota is counted against: a user's name and/or a client id (empty when the
/// binding entity has no such part), as Kafka's quota metric tags are.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Account {
    pub user: String,
    pub client_id: String,
}

/// A quota that binds a client: its value, the entity that sets it, and the account the
/// client's usage counts against.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub account: Account,
    pub quota: f64,
    pub entity: QuotaEntity,
}

/// The quota `key` that binds `user` (a principal's name, without `User:`) using `client_id`;
/// `None` when no entity sets the key.
pub fn binding(quotas: &ClientQuotas, key: &str, user: &str, client_id: &str) -> Option<Binding> {
    // The common case, on every produce and fetch: no quotas at all.
    if quotas.is_empty() {
        return None;
    }
    let both = |u: Option<&str>, c: Option<&str>| {
        QuotaEntity(vec![
            (EntityType::User, u.map(str::to_string)),
            (EntityType::ClientId, c.map(str::to_string)),
        ])
    };
    let user_only = |u: Option<&str>| QuotaEntity(vec![(EntityType::User, u.map(str::to_string))]);
    let client_only =
        |c: Option<&str>| QuotaEntity(vec![(EntityType::ClientId, c.map(str::to_string))]);
    let account = |u: &str, c: &str| Account {
        user: u.to_string(),
        client_id: c.to_string(),
    };
    let levels = [
        (both(Some(user), Some(client_id)), account(user, client_id)),
        (both(Some(user), None), account(user, client_id)),
        (user_only(Some(user)), account(user, "")),
        (both(None, Some(client_id)), account(user, client_id)),
        (both(None, None), account(user, client_id)),
        (user_only(None), account(user, "")),
        (client_only(Some(client_id)), account("", client_id)),
        (client_only(None), account("", client_id)),
    ];
    levels.into_iter().find_map(|(entity, account)| {
        let quota = quotas.of(&entity)?.get(key)?.0;
        Some(Binding {
            account,
            quota,
            entity,
        })
    })
}

/// The `connection_creation_rate` that binds connections from `ip`, and the entity that sets it:
/// its own, else the default ip's (Kafka's `ConnectionQuotas`). Addresses are compared parsed, as Kafka compares them:
/// an entity may spell one differently (`2001:DB8::1`, `::ffff:10.0.0.1`).
pub fn ip_binding(quotas: &ClientQuotas, ip: std::net::IpAddr) -> Option<(QuotaEntity, f64)> {
    if quotas.is_empty() {
        return None;
    }
    let key = super::CONNECTION_CREATION_RATE;
    let ip = ip.to_canonical();
    let own = quotas.entities().find_map(|(entity, values)| {
        let Some(Some(name)) = entity.name_of(EntityType::Ip) else {
            return None;
        };
        let named: std::net::IpAddr = name.parse().ok()?;
        (named.to_canonical() == ip)
            .then(|| values.get(key).map(|v| (entity.clone(), v.0)))
            .flatten()
    });
    own.or_else(|| {
        let default = QuotaEntity(vec![(EntityType::Ip, None)]);
        let quota = quotas.of(&default)?.get(key)?.0;
        Some((default, quota))
    })
}

/// The user name a quota entity names for a principal (`User:alice` → `alice`).
pub fn user_name(principal: &str) -> &str {
    principal.strip_prefix("User:").unwrap_or(principal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::client_quotas::QuotaValue;
    use crate::quotas::PRODUCER_BYTE_RATE;

    fn set(quotas: &mut ClientQuotas, parts: &[(EntityType, Option<&str>)], value: f64) {
        let entity = QuotaEntity(
            parts
                .iter()
                .map(|(t, n)| (*t, n.map(String::from)))
                .collect(),
        );
        let change = [(PRODUCER_BYTE_RATE.to_string(), Some(QuotaValue(value)))];
        quotas.alter_for_test(&entity, &change);
    }

    fn bound(quotas: &ClientQuotas, user: &str, client: &str) -> Option<(String, String, f64)> {
        binding(quotas, PRODUCER_BYTE_RATE, user, client)
            .map(|b| (b.account.user, b.account.client_id, b.quota))
    }

    #[test]
    fn the_most_specific_entity_wins_in_kafkas_order() {
        use EntityType::{ClientId, User};
        let mut quotas = ClientQuotas::default();
        assert_eq!(bound(&quotas, "alice", "app"), None);
        type Parts<'a> = &'a [(EntityType, Option<&'a str>)];
        let steps: [(Parts, f64, (&str, &str)); 8] = [
            (&[(ClientId, None)], 8.0, ("", "app")),
            (&[(ClientId, Some("app"))], 7.0, ("", "app")),
            (&[(User, None)], 6.0, ("alice", "")),
            (&[(User, None), (ClientId, None)], 5.0, ("alice", "app")),
            (
                &[(User, None), (ClientId, Some("app"))],
                4.0,
                ("alice", "app"),
            ),
            (&[(User, Some("alice"))], 3.0, ("alice", "")),
            (
                &[(User, Some("alice")), (ClientId, None)],
                2.0,
                ("alice", "app"),
            ),
            (
                &[(User, Some("alice")), (ClientId, Some("app"))],
                1.0,
                ("alice", "app"),
            ),
        ];
        // Each level, set in turn from the least specific, takes over from the one before.
        for (parts, value, (user, client)) in steps {
            set(&mut quotas, parts, value);
            let expected = Some((user.to_string(), client.to_string(), value));
            assert_eq!(bound(&quotas, "alice", "app"), expected, "{parts:?}");
        }
        // Another user of the same client id falls to the default user + client id level.
        assert_eq!(
            bound(&quotas, "bob", "app"),
            Some(("bob".into(), "app".into(), 4.0))
        );
    }

    #[test]
    fn a_quota_on_another_key_does_not_bind() {
        let mut quotas = ClientQuotas::default();
        let entity = QuotaEntity(vec![(EntityType::User, Some("alice".into()))]);
        let change = [("consumer_byte_rate".to_string(), Some(QuotaValue(5.0)))];
        quotas.alter_for_test(&entity, &change);
        assert_eq!(bound(&quotas, "alice", "app"), None);
        assert_eq!(user_name("User:alice"), "alice");
    }

    #[test]
    fn an_ip_has_its_own_connection_rate_or_the_default() {
        let mut quotas = ClientQuotas::default();
        let ip = |s: &str| s.parse::<std::net::IpAddr>().expect("ip");
        assert_eq!(ip_binding(&quotas, ip("10.0.0.1")).map(|(_, q)| q), None);
        let rate = |v: f64| {
            [(
                crate::quotas::CONNECTION_CREATION_RATE.to_string(),
                Some(QuotaValue(v)),
            )]
        };
        quotas.alter_for_test(&QuotaEntity(vec![(EntityType::Ip, None)]), &rate(5.0));
        let own = QuotaEntity(vec![(EntityType::Ip, Some("10.0.0.1".into()))]);
        quotas.alter_for_test(&own, &rate(2.0));
        let v6 = QuotaEntity(vec![(EntityType::Ip, Some("2001:DB8:0::1".into()))]);
        quotas.alter_for_test(&v6, &rate(3.0));
        assert_eq!(
            ip_binding(&quotas, ip("10.0.0.1")).map(|(_, q)| q),
            Some(2.0)
        );
        // The same address, as a dual-stack listener sees it.
        assert_eq!(
            ip_binding(&quotas, ip("::ffff:10.0.0.1")).map(|(_, q)| q),
            Some(2.0)
        );
        assert_eq!(
            ip_binding(&quotas, ip("2001:db8::1")).map(|(_, q)| q),
            Some(3.0)
        );
        assert_eq!(
            ip_binding(&quotas, ip("10.0.0.2")).map(|(_, q)| q),
            Some(5.0)
        );
    }
}
