//! Any bytes as a snapshot's data, in any layout tag (`state_machine::decode_machine`): a
//! snapshot sent by a peer or read from disk decodes or is refused, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = floe::metadata::quorum::state_machine::decode_machine(data);
});
