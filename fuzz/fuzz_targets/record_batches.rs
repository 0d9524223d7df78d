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
        let now = 1_700_000_000_000;
        let _ = floe::protocol::records::walk(&batch, |r| {
            let _ = policy.refusal(r.offset_delta, r.timestamp, now);
        });
        let _ = policy.header_refusal(&batch, now);
    }
});
