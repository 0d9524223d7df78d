//! Any bytes as an object read back from the store: footer decoding never panics, for a
//! produce object's footer and for a segment's.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = floe::object::format::decode_footer(data) {
        let _ = floe::object::format::verify_chunks(data, &entries);
    }
    let data_len = data.first().map_or(0, |b| u64::from(*b) * 97);
    if let Ok(index) = floe::object::segment::decode_footer(data, data_len) {
        let _ = index.chunks_from(floe::ids::Offset(data_len as i64), data_len);
    }
});
