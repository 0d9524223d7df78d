//! Any bytes as the body of a Raft RPC or a forwarded write, as the internal listener decodes
//! them (`metadata::quorum::service`): decoding never panics, whatever the first byte picks.
#![no_main]

use floe::metadata::quorum::service::LearnerJoinRequest;
use floe::metadata::quorum::types::{Commands, NodeId, TypeConfig};
use libfuzzer_sys::fuzz_target;
use openraft::raft::{AppendEntriesRequest, InstallSnapshotRequest, VoteRequest};

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    match kind % 5 {
        0 => drop(postcard::from_bytes::<AppendEntriesRequest<TypeConfig>>(body)),
        1 => drop(postcard::from_bytes::<VoteRequest<NodeId>>(body)),
        2 => drop(postcard::from_bytes::<InstallSnapshotRequest<TypeConfig>>(body)),
        3 => drop(postcard::from_bytes::<Commands>(body)),
        _ => drop(postcard::from_bytes::<LearnerJoinRequest>(body)),
    }
});
