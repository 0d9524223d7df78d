//! Object format v1: many partitions' record batches in one object.
//!
//! ```text
//! ┌ header 16 B: "FLOE" | version u16 = 1 | reserved u16 | created_ms i64 ┐
//! │ chunk: partition A's batches, byte for byte as producers sent them    │
//! │ chunk: partition B's batches ...                                      │
//! │ footer: one 44 B entry per chunk:                                     │
//! │   topic_id [16] | partition i32 | start u64 | len u64 |               │
//! │   batch_count u32 | crc32c(chunk) u32                                 │
//! └ trailer 20 B: footer_start u64 | entry_count u32 | crc32c(footer) u32 | "FLOE"
//! ```
//! All integers are big-endian. The metadata index points straight at byte ranges inside
//! chunks, so reads never need the footer; the footer lets compaction, GC and tools understand
//! an object on its own, and its checksums catch corruption. See docs/object-format.md.

use crate::ids::TopicPartition;
use bytes::{BufMut, Bytes, BytesMut};

const MAGIC: &[u8; 4] = b"FLOE";
pub const FORMAT_VERSION: u16 = 1;
pub const HEADER_BYTES: usize = 16;
const ENTRY_BYTES: usize = 44;
const TRAILER_BYTES: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    #[error("object is {0} bytes, too small for a header and trailer")]
    TooSmall(usize),
    #[error("object magic is wrong")]
    BadMagic,
    #[error("object format version {0} is not supported")]
    UnsupportedVersion(u16),
    #[error("object footer is out of bounds or inconsistent")]
    BadFooter,
    #[error("object footer checksum mismatch")]
    FooterChecksum,
    #[error("chunk {index} checksum mismatch")]
    ChunkChecksum { index: usize },
}

/// One partition's chunk as the footer lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkEntry {
    pub partition: TopicPartition,
    pub start: u64,
    pub len: u64,
    pub batch_count: u32,
    pub crc: u32,
}

/// Where each batch landed in an encoded object, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkLayout {
    pub partition: TopicPartition,
    /// `(byte_start, byte_len)` of every batch.
    pub batches: Vec<(u64, u64)>,
}

/// Encodes chunks into one object. Each chunk's batches are written in the order given.
pub fn encode_object(
    created_ms: i64,
    chunks: &[(TopicPartition, Vec<Bytes>)],
) -> (Bytes, Vec<ChunkLayout>) {
    let body: usize = chunks
        .iter()
        .flat_map(|(_, b)| b.iter())
        .map(Bytes::len)
        .sum();
    let mut out =
        BytesMut::with_capacity(HEADER_BYTES + body + chunks.len() * ENTRY_BYTES + TRAILER_BYTES);
    out.put_slice(MAGIC);
    out.put_u16(FORMAT_VERSION);
    out.put_u16(0);
    out.put_i64(created_ms);
    let mut entries = Vec::with_capacity(chunks.len());
    let mut layouts = Vec::with_capacity(chunks.len());
    for (partition, batches) in chunks {
        let start = out.len();
        let mut positions = Vec::with_capacity(batches.len());
        for batch in batches {
            positions.push((out.len() as u64, batch.len() as u64));
            out.put_slice(batch);
        }
        entries.push(ChunkEntry {
            partition: *partition,
            start: start as u64,
            len: (out.len() - start) as u64,
            batch_count: batches.len() as u32,
            crc: crc32c::crc32c(&out[start..]),
        });
        layouts.push(ChunkLayout {
            partition: *partition,
            batches: positions,
        });
    }
    let footer_start = out.len();
    for e in &entries {
        out.put_slice(e.partition.topic_id.as_bytes());
        out.put_i32(e.partition.partition);
        out.put_u64(e.start);
        out.put_u64(e.len);
        out.put_u32(e.batch_count);
        out.put_u32(e.crc);
    }
    let footer_crc = crc32c::crc32c(&out[footer_start..]);
    out.put_u64(footer_start as u64);
    out.put_u32(entries.len() as u32);
    out.put_u32(footer_crc);
    out.put_slice(MAGIC);
    (out.freeze(), layouts)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(raw)
}

