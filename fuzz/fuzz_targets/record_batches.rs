//! Any bytes as a produce request's records: batch iteration, CRC checks, the walk over an
//! uncompressed batch's records and the timestamp bounds never panic.
#![no_main]

use floe::produce::timestamps::TimestampPolicy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let policy = TimestampPolicy {
        before_max_ms: Some(3_600_000),
        after_max_ms: Some(0),
    };
    for batch in floe::protocol::record_batch::Batches::new(bytes::Bytes::copy_from_slice(data))
        .flatten()
    {
        let _ = batch.validate();
        let _ = (batch.last_sequence(), batch.compression(), batch.offset_count());
        let records = floe::protocol::records::walk(&batch).ok();
        let _ = policy.check(&batch, records.as_deref(), 1_700_000_000_000);
    }
});
