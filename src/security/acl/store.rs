//! The replicated set of ACL bindings, kept as the authorizer reads it: by resource type and
//! pattern type, then by resource name, then the entries on that pattern.
//!
//! ```text
//! (Topic, Literal)  ─┬─ "orders" ─ {User:alice * READ ALLOW, ...}
//!                    └─ "*"      ─ {User:* * DESCRIBE ALLOW}
//! (Topic, Prefixed) ─┬─ "ord"    ─ {User:bob * WRITE DENY}
//!                    └─ "pay"    ─ {...}
//! ```
//!
//! A decision on resource `name` reads the literal `name`, the literal `"*"`, and the prefixed
//! names that begin `name`, without scanning the others (`Prefixes`). The maps are `imbl`'s,
//! so a copy of the state shares them. The serialized form is the nested maps; decoding goes
//! through the standard collections (see `metadata::state::persistent` for why) and recounts.
//!
//! Bound: `ACLS_MAX` bindings; every create checks it, here where the command is applied.

use super::model::{
    ACLS_MAX, AccessControlEntry, AclBinding, AclBindingFilter, AclError, PatternType,
    ResourcePattern, ResourceType, WILDCARD_RESOURCE, validate_new,
};
use imbl::{OrdMap, OrdSet};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

type Entries = OrdSet<AccessControlEntry>;
type ByName = OrdMap<String, Entries>;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredAcls")]
pub struct Acls {
    /// Never holds an empty name map or an empty entry set.
    by_pattern: OrdMap<(ResourceType, PatternType), ByName>,
    /// Bindings held (derived: recounted when decoded).
    #[serde(skip)]
    len: usize,
}

/// `Acls` as decoded: the same shape, in collections that reserve nothing up front.
#[derive(Deserialize)]
struct StoredAcls {
    by_pattern:
        BTreeMap<(ResourceType, PatternType), BTreeMap<String, BTreeSet<AccessControlEntry>>>,
}

impl From<StoredAcls> for Acls {
    fn from(stored: StoredAcls) -> Self {
        let mut acls = Acls::default();
        for (kind, names) in stored.by_pattern {
            let mut by_name = ByName::default();
            for (name, entries) in names {
                if entries.is_empty() {
                    continue;
                }
                acls.len += entries.len();
                by_name.insert(name, entries.into_iter().collect());
            }
            if !by_name.is_empty() {
                acls.by_pattern.insert(kind, by_name);
            }
        }
        acls
    }
}