/// Reads and checks an object's header and footer (not the chunks' contents).
pub fn decode_footer(object: &[u8]) -> Result<Vec<ChunkEntry>, ObjectError> {
    let n = object.len();
    if n < HEADER_BYTES + TRAILER_BYTES {
        return Err(ObjectError::TooSmall(n));
    }
    if &object[..4] != MAGIC || &object[n - 4..] != MAGIC {
        return Err(ObjectError::BadMagic);
    }
    let version = u16::from_be_bytes([object[4], object[5]]);
    if version != FORMAT_VERSION {
        return Err(ObjectError::UnsupportedVersion(version));
    }
    let trailer = n - TRAILER_BYTES;
    let footer_start =
        usize::try_from(u64_at(object, trailer)).map_err(|_| ObjectError::BadFooter)?;
    let count = u32_at(object, trailer + 8) as usize;
    let footer_len = count
        .checked_mul(ENTRY_BYTES)
        .ok_or(ObjectError::BadFooter)?;
    if footer_start < HEADER_BYTES || footer_start.checked_add(footer_len) != Some(trailer) {
        return Err(ObjectError::BadFooter);
    }
    let footer = &object[footer_start..trailer];
    if crc32c::crc32c(footer) != u32_at(object, trailer + 12) {
        return Err(ObjectError::FooterChecksum);
    }
    let mut entries = Vec::with_capacity(count);
    for raw in footer.chunks_exact(ENTRY_BYTES) {
        let mut id = [0u8; 16];
        id.copy_from_slice(&raw[..16]);
        let entry = ChunkEntry {
            partition: TopicPartition {
                topic_id: uuid::Uuid::from_bytes(id),
                partition: u32_at(raw, 16) as i32,
            },
            start: u64_at(raw, 20),
            len: u64_at(raw, 28),
            batch_count: u32_at(raw, 36),
            crc: u32_at(raw, 40),
        };
        let end = entry
            .start
            .checked_add(entry.len)
            .ok_or(ObjectError::BadFooter)?;
        if entry.start < HEADER_BYTES as u64 || end > footer_start as u64 {
            return Err(ObjectError::BadFooter);
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// Checks every chunk's checksum.
pub fn verify_chunks(object: &[u8], entries: &[ChunkEntry]) -> Result<(), ObjectError> {
    for (index, e) in entries.iter().enumerate() {
        // decode_footer bounded these ranges inside the object.
        let chunk = &object[e.start as usize..(e.start + e.len) as usize];
        if crc32c::crc32c(chunk) != e.crc {
            return Err(ObjectError::ChunkChecksum { index });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::build_test_batch;
    use proptest::prelude::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition {
            topic_id: uuid::Uuid::from_u128(9),
            partition: p,
        }
    }

    #[test]
    fn encodes_and_decodes_chunks_with_batch_positions() {
        let a = build_test_batch(-1, -1, -1, 2, 5);
        let b = build_test_batch(-1, -1, -1, 3, 5);
        let (object, layout) = encode_object(
            123,
            &[
                (tp(0), vec![a.clone(), b.clone()]),
                (tp(4), vec![b.clone()]),
            ],
        );
        let entries = decode_footer(&object).unwrap();
        verify_chunks(&object, &entries).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].partition, tp(4));
        assert_eq!(entries[0].batch_count, 2);
        let (start, len) = layout[0].batches[1];
        assert_eq!(&object[start as usize..(start + len) as usize], &b[..]);
        assert_eq!(layout[0].batches[0].0, HEADER_BYTES as u64);
    }

    #[test]
    fn corruption_is_detected() {
        let (object, _) = encode_object(1, &[(tp(0), vec![build_test_batch(-1, -1, -1, 1, 3)])]);
        let mut bad = object.to_vec();
        bad[HEADER_BYTES + 20] ^= 0xff;
        let entries = decode_footer(&bad).unwrap();
        assert_eq!(
            verify_chunks(&bad, &entries),
            Err(ObjectError::ChunkChecksum { index: 0 })
        );
        let mut bad_footer = object.to_vec();
        let at = bad_footer.len() - 30;
        bad_footer[at] ^= 1;
        assert!(decode_footer(&bad_footer).is_err());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Ok(entries) = decode_footer(&raw) {
                let _ = verify_chunks(&raw, &entries);
            }
        }
    }
}
