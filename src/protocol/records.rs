//! The records inside a batch, walked as Kafka's `DefaultRecordBatch` iterator walks them:
//! exactly as many records as the header counts, filling the batch to its last byte. The
//! broker stores batches byte for byte; it reads each record's framing, timestamp and whether
//! it has a key to check a client's batch as Kafka's `LogValidator` does and to find a record
//! by time (`walk`), and whole records (`decode`, `Record::encode`) where the cleaner rewrites
//! a batch of a compacted topic. A compressed batch is decompressed first.
//!
//! ```text
//! record: length varint, attributes int8, timestamp delta varlong, offset delta varint,
//!         key (varint length, -1 null), value (likewise), header count varint, headers
//! ```

use super::compression::{DecompressError, decompress};
use super::record_batch::{Compression, HEADER_BYTES, RecordBatch};
use super::wire;
use bytes::{Buf, Bytes};

/// One record's place and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordMeta {
    pub index: i32,
    pub offset_delta: i32,
    pub timestamp: i64,
    /// A null key (a compacted topic refuses such records).
    pub key_is_null: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordsError {
    #[error("records are compressed; only an uncompressed batch can be walked")]
    Compressed,
    #[error("Incorrect declared batch size, premature EOF reached (record {index} of {count})")]
    PrematureEof { index: i32, count: i32 },
    #[error(
        "Incorrect declared batch size, records still remaining in file ({0} bytes after the last record)"
    )]
    RecordsRemaining(usize),
    #[error("Found invalid record structure in record {index}: {reason}")]
    InvalidRecord { index: i32, reason: String },
    #[error("the batch's records cannot be decompressed")]
    Decompress(#[from] DecompressError),
}

/// Visits every record of an uncompressed batch, in order; stops at the first framing error.
/// Allocates nothing.
pub fn walk(batch: &RecordBatch, visit: impl FnMut(RecordMeta)) -> Result<(), RecordsError> {
    if batch.compression() != Compression::None {
        return Err(RecordsError::Compressed);
    }
    walk_records(batch, batch.as_bytes().slice(HEADER_BYTES..), visit)
}

/// Visits every record of any batch, decompressing its records (at most `limit` bytes) first
/// when the batch is compressed.
pub fn walk_decompressed(
    batch: &RecordBatch,
    limit: usize,
    visit: impl FnMut(RecordMeta),
) -> Result<(), RecordsError> {
    let payload = batch.as_bytes().slice(HEADER_BYTES..);
    let records = match batch.compression() {
        Compression::None => payload,
        codec => Bytes::from(decompress(codec, &payload, limit)?),
    };
    walk_records(batch, records, visit)
}

fn walk_records(
    batch: &RecordBatch,
    rest: Bytes,
    mut visit: impl FnMut(RecordMeta),
) -> Result<(), RecordsError> {
    read_records(batch, rest, |record| {
        visit(RecordMeta {
            index: record.index,
            offset_delta: record.offset_delta,
            timestamp: record.timestamp,
            key_is_null: record.key.is_none(),
        })
    })
}

/// One record of a batch, whole: what the cleaner reads to decide whether it survives, and
/// writes back (`encode`) when it rewrites the batch. Its parts are slices of the batch's
/// bytes, not copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub index: i32,
    pub attributes: i8,
    /// Absolute: the batch's base timestamp plus the record's delta.
    pub timestamp: i64,
    pub offset_delta: i32,
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    /// The header count and the headers, as they were on the wire.
    pub headers: Bytes,
}

impl Record {
    /// Writes the record as it is framed inside a batch whose base timestamp is
    /// `base_timestamp` (its timestamp becomes a delta against it again).
    pub fn encode(&self, base_timestamp: i64, out: &mut bytes::BytesMut) {
        use bytes::BufMut;
        let mut body = bytes::BytesMut::with_capacity(
            32 + self.key.as_ref().map_or(0, Bytes::len)
                + self.value.as_ref().map_or(0, Bytes::len)
                + self.headers.len(),
        );
        body.put_i8(self.attributes);
        wire::write_varlong(&mut body, self.timestamp.wrapping_sub(base_timestamp));
        wire::write_varint(&mut body, self.offset_delta);
        for part in [&self.key, &self.value] {
            match part {
                Some(bytes) => {
                    wire::write_varint(&mut body, bytes.len() as i32);
                    body.put_slice(bytes);
                }
                None => wire::write_varint(&mut body, -1),
            }
        }
        body.put_slice(&self.headers);
        wire::write_varint(out, body.len() as i32);
        out.put_slice(&body);
    }
}

/// Every record of any batch, whole, in order (decompressed first, at most `limit` bytes).
pub fn decode(batch: &RecordBatch, limit: usize) -> Result<Vec<Record>, RecordsError> {
    let payload = batch.as_bytes().slice(HEADER_BYTES..);
    let records = match batch.compression() {
        Compression::None => payload,
        codec => Bytes::from(decompress(codec, &payload, limit)?),
    };
    let mut all = Vec::with_capacity(batch.record_count().clamp(0, 1 << 16) as usize);
    read_records(batch, records, |record| all.push(record))?;
    Ok(all)
}

