//! DescribeClientQuotas filters, as Kafka's `ClientQuotasImage.describe` reads and matches
//! them: each component names a type once, and matches that type's exact name, its default,
//! or any name; a strict filter matches only entities of exactly its types.

use crate::metadata::state::client_quotas::{EntityType, QuotaEntity};
use crate::protocol::ErrorCode;

/// How a component matches its type's name (the request's `MatchType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Exact(String),
    Default,
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    components: Vec<(EntityType, Match)>,
    strict: bool,
}

impl Filter {
    /// The request's components, `(entity_type, match_type, match)`, checked in Kafka's order
    /// with its errors and messages.
    pub fn parse(
        components: &[(String, i8, Option<String>)],
        strict: bool,
    ) -> Result<Filter, (ErrorCode, String)> {
        let invalid = |message: String| Err((ErrorCode::InvalidRequest, message));
        let mut parsed: Vec<(EntityType, Match)> = Vec::with_capacity(components.len());
        for (ty, match_type, name) in components {
            if ty.is_empty() {
                return invalid("Invalid empty entity type.".into());
            }
            let Some(entity_type) = EntityType::parse(ty) else {
                // Kafka's answer to a type it does not know.
                return Err((
                    ErrorCode::UnsupportedVersion,
                    format!("Unsupported entity type {ty}"),
                ));
            };
            if parsed.iter().any(|(t, _)| *t == entity_type) {
                return invalid(format!(
                    "Entity type {ty} cannot appear more than once in the filter."
                ));
            }
            let matcher = match (match_type, name) {
                (0, Some(name)) => Match::Exact(name.clone()),
                (0, None) => {
                    return invalid(
                        "Request specified MATCH_TYPE_EXACT, but set match string to null.".into(),
                    );
                }
                (1, None) => Match::Default,
                (1, Some(_)) => {
                    return invalid(
                        "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
                            .into(),
                    );
                }
                (2, None) => Match::Any,
                (2, Some(_)) => {
                    return invalid(
                        "Request specified MATCH_TYPE_SPECIFIED, but also specified a match \
                         string."
                            .into(),
                    );
                }
                (other, _) => return invalid(format!("Unknown match type {other}")),
            };
            parsed.push((entity_type, matcher));
        }
        let has = |t: EntityType| parsed.iter().any(|(p, _)| *p == t);
        if has(EntityType::Ip) && (has(EntityType::User) || has(EntityType::ClientId)) {
            return invalid(
                "Invalid entity filter component combination. IP filter component should not \
                 be used with user or clientId filter component."
                    .into(),
            );
        }
        Ok(Filter {
            components: parsed,
            strict,
        })
    }

    pub fn matches(&self, entity: &QuotaEntity) -> bool {
        if self.strict && entity.0.len() != self.components.len() {
            return false;
        }
        self.components
            .iter()
            .all(|(ty, matcher)| match (matcher, entity.name_of(*ty)) {
                (_, None) => false,
                (Match::Any, Some(_)) => true,
                (Match::Default, Some(name)) => name.is_none(),
                (Match::Exact(want), Some(name)) => name == Some(want.as_str()),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(parts: &[(EntityType, Option<&str>)]) -> QuotaEntity {
        QuotaEntity(
            parts
                .iter()
                .map(|(t, n)| (*t, n.map(str::to_string)))
                .collect(),
        )
    }

    fn filter(components: &[(&str, i8, Option<&str>)], strict: bool) -> Filter {
        let components: Vec<(String, i8, Option<String>)> = components
            .iter()
            .map(|(t, m, n)| (t.to_string(), *m, n.map(str::to_string)))
            .collect();
        Filter::parse(&components, strict).unwrap()
    }

    #[test]
    fn components_match_exact_names_defaults_or_any() {
        use EntityType::{ClientId, Ip, User};
        let alice = entity(&[(User, Some("alice"))]);
        let alice_app = entity(&[(User, Some("alice")), (ClientId, Some("app"))]);
        let default_user = entity(&[(User, None)]);
        let an_ip = entity(&[(Ip, Some("10.0.0.1"))]);

        let exact = filter(&[("user", 0, Some("alice"))], false);
        assert!(exact.matches(&alice) && exact.matches(&alice_app));
        assert!(!exact.matches(&default_user) && !exact.matches(&an_ip));
        let strict = filter(&[("user", 0, Some("alice"))], true);
        assert!(strict.matches(&alice) && !strict.matches(&alice_app));
        let default = filter(&[("user", 1, None)], false);
        assert!(default.matches(&default_user) && !default.matches(&alice));
        let any = filter(&[("user", 2, None)], false);
        assert!(any.matches(&alice) && any.matches(&default_user) && !any.matches(&an_ip));
        // No components: everything, ips too.
        let all = filter(&[], false);
        assert!(all.matches(&an_ip) && all.matches(&alice_app));
    }

    #[test]
    fn bad_filters_get_kafkas_errors() {
        let parse = |c: &[(&str, i8, Option<&str>)]| {
            let c: Vec<(String, i8, Option<String>)> = c
                .iter()
                .map(|(t, m, n)| (t.to_string(), *m, n.map(str::to_string)))
                .collect();
            Filter::parse(&c, false).unwrap_err()
        };
        assert_eq!(
            parse(&[("group", 2, None)]).0,
            ErrorCode::UnsupportedVersion
        );
        assert_eq!(parse(&[("", 2, None)]).0, ErrorCode::InvalidRequest);
        assert!(
            parse(&[("user", 2, None), ("user", 1, None)])
                .1
                .contains("more than once")
        );
        assert!(parse(&[("user", 0, None)]).1.contains("MATCH_TYPE_EXACT"));
        assert!(
            parse(&[("user", 1, Some("x"))])
                .1
                .contains("MATCH_TYPE_DEFAULT")
        );
        assert!(
            parse(&[("user", 3, None)])
                .1
                .contains("Unknown match type 3")
        );
        assert!(
            parse(&[("ip", 2, None), ("client-id", 2, None)])
                .1
                .contains("IP filter component")
        );
    }
}
