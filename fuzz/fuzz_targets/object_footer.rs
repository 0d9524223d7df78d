//! Any bytes as an object read back from the store: footer decoding never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = floe::object::format::decode_footer(data) {
        let _ = floe::object::format::verify_chunks(data, &entries);
    }
});
