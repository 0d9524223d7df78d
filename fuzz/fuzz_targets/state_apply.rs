//! Any bytes as a Raft log entry's commands, applied to a state that has topics, producers
//! and offsets: whatever a log holds, applying it yields outcomes, never a panic or an
//! allocation beyond the limits (the promise that keeps a replayed log harmless).
#![no_main]

use floe::metadata::MetadataState;
use floe::metadata::quorum::types::Commands;
use floe::metadata::state::{CreateTopic, InitProducerId, Limits, SetLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(Commands(commands)) = postcard::from_bytes::<Commands>(data) else {
        return;
    };
    let mut state = MetadataState::default();
    // Half the inputs run with limits in force, half as a log written before them.
    if data.len() % 2 == 0 {
        state.apply(SetLimits {
            limits: Limits::default(),
        });
    }
    state.apply(CreateTopic {
        name: "t".into(),
        id: uuid::Uuid::from_u128(1),
        partitions: 3,
        configs: Default::default(),
    });
    state.apply(InitProducerId { existing: None });
    for command in commands {
        let _ = state.apply(command);
    }
});
