//! A zero-copy view of Kafka RecordBatch v2 headers.
//!
//! ```text
//! offset  size  field
//!  0       8    base offset            ┐ outside the CRC: the broker assigns and
//!  8       4    batch length           │ patches these without touching the payload
//! 12       4    partition leader epoch ┘
//! 16       1    magic (2)
//! 17       4    CRC-32C of bytes 21..end
//! 21       2    attributes
//! 23       4    last offset delta
//! 27       8    base timestamp
//! 35       8    max timestamp
//! 43       8    producer id
//! 51       2    producer epoch
//! 53       4    base sequence
//! 57       4    record count
//! 61      ...   records (possibly compressed)
//! ```
//! Record payloads are never decoded here: the broker stores client batches byte for byte.
//! Magic 0 and 1 message sets put their magic byte at the same offset, so they are recognised
//! and rejected.

use bytes::Bytes;

pub const HEADER_BYTES: usize = 61;
/// Bytes before the batch length field's count starts (base offset + batch length).
pub const LOG_OVERHEAD: usize = 12;
const MAGIC_OFFSET: usize = 16;
const CRC_OFFSET: usize = 17;
const ATTRIBUTES_OFFSET: usize = 21;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    #[error("record batch truncated: {needed} bytes needed, {remaining} remain")]
    Truncated { needed: usize, remaining: usize },
    #[error("record batch length {0} is invalid")]
    InvalidLength(i32),
    #[error("record batch magic {0} is not supported (only magic 2)")]
    UnsupportedMagic(i8),
    #[error("record batch CRC mismatch: header says {expected:#010x}, payload has {actual:#010x}")]
    CrcMismatch { expected: u32, actual: u32 },
    #[error("record batch claims {count} records but its offset delta spans {span}")]
    InconsistentCount { count: i32, span: i64 },
}

/// Compression codec named in a batch's attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
    Unknown(u8),
}

/// One RecordBatch v2: a zero-copy slice of the buffer it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch {
    bytes: Bytes,
}

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(raw)
}

impl RecordBatch {
    /// Validates the framing of one whole batch (length, magic) without checking its CRC.
    pub fn new(bytes: Bytes) -> Result<RecordBatch, BatchError> {
        if bytes.len() < MAGIC_OFFSET + 1 {
            return Err(BatchError::Truncated {
                needed: MAGIC_OFFSET + 1,
                remaining: bytes.len(),
            });
        }
        let magic = bytes[MAGIC_OFFSET] as i8;
        if magic != 2 {
            return Err(BatchError::UnsupportedMagic(magic));
        }
        let length = be_i32(&bytes, 8);
        let total = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(LOG_OVERHEAD))
            .filter(|&t| t >= HEADER_BYTES)
            .ok_or(BatchError::InvalidLength(length))?;
        if bytes.len() != total {
            return Err(BatchError::Truncated {
                needed: total,
                remaining: bytes.len(),
            });
        }
        Ok(RecordBatch { bytes })
    }

    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    pub fn base_offset(&self) -> i64 {
        be_i64(&self.bytes, 0)
    }

    pub fn batch_length(&self) -> i32 {
        be_i32(&self.bytes, 8)
    }

    pub fn partition_leader_epoch(&self) -> i32 {
        be_i32(&self.bytes, 12)
    }

    pub fn magic(&self) -> i8 {
        self.bytes[MAGIC_OFFSET] as i8
    }

    pub fn crc(&self) -> u32 {
        be_i32(&self.bytes, CRC_OFFSET) as u32
    }

    pub fn attributes(&self) -> i16 {
        be_i16(&self.bytes, ATTRIBUTES_OFFSET)
    }

    pub fn compression(&self) -> Compression {
        match self.attributes() & 0x07 {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            other => Compression::Unknown(other as u8),
        }
    }

    /// Timestamps are the broker's append time rather than the producer's.
    pub fn is_log_append_time(&self) -> bool {
        self.attributes() & 0x08 != 0
    }

    pub fn is_transactional(&self) -> bool {
        self.attributes() & 0x10 != 0
    }

    pub fn is_control(&self) -> bool {
        self.attributes() & 0x20 != 0
    }

    pub fn last_offset_delta(&self) -> i32 {
        be_i32(&self.bytes, 23)
    }

    pub fn base_timestamp(&self) -> i64 {
        be_i64(&self.bytes, 27)
    }

    pub fn max_timestamp(&self) -> i64 {
        be_i64(&self.bytes, 35)
    }

    pub fn producer_id(&self) -> i64 {
        be_i64(&self.bytes, 43)
    }

    pub fn producer_epoch(&self) -> i16 {
        be_i16(&self.bytes, 51)
    }

    pub fn base_sequence(&self) -> i32 {
        be_i32(&self.bytes, 53)
    }

    pub fn record_count(&self) -> i32 {
        be_i32(&self.bytes, 57)
    }

    /// The batch's offsets span `last_offset_delta + 1`; the broker assigns them from here.
    pub fn offset_count(&self) -> i64 {
        i64::from(self.last_offset_delta()) + 1
    }

    /// The last sequence number the batch uses (sequences wrap at i32::MAX, as in Kafka).
    pub fn last_sequence(&self) -> i32 {
        let last = i64::from(self.base_sequence()) + i64::from(self.last_offset_delta());
        if last > i64::from(i32::MAX) {
            (last - i64::from(i32::MAX) - 1) as i32
        } else {
            last as i32
        }
    }

    /// Checks the CRC-32C over attributes..end, and that the record count fits the offsets.
    pub fn validate(&self) -> Result<(), BatchError> {
        let actual = crc32c::crc32c(&self.bytes[ATTRIBUTES_OFFSET..]);
        if actual != self.crc() {
            return Err(BatchError::CrcMismatch {
                expected: self.crc(),
                actual,
            });
        }
        let span = self.offset_count();
        if self.record_count() < 0
            || i64::from(self.record_count()) > span
            || self.last_offset_delta() < 0
        {
            return Err(BatchError::InconsistentCount {
                count: self.record_count(),
                span,
            });
        }
        Ok(())
    }
}

