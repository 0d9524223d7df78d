//! Groups' configs (Kafka's GROUP config resources, KIP-848 and KIP-932): a group's overrides
//! of the broker's group settings, such as `share.auto.offset.reset`. Names and values are
//! checked where they arrive (`groups::group_config`); here only their sizes and number.

use imbl::OrdMap;
use serde::{Deserialize, Serialize};

/// The most groups with configs.
pub const CONFIGURED_GROUPS_MAX: usize = 10_000;
/// The most configs one group holds, and their bounds.
pub const GROUP_CONFIGS_MAX: usize = 32;
pub const GROUP_CONFIG_BYTES_MAX: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupConfigError {
    /// Too many configs, or a name or value too long, or too many configured groups.
    OutOfBounds,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupConfigs {
    #[serde(deserialize_with = "super::persistent::ord_map_of_maps")]
    by_group: OrdMap<String, OrdMap<String, String>>,
}

impl GroupConfigs {
    /// A group's configs, by name.
    pub fn of(&self, group: &str) -> Option<&OrdMap<String, String>> {
        self.by_group.get(group)
    }

    pub fn get(&self, group: &str, name: &str) -> Option<&str> {
        self.by_group.get(group)?.get(name).map(String::as_str)
    }

    /// Sets (`Some`) or removes (`None`) each config, all or none.
    pub(super) fn alter(
        &mut self,
        group: &str,
        changes: Vec<(String, Option<String>)>,
    ) -> Result<(), GroupConfigError> {
        let mut configs = self.by_group.get(group).cloned().unwrap_or_default();
        for (name, value) in changes {
            let too_long = name.len() > GROUP_CONFIG_BYTES_MAX
                || value
                    .as_ref()
                    .is_some_and(|v| v.len() > GROUP_CONFIG_BYTES_MAX);
            if too_long {
                return Err(GroupConfigError::OutOfBounds);
            }
            match value {
                Some(value) => configs.insert(name, value),
                None => configs.remove(&name),
            };
        }
        if configs.len() > GROUP_CONFIGS_MAX {
            return Err(GroupConfigError::OutOfBounds);
        }
        if configs.is_empty() {
            self.by_group.remove(group);
        } else {
            if !self.by_group.contains_key(group) && self.by_group.len() >= CONFIGURED_GROUPS_MAX {
                return Err(GroupConfigError::OutOfBounds);
            }
            self.by_group.insert(group.to_string(), configs);
        }
        Ok(())
    }
}
