//! A batch rewritten with only some of its records, as Kafka's `MemoryRecords.filterTo`
//! writes a cleaned batch.

use crate::protocol::compression::compress;
use crate::protocol::record_batch::{DELETE_HORIZON_FLAG, RecordBatch, Rewrite, reseal};
use crate::protocol::records::Record;
use bytes::Bytes;

/// `original` with only `records` (some of its own, in order) left in it: the same base
/// offset, last offset delta, producer, sequence, leader epoch and codec, so every offset it
/// held keeps its place (the dropped ones become gaps); no records at all when none is left
/// (the header kept alone, uncompressed, as Kafka keeps a producer's last batch). With
/// `delete_horizon_ms` the base timestamp becomes that horizon and the flag says so; record
/// timestamps are unchanged. `None` when the batch's codec is not one Kafka defines.
pub fn rebuild(
    original: &RecordBatch,
    records: &[Record],
    delete_horizon_ms: Option<i64>,
) -> Option<Bytes> {
    let mut attributes = original.attributes();
    let base_timestamp_ms = match delete_horizon_ms {
        Some(horizon) => {
            attributes |= DELETE_HORIZON_FLAG;
            horizon
        }
        None => original.base_timestamp(),
    };
    let mut encoded = bytes::BytesMut::new();
    for record in records {
        record.encode(base_timestamp_ms, &mut encoded);
    }
    let payload = if records.is_empty() {
        // Kafka writes an empty batch uncompressed (`writeEmptyHeader`).
        attributes &= !0x07;
        Vec::new()
    } else {
        compress(original.compression(), &encoded)?
    };
    // The batch's max timestamp is its records' (or, with LogAppendTime, the append time).
    let max_timestamp_ms = match records.iter().map(|r| r.timestamp).max() {
        Some(max) if !original.is_log_append_time() => max,
        _ => original.max_timestamp(),
    };
    Some(reseal(
        original,
        Rewrite {
            attributes,
            base_timestamp_ms,
            max_timestamp_ms,
            records: records.len() as i32,
            payload: &payload,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::{BatchSpec, build_batch};
    use crate::protocol::records::decode;

    #[test]
    fn a_batch_rebuilt_with_all_its_records_is_the_same_bytes() {
        let bytes = build_batch(BatchSpec {
            producer_id: 7,
            producer_epoch: 1,
            base_sequence: 3,
            records: 5,
            value_bytes: 10,
            base_timestamp_ms: 1_000,
        });
        let batch = RecordBatch::new(bytes.clone()).unwrap();
        let records = decode(&batch, 1 << 20).unwrap();
        assert_eq!(records[3].timestamp, 1_003);
        assert_eq!(rebuild(&batch, &records, None).unwrap(), bytes);
    }
}