/// Iterates the batches of a records blob. A truncated final batch is an error: a produce
/// request must carry whole batches (fetch responses may end in a partial one; readers of those
/// stop at the first `Truncated`).
pub struct Batches {
    rest: Bytes,
}

impl Batches {
    pub fn new(records: Bytes) -> Batches {
        Batches { rest: records }
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, BatchError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() < LOG_OVERHEAD {
            let remaining = self.rest.len();
            self.rest.clear();
            return Some(Err(BatchError::Truncated {
                needed: LOG_OVERHEAD,
                remaining,
            }));
        }
        let length = be_i32(&self.rest, 8);
        let total = match usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(LOG_OVERHEAD))
        {
            Some(total) => total,
            None => {
                self.rest.clear();
                return Some(Err(BatchError::InvalidLength(length)));
            }
        };
        if total > self.rest.len() {
            let remaining = self.rest.len();
            self.rest.clear();
            return Some(Err(BatchError::Truncated {
                needed: total,
                remaining,
            }));
        }
        let batch = self.rest.split_to(total);
        let result = RecordBatch::new(batch);
        if result.is_err() {
            self.rest.clear();
        }
        Some(result)
    }
}

/// How much of a batch's header [`set_base_offset`] and [`set_partition_leader_epoch`] write.
pub const REWRITTEN_HEADER_BYTES: usize = 16;

/// Writes the broker-assigned base offset into a batch header (outside the CRC).
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) {
    batch[0..8].copy_from_slice(&base_offset.to_be_bytes());
}

/// Writes the partition leader epoch into a batch header (outside the CRC).
pub fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) {
    batch[12..16].copy_from_slice(&epoch.to_be_bytes());
}

