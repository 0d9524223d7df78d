//! Any bytes as the Raft log file (`log_store::decode_records`): records decode, a torn tail
//! is cut, a damaged middle is refused — never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = floe::metadata::quorum::log_store::decode_records(data);
});