impl Acls {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, binding: &AclBinding) -> bool {
        self.by_pattern
            .get(&(binding.pattern.resource_type, binding.pattern.pattern_type))
            .and_then(|names| names.get(binding.pattern.name.as_str()))
            .is_some_and(|entries| entries.contains(&binding.entry))
    }

    /// Stores a valid binding; whether it is new. Creating one already held succeeds and
    /// changes nothing, as in Kafka, even when `ACLS_MAX` are held.
    pub fn create(&mut self, binding: AclBinding) -> Result<bool, AclError> {
        validate_new(&binding)?;
        if self.contains(&binding) {
            return Ok(false);
        }
        if self.len >= ACLS_MAX {
            return Err(AclError::TooManyAcls);
        }
        let AclBinding { pattern, entry } = binding;
        let ResourcePattern {
            resource_type,
            name,
            pattern_type,
        } = pattern;
        self.by_pattern
            .entry((resource_type, pattern_type))
            .or_default()
            .entry(name)
            .or_default()
            .insert(entry);
        self.len += 1;
        Ok(true)
    }

    /// Removes every binding the filter matches, and returns them (DeleteAcls' answer).
    pub fn delete_matching(&mut self, filter: &AclBindingFilter) -> Vec<AclBinding> {
        let doomed = self.describe(filter);
        for binding in &doomed {
            self.remove(binding);
        }
        doomed
    }

    /// The bindings the filter matches, in order of resource type, pattern type, name, entry.
    pub fn describe(&self, filter: &AclBindingFilter) -> Vec<AclBinding> {
        let mut found = Vec::new();
        for (&(resource_type, pattern_type), names) in &self.by_pattern {
            for (name, entries) in names {
                if !filter
                    .pattern
                    .matches_parts(resource_type, name, pattern_type)
                {
                    continue;
                }
                for entry in entries.iter().filter(|e| filter.entry.matches(e)) {
                    found.push(AclBinding {
                        pattern: ResourcePattern {
                            resource_type,
                            name: name.clone(),
                            pattern_type,
                        },
                        entry: entry.clone(),
                    });
                }
            }
        }
        found
    }

    /// Every entry on a pattern that applies to the resource `name` of `resource_type`: the
    /// literal `name`, the literal `"*"`, and each prefixed pattern `name` begins with. What
    /// the authorizer decides from (Kafka's `StandardAuthorizerData.findAclRule`).
    pub fn entries_on<'a>(
        &'a self,
        resource_type: ResourceType,
        name: &'a str,
    ) -> impl Iterator<Item = &'a AccessControlEntry> + 'a {
        let literal = self.by_pattern.get(&(resource_type, PatternType::Literal));
        let exact = literal.and_then(|names| names.get(name));
        // For the resource called "*" the wildcard's entries are the exact name's: once.
        let wildcard = literal
            .filter(|_| name != WILDCARD_RESOURCE)
            .and_then(|names| names.get(WILDCARD_RESOURCE));
        let prefixed = Prefixes {
            names: self.by_pattern.get(&(resource_type, PatternType::Prefixed)),
            upper: name,
            inclusive: true,
        };
        exact
            .into_iter()
            .chain(wildcard)
            .chain(prefixed)
            .flat_map(|entries| entries.iter())
    }

    fn remove(&mut self, binding: &AclBinding) -> bool {
        let kind = (binding.pattern.resource_type, binding.pattern.pattern_type);
        let name = binding.pattern.name.as_str();
        let Some(names) = self.by_pattern.get_mut(&kind) else {
            return false;
        };
        let Some(entries) = names.get_mut(name) else {
            return false;
        };
        if entries.remove(&binding.entry).is_none() {
            return false;
        }
        if entries.is_empty() {
            names.remove(name);
        }
        if names.is_empty() {
            self.by_pattern.remove(&kind);
        }
        self.len = self.len.saturating_sub(1);
        true
    }
}

/// The values of the keys of `names` that are prefixes of a name, longest first.
///
/// Walking every prefix of the name would cost a lookup per character, and a resource name
/// comes from the network. This costs one lookup per matching key and per point where the
/// greatest remaining candidate parts from the name. Invariant: every key not yet yielded
/// that is a prefix of the name is a prefix of `upper`, and at most `upper` (less than it
/// unless `inclusive`). Take the greatest key within that bound: if it is a prefix of
/// `upper`, yield it, and only its proper prefixes remain. If not, it first differs from
/// `upper` at some byte `c`, where it is the smaller; a prefix of `upper` longer than `c`
/// would be greater than it, so every remaining match is a prefix of `upper[..c]`. Each step
/// shortens `upper` or makes the bound exclusive, so the walk ends.
struct Prefixes<'a, V> {
    /// `None` once the walk is over (or there are no prefixed patterns).
    names: Option<&'a OrdMap<String, V>>,
    upper: &'a str,
    inclusive: bool,
}

impl<'a, V> Iterator for Prefixes<'a, V> {
    type Item = &'a V;

    fn next(&mut self) -> Option<&'a V> {
        let names = self.names?;
        loop {
            let end = if self.inclusive {
                Bound::Included(self.upper)
            } else {
                Bound::Excluded(self.upper)
            };
            let Some((key, value)) = names.range::<_, str>((Bound::Unbounded, end)).next_back()
            else {
                self.names = None;
                return None;
            };
            let common = common_prefix_len(key, self.upper);
            let Some(shorter) = self.upper.get(..common) else {
                // Not reached: `common` is a character boundary of `upper`.
                self.names = None;
                return None;
            };
            self.upper = shorter;
            if common == key.len() {
                self.inclusive = false;
                return Some(value);
            }
            self.inclusive = true;
        }
    }
}

/// The length of the longest common prefix of `a` and `b`, cut back to a character boundary
/// of `b` (a key that is a prefix of `b` always ends on one).
fn common_prefix_len(a: &str, b: &str) -> usize {
    let mut len = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !b.is_char_boundary(len) {
        len -= 1;
    }
    len
}