/// Stamps a batch with the broker's time (Kafka's LogAppendTime): sets the timestamp-type
/// bit and the max timestamp, which every record of the batch then carries, and recomputes
/// the CRC they are inside of. Record timestamps themselves are left as sent, as in Kafka.
pub fn set_log_append_time(batch: &mut [u8], now_ms: i64) {
    let attributes = be_i16(batch, ATTRIBUTES_OFFSET) | 0x08;
    batch[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&attributes.to_be_bytes());
    batch[35..43].copy_from_slice(&now_ms.to_be_bytes());
    let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
    batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

/// What `build_batch` writes: uncompressed records with null keys and filler values.
#[derive(Debug, Clone, Copy)]
pub struct BatchSpec {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records: i32,
    pub value_bytes: usize,
    /// The first record's timestamp; record i is stamped `base_timestamp_ms + i`.
    pub base_timestamp_ms: i64,
}

/// Builds a valid RecordBatch v2 (the load generator, tests and benches).
pub fn build_batch(spec: BatchSpec) -> Bytes {
    use bytes::{BufMut, BytesMut};
    let count = spec.records.max(1);
    let mut records = BytesMut::with_capacity(count as usize * (spec.value_bytes + 16));
    let mut record = BytesMut::new();
    for i in 0..count {
        record.clear();
        record.put_i8(0); // attributes
        super::wire::write_varlong(&mut record, i64::from(i)); // timestamp delta
        super::wire::write_varint(&mut record, i); // offset delta
        super::wire::write_varint(&mut record, -1); // null key
        super::wire::write_varint(&mut record, spec.value_bytes as i32);
        record.put_bytes(b'v', spec.value_bytes);
        super::wire::write_varint(&mut record, 0); // no headers
        super::wire::write_varint(&mut records, record.len() as i32);
        records.put_slice(&record);
    }
    seal(
        Header {
            base_offset: 0,
            partition_leader_epoch: -1,
            attributes: 0,
            last_offset_delta: count - 1,
            first_timestamp_ms: spec.base_timestamp_ms,
            max_timestamp_ms: spec.base_timestamp_ms + i64::from(count - 1),
            producer_id: spec.producer_id,
            producer_epoch: spec.producer_epoch,
            base_sequence: spec.base_sequence,
            records: count,
        },
        &records,
    )
}

/// The fields of a batch header `seal` writes (magic is 2; the length and CRC follow from the
/// records). A new batch starts at offset 0 with no leader epoch and its last offset delta
/// follows from its records; a rewritten one keeps its own (`rebuild`).
struct Header {
    base_offset: i64,
    partition_leader_epoch: i32,
    attributes: i16,
    last_offset_delta: i32,
    first_timestamp_ms: i64,
    max_timestamp_ms: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    records: i32,
}

/// A RecordBatch v2 of `records` (already encoded) under `header`, its CRC computed.
fn seal(header: Header, records: &[u8]) -> Bytes {
    use bytes::{BufMut, BytesMut};
    let mut batch = BytesMut::with_capacity(HEADER_BYTES + records.len());
    batch.put_i64(header.base_offset);
    batch.put_i32((HEADER_BYTES - LOG_OVERHEAD + records.len()) as i32);
    batch.put_i32(header.partition_leader_epoch);
    batch.put_i8(2);
    batch.put_u32(0);
    batch.put_i16(header.attributes);
    batch.put_i32(header.last_offset_delta);
    batch.put_i64(header.first_timestamp_ms);
    batch.put_i64(header.max_timestamp_ms);
    batch.put_i64(header.producer_id);
    batch.put_i16(header.producer_epoch);
    batch.put_i32(header.base_sequence);
    batch.put_i32(header.records);
    batch.put_slice(records);
    let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
    batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    batch.freeze()
}

/// Kafka's control batch ending a transaction (`EndTransactionMarker`): transactional and
/// control attributes, no sequence, one record whose key is (version 0, type: 0 abort, 1
/// commit) and whose value is (version 0, coordinator epoch). Its base offset and leader epoch
/// are patched by the reader like any batch's.
pub fn build_control_batch(
    producer_id: i64,
    producer_epoch: i16,
    commit: bool,
    coordinator_epoch: i32,
    timestamp_ms: i64,
) -> Bytes {
    use bytes::{BufMut, BytesMut};
    let mut record = BytesMut::with_capacity(24);
    record.put_i8(0); // attributes
    super::wire::write_varlong(&mut record, 0); // timestamp delta
    super::wire::write_varint(&mut record, 0); // offset delta
    super::wire::write_varint(&mut record, 4);
    record.put_i16(0); // key version
    record.put_i16(i16::from(commit)); // ControlRecordType: ABORT 0, COMMIT 1
    super::wire::write_varint(&mut record, 6);
    record.put_i16(0); // value version
    record.put_i32(coordinator_epoch);
    super::wire::write_varint(&mut record, 0); // no headers
    let mut records = BytesMut::with_capacity(record.len() + 1);
    super::wire::write_varint(&mut records, record.len() as i32);
    records.put_slice(&record);
    seal(
        Header {
            base_offset: 0,
            partition_leader_epoch: -1,
            attributes: CONTROL_ATTRIBUTES,
            last_offset_delta: 0,
            first_timestamp_ms: timestamp_ms,
            max_timestamp_ms: timestamp_ms,
            producer_id,
            producer_epoch,
            base_sequence: -1,
            records: 1,
        },
        &records,
    )
}

/// The attribute bit of a batch whose base timestamp is its delete horizon (KIP-534): the
/// time after which the cleaner may drop its tombstones, or the batch if it is a marker.
pub const DELETE_HORIZON_FLAG: i16 = 0x40;

/// The delete horizon the cleaner stamped on this batch, if it did (KIP-534).
pub fn delete_horizon(batch: &RecordBatch) -> Option<i64> {
    (batch.attributes() & DELETE_HORIZON_FLAG != 0).then(|| batch.base_timestamp())
}

/// The header fields a rewritten batch changes (`reseal`).
pub struct Rewrite<'a> {
    pub attributes: i16,
    pub base_timestamp_ms: i64,
    pub max_timestamp_ms: i64,
    pub records: i32,
    /// The records, encoded and compressed as `attributes` says.
    pub payload: &'a [u8],
}