fn read_records(
    batch: &RecordBatch,
    mut rest: Bytes,
    mut visit: impl FnMut(Record),
) -> Result<(), RecordsError> {
    let count = batch.record_count().max(0);
    for index in 0..count {
        if rest.is_empty() {
            return Err(RecordsError::PrematureEof { index, count });
        }
        let invalid = |reason: String| RecordsError::InvalidRecord { index, reason };
        let length = wire::read_varint(&mut rest).map_err(|e| invalid(e.to_string()))?;
        let length = usize::try_from(length)
            .ok()
            .filter(|&l| l <= rest.len())
            .ok_or_else(|| invalid(format!("length {length} with {} bytes left", rest.len())))?;
        let mut record = rest.split_to(length);
        let parts = (|| {
            let attributes = wire::read_i8(&mut record)?;
            let timestamp_delta = wire::read_varlong(&mut record)?;
            let offset_delta = wire::read_varint(&mut record)?;
            let key = varint_bytes(&mut record)?;
            let value = varint_bytes(&mut record)?;
            let headers_start = record.clone();
            let headers = wire::read_varint(&mut record)?;
            for _ in 0..headers.max(0) {
                // A header's key may not be null (Kafka: "Invalid negative header key size");
                // its value may.
                let key = wire::read_varint(&mut record)?;
                if key < 0 {
                    return Err(wire::WireError::NegativeLength(i64::from(key)));
                }
                skip(&mut record, key as usize)?;
                skip_varint_bytes(&mut record)?;
            }
            let header_bytes = headers_start.slice(..headers_start.len() - record.len());
            Ok::<_, wire::WireError>((
                attributes,
                timestamp_delta,
                offset_delta,
                key,
                value,
                headers,
                header_bytes,
            ))
        })();
        let (attributes, timestamp_delta, offset_delta, key, value, headers, header_bytes) =
            parts.map_err(|e| invalid(e.to_string()))?;
        if headers < 0 {
            return Err(invalid(format!("negative header count {headers}")));
        }
        if record.has_remaining() {
            return Err(invalid(format!(
                "{} bytes left inside the record",
                record.remaining()
            )));
        }
        visit(Record {
            index,
            attributes,
            timestamp: batch.base_timestamp().saturating_add(timestamp_delta),
            offset_delta,
            key,
            value,
            headers: header_bytes,
        });
    }
    if !rest.is_empty() {
        return Err(RecordsError::RecordsRemaining(rest.len()));
    }
    Ok(())
}

/// A varint-length byte field: `None` when it is null (length -1).
fn varint_bytes(buf: &mut Bytes) -> Result<Option<Bytes>, wire::WireError> {
    let length = wire::read_varint(buf)?;
    if length < -1 {
        return Err(wire::WireError::NegativeLength(i64::from(length)));
    }
    if length == -1 {
        return Ok(None);
    }
    let length = length as usize;
    if length > buf.remaining() {
        return Err(wire::WireError::LengthTooLarge {
            length: length as u64,
            remaining: buf.remaining(),
        });
    }
    Ok(Some(buf.split_to(length)))
}

/// Skips a varint-length byte field; true when it is null (length -1).
fn skip_varint_bytes(buf: &mut bytes::Bytes) -> Result<bool, wire::WireError> {
    let length = wire::read_varint(buf)?;
    if length < -1 {
        return Err(wire::WireError::NegativeLength(i64::from(length)));
    }
    skip(buf, length.max(0) as usize)?;
    Ok(length == -1)
}

fn skip(buf: &mut bytes::Bytes, length: usize) -> Result<(), wire::WireError> {
    if length > buf.remaining() {
        return Err(wire::WireError::LengthTooLarge {
            length: length as u64,
            remaining: buf.remaining(),
        });
    }
    buf.advance(length);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::{BatchSpec, build_batch};

    fn spec(count: i32) -> BatchSpec {
        BatchSpec {
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: count,
            value_bytes: 10,
            base_timestamp_ms: 1_000,
        }
    }

    #[test]
    fn every_record_is_found_with_its_timestamp() {
        let batch = RecordBatch::new(build_batch(spec(5))).unwrap();
        let mut records = Vec::new();
        walk(&batch, |r| records.push(r)).unwrap();
        assert_eq!(records.len(), 5);
        assert_eq!(
            records[4],
            RecordMeta {
                index: 4,
                offset_delta: 4,
                timestamp: 1_004,
                key_is_null: true,
            }
        );
    }

    #[test]
    fn a_count_that_does_not_match_the_records_is_refused() {
        let bytes = build_batch(spec(5));
        // Claim 6 records, then 4: the bytes hold 5.
        for (claimed, expected) in [(6, "premature EOF"), (4, "still remaining")] {
            let mut raw = bytes.to_vec();
            raw[57..61].copy_from_slice(&i32::to_be_bytes(claimed));
            let batch = RecordBatch::new(raw.into()).unwrap();
            let error = walk(&batch, |_| {}).unwrap_err().to_string();
            assert!(error.contains(expected), "{claimed}: {error}");
        }
    }

    #[test]
    fn no_byte_string_makes_it_panic() {
        use proptest::prelude::*;
        proptest!(|(records in proptest::collection::vec(any::<u8>(), 0..200), count in -2i32..50)| {
            let mut raw = build_batch(spec(1)).to_vec();
            raw.truncate(HEADER_BYTES);
            raw.extend(&records);
            let length = (raw.len() - 12) as i32;
            raw[8..12].copy_from_slice(&length.to_be_bytes());
            raw[57..61].copy_from_slice(&count.to_be_bytes());
            let batch = RecordBatch::new(raw.into()).unwrap();
            let _ = walk(&batch, |_| {});
        });
    }
}
