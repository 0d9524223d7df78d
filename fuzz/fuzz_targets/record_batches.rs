//! Any bytes as a produce request's records: batch iteration and CRC checks never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for batch in floe::protocol::record_batch::Batches::new(bytes::Bytes::copy_from_slice(data)).flatten() {
        let _ = batch.validate();
        let _ = (batch.last_sequence(), batch.compression(), batch.offset_count());
    }
});
