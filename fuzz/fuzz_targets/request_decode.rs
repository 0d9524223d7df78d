//! Any bytes as a request frame: header parse and body decode must return, never panic or
//! allocate beyond the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = floe::protocol::frame::parse_request(bytes::Bytes::copy_from_slice(data)) {
        let _ = frame.decode_body();
    }
});