/// `original`'s header over other records: the same base offset, last offset delta,
/// producer, sequence and leader epoch, so every offset it held keeps its place; the CRC
/// computed again.
pub fn reseal(original: &RecordBatch, rewrite: Rewrite<'_>) -> Bytes {
    seal(
        Header {
            base_offset: original.base_offset(),
            partition_leader_epoch: original.partition_leader_epoch(),
            attributes: rewrite.attributes,
            last_offset_delta: original.last_offset_delta(),
            first_timestamp_ms: rewrite.base_timestamp_ms,
            max_timestamp_ms: rewrite.max_timestamp_ms,
            producer_id: original.producer_id(),
            producer_epoch: original.producer_epoch(),
            base_sequence: original.base_sequence(),
            records: rewrite.records,
        },
        rewrite.payload,
    )
}

/// A control batch's attributes: transactional (bit 4) and control (bit 5).
const CONTROL_ATTRIBUTES: i16 = 0x30;

/// The type of a control batch's record, read from its key: `Some(true)` for a commit,
/// `Some(false)` for an abort (uncompressed: Kafka never compresses control batches).
pub fn control_commit(batch: &RecordBatch) -> Option<bool> {
    if !batch.is_control() {
        return None;
    }
    let mut at = batch.as_bytes().slice(HEADER_BYTES..);
    let _length = super::wire::read_varint(&mut at).ok()?;
    if at.is_empty() {
        return None;
    }
    let _attributes = bytes::Buf::get_i8(&mut at);
    let _timestamp_delta = super::wire::read_varlong(&mut at).ok()?;
    let _offset_delta = super::wire::read_varint(&mut at).ok()?;
    let key_len = super::wire::read_varint(&mut at).ok()?;
    if key_len < 4 || at.len() < 4 {
        return None;
    }
    match i16::from_be_bytes([at[2], at[3]]) {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// A valid batch of `count` small uncompressed records (tests and benches).
pub fn build_test_batch(
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    count: i32,
    value_bytes: usize,
) -> Bytes {
    build_batch(BatchSpec {
        producer_id,
        producer_epoch,
        base_sequence,
        records: count,
        value_bytes,
        base_timestamp_ms: 1_700_000_000_000,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn log_append_time_stamps_the_batch_and_keeps_its_crc_valid() {
        let mut raw = build_test_batch(-1, -1, -1, 3, 10).to_vec();
        set_log_append_time(&mut raw, 42);
        let batch = RecordBatch::new(raw.into()).expect("valid");
        batch.validate().expect("crc");
        assert!(batch.is_log_append_time());
        assert_eq!(batch.max_timestamp(), 42);
        assert_eq!(batch.record_count(), 3);
    }

    #[test]
    fn reads_every_header_field() {
        let bytes = build_test_batch(42, 3, 100, 5, 10);
        let batch = RecordBatch::new(bytes).expect("valid");
        batch.validate().expect("crc");
        assert_eq!(batch.magic(), 2);
        assert_eq!(batch.producer_id(), 42);
        assert_eq!(batch.producer_epoch(), 3);
        assert_eq!(batch.base_sequence(), 100);
        assert_eq!(batch.last_sequence(), 104);
        assert_eq!(batch.record_count(), 5);
        assert_eq!(batch.last_offset_delta(), 4);
        assert_eq!(batch.max_timestamp(), 1_700_000_000_004);
        assert_eq!(batch.compression(), Compression::None);
        assert!(!batch.is_transactional() && !batch.is_control());
    }

    #[test]
    fn a_control_batch_is_valid_and_says_what_it_ends() {
        for commit in [false, true] {
            let batch = RecordBatch::new(build_control_batch(7, 3, commit, 0, 42)).expect("valid");
            batch.validate().expect("crc");
            assert!(batch.is_control() && batch.is_transactional());
            assert_eq!((batch.producer_id(), batch.producer_epoch()), (7, 3));
            assert_eq!((batch.base_sequence(), batch.record_count()), (-1, 1));
            assert_eq!((batch.offset_count(), batch.max_timestamp()), (1, 42));
            assert_eq!(control_commit(&batch), Some(commit));
            assert_eq!(batch.size(), 78, "markers::MARKER_BATCH_BYTES");
        }
        let data = RecordBatch::new(build_test_batch(1, 0, 0, 1, 4)).expect("valid");
        assert_eq!(control_commit(&data), None);
    }

    #[test]
    fn patching_offset_and_epoch_keeps_the_crc_valid() {
        let mut raw = build_test_batch(1, 0, 0, 3, 4).to_vec();
        set_base_offset(&mut raw, 1234);
        set_partition_leader_epoch(&mut raw, 7);
        let batch = RecordBatch::new(Bytes::from(raw)).expect("valid");
        batch.validate().expect("crc still valid");
        assert_eq!(batch.base_offset(), 1234);
        assert_eq!(batch.partition_leader_epoch(), 7);
    }

    #[test]
    fn a_flipped_payload_bit_fails_the_crc() {
        let mut raw = build_test_batch(1, 0, 0, 3, 4).to_vec();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        let batch = RecordBatch::new(Bytes::from(raw)).expect("framing is fine");
        assert!(matches!(
            batch.validate(),
            Err(BatchError::CrcMismatch { .. })
        ));
    }

    #[test]
    fn old_magic_is_rejected() {
        let mut raw = build_test_batch(1, 0, 0, 1, 1).to_vec();
        raw[MAGIC_OFFSET] = 1;
        assert_eq!(
            RecordBatch::new(Bytes::from(raw)),
            Err(BatchError::UnsupportedMagic(1))
        );
    }

    #[test]
    fn iterates_several_batches_and_reports_a_truncated_tail() {
        let a = build_test_batch(1, 0, 0, 2, 3);
        let b = build_test_batch(1, 0, 2, 4, 3);
        let mut blob = [a.clone(), b.clone()].concat();
        let batches: Vec<_> = Batches::new(Bytes::from(blob.clone()))
            .collect::<Result<_, _>>()
            .expect("whole");
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[1].base_sequence(), 2);
        blob.truncate(blob.len() - 1);
        let results: Vec<_> = Batches::new(Bytes::from(blob)).collect();
        assert!(results[0].is_ok());
        assert!(matches!(results[1], Err(BatchError::Truncated { .. })));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..200)) {
            for batch in Batches::new(Bytes::from(raw)).flatten() {
                let _ = batch.validate();
                let _ = (batch.compression(), batch.last_sequence(), batch.max_timestamp());
            }
        }
    }
}
