//! The topics as consumer groups see them, copied out of the metadata state so that a
//! heartbeat runs (and computes a target assignment) without holding the metadata lock: a
//! commit waiting to apply never waits for an assignor. The copy is rebuilt only when the
//! state's `topics_version` moves; a steady heartbeat takes the cached one under the lock,
//! which is a comparison and a reference count.

use super::consumer::TopicImage;
use crate::metadata::MetadataState;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

#[derive(Debug, Default)]
pub struct TopicsCopy {
    version: u64,
    by_name: BTreeMap<String, (Uuid, i32)>,
    names: HashMap<Uuid, String>,
}

impl TopicsCopy {
    pub fn of(state: &MetadataState) -> TopicsCopy {
        let by_name: BTreeMap<String, (Uuid, i32)> = state
            .topics()
            .map(|t| (t.name.clone(), (t.id, t.partitions.len() as i32)))
            .collect();
        let names = by_name
            .iter()
            .map(|(name, (id, _))| (*id, name.clone()))
            .collect();
        TopicsCopy {
            version: state.topics_version(),
            by_name,
            names,
        }
    }
}

impl TopicImage for TopicsCopy {
    fn by_name(&self, name: &str) -> Option<(Uuid, i32)> {
        self.by_name.get(name).copied()
    }

    fn name_of(&self, id: &Uuid) -> Option<String> {
        self.names.get(id).cloned()
    }

    fn all(&self) -> Vec<(String, Uuid, i32)> {
        self.by_name
            .iter()
            .map(|(name, (id, count))| (name.clone(), *id, *count))
            .collect()
    }

    fn version(&self) -> u64 {
        self.version
    }
}

/// The latest copy, shared by every heartbeat until the topics change.
#[derive(Clone, Default)]
pub struct CachedTopics(Arc<Mutex<Option<Arc<TopicsCopy>>>>);

impl CachedTopics {
    /// The copy of `state`'s topics: the cached one while their version has not moved.
    pub fn of(&self, state: &MetadataState) -> Arc<TopicsCopy> {
        let mut cached = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match &*cached {
            Some(copy) if copy.version == state.topics_version() => copy.clone(),
            _ => {
                let copy = Arc::new(TopicsCopy::of(state));
                *cached = Some(copy.clone());
                copy
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::state::CreateTopic;

    #[test]
    fn the_copy_is_shared_until_the_topics_change() {
        let mut state = MetadataState::default();
        let create = |name: &str| CreateTopic {
            name: name.into(),
            id: Uuid::from_u128(name.len() as u128 * 7 + u128::from(name.as_bytes()[0])),
            partitions: 2,
            configs: Default::default(),
        };
        state.apply(create("a"));
        let cache = CachedTopics::default();
        let first = cache.of(&state);
        assert!(Arc::ptr_eq(&first, &cache.of(&state)), "nothing changed");
        state.apply(create("b"));
        let second = cache.of(&state);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.all().len(), 2);
        assert!(second.version() > first.version());
        let (id, count) = second.by_name("b").expect("b");
        assert_eq!((second.name_of(&id).as_deref(), count), (Some("b"), 2));
    }
}
