//! How a snapshot holds `MetadataState`: a map of named sections, one per part of the state,
//! each in that part's own encoding (postcard writes a map as its length, then each name and
//! value in turn).
//!
//! ```text
//! clock           (applied, now_ms, producers_checked_ms)     required
//! limits          Option<Limits>
//! topics          Topics
//! objects         Objects
//! producers       Producers
//! recent_commits  RecentCommits
//! group_offsets   GroupOffsets
//! agents          Registry
//! jobs            Leases
//! transactions    Transactions
//! security        SecurityState
//! share           SharePartitions
//! group_configs   GroupConfigs
//! client_quotas   ClientQuotas
//! ```
//!
//! - A part added later is a new section: absent from older snapshots, it starts empty.
//! - A change to one part's layout renames its section (`topics` → `topics-2`). Until the
//!   first release no reader of the old name is kept and the golden file
//!   (`tests/snapshots/machine.postcard`) is rewritten; after it, the reader of the old name
//!   lives in that part's own file.
//! - A name this build does not know was written by a newer one, and is refused; so is a name
//!   seen twice, and a snapshot without `clock`.

use super::MetadataState;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The sections, in the order they are written.
const SECTIONS: &[&str] = &[
    "clock",
    "limits",
    "topics",
    "objects",
    "producers",
    "recent_commits",
    "group_offsets",
    "agents",
    "jobs",
    "transactions",
    "security",
    "share",
    "group_configs",
    "client_quotas",
];

impl Serialize for MetadataState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // No `..`: a new part does not compile until it has a section.
        let MetadataState {
            topics,
            producers,
            group_offsets,
            registry,
            recent_commits,
            limits,
            applied,
            now_ms,
            producers_checked_ms,
            objects,
            leases,
            transactions,
            security,
            share,
            group_configs,
            client_quotas,
        } = self;
        let mut map = serializer.serialize_map(Some(SECTIONS.len()))?;
        map.serialize_entry("clock", &(applied, now_ms, producers_checked_ms))?;
        map.serialize_entry("limits", limits)?;
        map.serialize_entry("topics", topics)?;
        map.serialize_entry("objects", objects)?;
        map.serialize_entry("producers", producers)?;
        map.serialize_entry("recent_commits", recent_commits)?;
        map.serialize_entry("group_offsets", group_offsets)?;
        map.serialize_entry("agents", registry)?;
        map.serialize_entry("jobs", leases)?;
        map.serialize_entry("transactions", transactions)?;
        map.serialize_entry("security", security)?;
        map.serialize_entry("share", share)?;
        map.serialize_entry("group_configs", group_configs)?;
        map.serialize_entry("client_quotas", client_quotas)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for MetadataState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Sections)
    }
}

struct Sections;

impl<'de> Visitor<'de> for Sections {
    type Value = MetadataState;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the metadata state's sections")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetadataState, A::Error> {
        let mut state = MetadataState::default();
        let mut seen = [false; SECTIONS.len()];
        while let Some(name) = map.next_key::<String>()? {
            let Some(at) = SECTIONS.iter().position(|s| *s == name) else {
                return Err(de::Error::unknown_field(&name, SECTIONS));
            };
            if std::mem::replace(&mut seen[at], true) {
                return Err(de::Error::custom(format_args!(
                    "snapshot section {name} twice"
                )));
            }
            match SECTIONS[at] {
                "clock" => {
                    (state.applied, state.now_ms, state.producers_checked_ms) = map.next_value()?;
                }
                "limits" => state.limits = map.next_value()?,
                "topics" => state.topics = map.next_value()?,
                "objects" => state.objects = map.next_value()?,
                "producers" => state.producers = map.next_value()?,
                "recent_commits" => state.recent_commits = map.next_value()?,
                "group_offsets" => state.group_offsets = map.next_value()?,
                "agents" => state.registry = map.next_value()?,
                "jobs" => state.leases = map.next_value()?,
                "transactions" => state.transactions = map.next_value()?,
                "security" => state.security = map.next_value()?,
                "share" => state.share = map.next_value()?,
                "group_configs" => state.group_configs = map.next_value()?,
                "client_quotas" => state.client_quotas = map.next_value()?,
                other => return Err(de::Error::unknown_field(other, SECTIONS)),
            }
        }
        if !seen[0] {
            return Err(de::Error::missing_field("clock"));
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::{CreateTopic, Tick};

    /// A state with something in it, and its sections as written.
    fn state() -> MetadataState {
        let mut state = MetadataState::default();
        state.apply(Tick { now_ms: 1_000 });
        state.apply(CreateTopic {
            name: "t".into(),
            id: uuid::Uuid::from_u128(1),
            partitions: 2,
            configs: Default::default(),
        });
        state
    }

    /// Writes `sections` as a snapshot would: a map of names to each part's encoding.
    fn written(sections: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = postcard::to_stdvec(&sections.len()).expect("encodes");
        for (name, value) in sections {
            bytes.extend(postcard::to_stdvec(name).expect("encodes"));
            bytes.extend(value);
        }
        bytes
    }

    fn clock(state: &MetadataState) -> Vec<u8> {
        postcard::to_stdvec(&(state.applied, state.now_ms, state.producers_checked_ms))
            .expect("encodes")
    }

    #[test]
    fn sections_are_written_by_name_and_read_back() {
        let state = state();
        let bytes = postcard::to_stdvec(&state).expect("encodes");
        let topics = postcard::to_stdvec(&state.topics).expect("encodes");
        assert!(
            bytes.windows(topics.len()).any(|w| w == topics),
            "the topics section is the part's own encoding"
        );
        let read: MetadataState = postcard::from_bytes(&bytes).expect("decodes");
        assert_eq!(read, state);
    }

    #[test]
    fn a_missing_section_loads_as_empty() {
        let state = state();
        let bytes = written(&[
            ("clock", clock(&state)),
            (
                "topics",
                postcard::to_stdvec(&state.topics).expect("encodes"),
            ),
        ]);
        let read: MetadataState = postcard::from_bytes(&bytes).expect("decodes");
        assert_eq!(read.topics, state.topics);
        assert_eq!(read.now_ms(), 1_000);
        assert_eq!(read.applied(), 2);
        assert_eq!(read.transactions, Default::default());
        assert!(!read.limits_set());
    }

    #[test]
    fn a_snapshot_without_its_clock_is_refused() {
        let state = state();
        let bytes = written(&[(
            "topics",
            postcard::to_stdvec(&state.topics).expect("encodes"),
        )]);
        assert!(postcard::from_bytes::<MetadataState>(&bytes).is_err());
    }

    #[test]
    fn an_unknown_section_is_refused() {
        let state = state();
        let bytes = written(&[("clock", clock(&state)), ("topics-2", vec![0])]);
        assert!(postcard::from_bytes::<MetadataState>(&bytes).is_err());
    }

    #[test]
    fn a_section_twice_is_refused() {
        let state = state();
        let bytes = written(&[("clock", clock(&state)), ("clock", clock(&state))]);
        assert!(postcard::from_bytes::<MetadataState>(&bytes).is_err());
    }
}
