//! What the coordinator holds for groups, bounded: the groups themselves live in this agent's
//! memory (soft state, not the Raft log), so a client must not be able to make them grow
//! without end. Kafka's own bounds are its request size and `group.max.size`; these are
//! tighter, and each refusal is a Kafka error code the clients know.
//!
//! | what | at most | refused with |
//! | --- | --- | --- |
//! | a group id | 1,024 bytes (and not empty) | `INVALID_GROUP_ID` |
//! | a member id, instance id, client id, rack, protocol or assignor name | 1,024 bytes | `INVALID_REQUEST` |
//! | a member's metadata (all its protocols), an assignment | 1 MiB | `INVALID_REQUEST` |
//! | members of a classic group | 1,000 (Kafka's `group.max.size`) | `GROUP_MAX_SIZE_REACHED` |
//! | groups this agent coordinates | 100,000 | `COORDINATOR_NOT_AVAILABLE` (retriable) |

use crate::protocol::ErrorCode;
use bytes::Bytes;

pub const ID_BYTES_MAX: usize = 1024;
pub const METADATA_BYTES_MAX: usize = 1 << 20;
pub const CLASSIC_MEMBERS_MAX: usize = 1000;
pub const GROUPS_MAX: usize = 100_000;

/// Why a group id is refused, if it is.
pub fn group_id_refusal(group_id: &str) -> Option<ErrorCode> {
    (group_id.is_empty() || group_id.len() > ID_BYTES_MAX).then_some(ErrorCode::InvalidGroupId)
}

/// Why these names (ids, protocol names) are refused, if one is too long.
pub fn names_refusal<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<ErrorCode> {
    names
        .into_iter()
        .any(|n| n.len() > ID_BYTES_MAX)
        .then_some(ErrorCode::InvalidRequest)
}

/// Why a member's metadata or an assignment is refused, if it is too large.
pub fn metadata_refusal<'a>(parts: impl IntoIterator<Item = &'a Bytes>) -> Option<ErrorCode> {
    let total: usize = parts.into_iter().map(Bytes::len).sum();
    (total > METADATA_BYTES_MAX).then_some(ErrorCode::InvalidRequest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_names_and_metadata_are_bounded() {
        assert_eq!(group_id_refusal(""), Some(ErrorCode::InvalidGroupId));
        assert_eq!(group_id_refusal(&"g".repeat(ID_BYTES_MAX)), None);
        assert_eq!(
            group_id_refusal(&"g".repeat(ID_BYTES_MAX + 1)),
            Some(ErrorCode::InvalidGroupId)
        );
        assert_eq!(names_refusal(["a", "b"]), None);
        assert_eq!(
            names_refusal(["a", &"m".repeat(ID_BYTES_MAX + 1)]),
            Some(ErrorCode::InvalidRequest)
        );
        let half = Bytes::from(vec![0; METADATA_BYTES_MAX / 2]);
        assert_eq!(metadata_refusal([&half, &half]), None);
        assert_eq!(
            metadata_refusal([&half, &half, &Bytes::from_static(b"x")]),
            Some(ErrorCode::InvalidRequest)
        );
    }
}
