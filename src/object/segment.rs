//! Segment format v1: one partition's batches, written by compaction, with an offset and time
//! index in a footer.
//!
//! ```text
//! ┌ batches from byte 0: RecordBatch v2, base offsets set to their committed offsets  ┐
//! │ footer: one 28 B entry per chunk (consecutive whole batches, ≥ the index interval): │
//! │   base_offset i64 | position u64 | len u32 | max_timestamp i64                      │
//! └ trailer 48 B: topic_id [16] | partition i32 | base_offset i64 | end_offset i64 |   │
//!   entry_count u32 | crc32c(entries and trailer before it) u32 | "FLSG"
//! ```
//! All integers are big-endian. The state indexes a segment as one entry (its offsets, the
//! batches' byte length, where the footer lies); an agent reads the footer once, keeps it in
//! its index cache and finds offsets and times through it, reading only the chunks it needs.
//! See docs/object-format.md.

use crate::ids::{Offset, TopicPartition};
use bytes::{BufMut, Bytes, BytesMut};

const MAGIC: &[u8; 4] = b"FLSG";
const ENTRY_BYTES: usize = 28;
pub const TRAILER_BYTES: usize = 48;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    #[error("segment footer is {0} bytes, too small for its trailer")]
    TooSmall(usize),
    #[error("segment magic is wrong")]
    BadMagic,
    #[error("segment footer is inconsistent")]
    BadFooter,
    #[error("segment footer checksum mismatch")]
    FooterChecksum,
}

/// One chunk of a segment: consecutive whole batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub base_offset: Offset,
    /// One past its last offset (the next chunk's base, or the segment's end).
    pub end_offset: Offset,
    pub position: u64,
    pub len: u32,
    pub max_timestamp: i64,
}

/// A segment's decoded footer: its chunks in offset order, contiguous in bytes and offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentIndex {
    pub partition: TopicPartition,
    pub chunks: Vec<Chunk>,
}

impl SegmentIndex {
    /// What it costs to keep in memory.
    pub fn weight(&self) -> u32 {
        (std::mem::size_of::<Self>() + self.chunks.len() * std::mem::size_of::<Chunk>())
            .try_into()
            .unwrap_or(u32::MAX)
    }

    /// The chunks from the one holding `offset`, as many as fit `budget` bytes (always one).
    pub fn chunks_from(&self, offset: Offset, budget: u64) -> &[Chunk] {
        let first = self.chunks.partition_point(|c| c.end_offset <= offset);
        let rest = &self.chunks[first.min(self.chunks.len())..];
        let mut bytes = 0u64;
        let taken = rest
            .iter()
            .take_while(|c| {
                bytes += u64::from(c.len);
                bytes <= budget
            })
            .count();
        &rest[..taken.max(1).min(rest.len())]
    }
}

/// Builds a segment batch by batch.
pub struct SegmentBuilder {
    partition: TopicPartition,
    index_interval: u64,
    data: BytesMut,
    chunks: Vec<Chunk>,
    /// The open chunk (not yet in `chunks`).
    open: Option<Chunk>,
    base_offset: Option<Offset>,
    end_offset: Offset,
}

/// A built segment: its bytes, where its footer starts and how long it is, its newest time.
pub struct BuiltSegment {
    pub bytes: Bytes,
    pub data_len: u64,
    pub footer_len: u32,
    pub max_timestamp: i64,
    pub chunks: usize,
}

impl SegmentBuilder {
    /// `index_interval`: bytes of batches per footer entry (Kafka's `index.interval.bytes`);
    /// `data_bytes`: what the batches will take, reserved at once (one allocation per segment
    /// rather than a doubling series of them).
    pub fn new(partition: TopicPartition, index_interval: u64, data_bytes: u64) -> SegmentBuilder {
        let index_interval = index_interval.max(1);
        // The batches, then at most one footer entry per interval (and one for the last
        // chunk), then the trailer: nothing grows the buffer once reserved.
        let footer = (data_bytes / index_interval + 1).saturating_mul(ENTRY_BYTES as u64);
        let reserve = data_bytes.saturating_add(footer) + TRAILER_BYTES as u64;
        SegmentBuilder {
            partition,
            index_interval,
            data: BytesMut::with_capacity(usize::try_from(reserve.min(1 << 30)).unwrap_or(0)),
            chunks: Vec::new(),
            open: None,
            base_offset: None,
            end_offset: Offset(0),
        }
    }

    pub fn data_len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Appends one batch holding offsets `base_offset..end_offset`, and sets its base offset
    /// field to `base_offset` (outside the batch's CRC).
    pub fn push(&mut self, batch: &[u8], base_offset: Offset, end_offset: Offset, max_ts: i64) {
        self.base_offset.get_or_insert(base_offset);
        self.end_offset = end_offset;
        let position = self.data.len() as u64;
        self.data.extend_from_slice(batch);
        // Every batch has its 61-byte header; a shorter slice is not one and is kept as is.
        if batch.len() >= 8 {
            crate::protocol::record_batch::set_base_offset(
                &mut self.data[position as usize..],
                base_offset.0,
            );
        }
        let chunk = self.open.get_or_insert(Chunk {
            base_offset,
            end_offset,
            position,
            len: 0,
            max_timestamp: i64::MIN,
        });
        chunk.end_offset = end_offset;
        chunk.len = chunk.len.saturating_add(batch.len() as u32);
        chunk.max_timestamp = chunk.max_timestamp.max(max_ts);
        if u64::from(chunk.len) >= self.index_interval
            && let Some(done) = self.open.take()
        {
            self.chunks.push(done);
        }
    }

    /// Declares the offsets the segment covers as `start..end`, wider than its batches when the
    /// cleaner dropped the first or the last of what it replaces: its first chunk starts at
    /// `start` and its last ends at `end` (readers place each batch at the offset its header
    /// carries, `batch_base`).
    pub fn cover(&mut self, start: Offset, end: Offset) {
        self.base_offset = Some(start);
        self.end_offset = end;
        match self.chunks.first_mut() {
            Some(first) => first.base_offset = start,
            None => {
                if let Some(open) = self.open.as_mut() {
                    open.base_offset = start;
                }
            }
        }
    }

    pub fn finish(mut self) -> BuiltSegment {
        if let Some(done) = self.open.take() {
            self.chunks.push(done);
        }
        let data_len = self.data.len() as u64;
        let mut out = self.data;
        let entries_start = out.len();
        for c in &self.chunks {
            out.put_i64(c.base_offset.0);
            out.put_u64(c.position);
            out.put_u32(c.len);
            out.put_i64(c.max_timestamp);
        }
        out.put_slice(self.partition.topic_id.as_bytes());
        out.put_i32(self.partition.partition);
        out.put_i64(self.base_offset.unwrap_or(self.end_offset).0);
        out.put_i64(self.end_offset.0);
        out.put_u32(self.chunks.len() as u32);
        let crc = crc32c::crc32c(&out[entries_start..]);
        out.put_u32(crc);
        out.put_slice(MAGIC);
        let footer_len = (out.len() - entries_start) as u32;
        BuiltSegment {
            max_timestamp: self
                .chunks
                .iter()
                .map(|c| c.max_timestamp)
                .max()
                .unwrap_or(-1),
            chunks: self.chunks.len(),
            bytes: out.freeze(),
            data_len,
            footer_len,
        }
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(raw)
}

/// Where a batch read from a run starts. In a segment its base offset field says so:
/// segments carry committed offsets, and a compacted one has gaps between its batches. In a
/// produce object the field is the client's, and a batch starts where the one before it ended
/// (`follows`). A field behind `follows` (no segment writes one) is not trusted.
pub fn batch_base(in_segment: bool, follows: Offset, field: i64) -> Offset {
    if in_segment && field > follows.0 {
        Offset(field)
    } else {
        follows
    }
}

/// Decodes and checks a segment's footer (the bytes from the footer start to the end), given
/// the length of the batches before it.
pub fn decode_footer(footer: &[u8], data_len: u64) -> Result<SegmentIndex, SegmentError> {
    let n = footer.len();
    if n < TRAILER_BYTES {
        return Err(SegmentError::TooSmall(n));
    }
    if &footer[n - 4..] != MAGIC {
        return Err(SegmentError::BadMagic);
    }
    let t = n - TRAILER_BYTES;
    let mut id = [0u8; 16];
    id.copy_from_slice(&footer[t..t + 16]);
    let partition = TopicPartition {
        topic_id: uuid::Uuid::from_bytes(id),
        partition: u32_at(footer, t + 16) as i32,
    };
    let (base, end) = (i64_at(footer, t + 20), i64_at(footer, t + 28));
    let count = u32_at(footer, t + 36) as usize;
    if count.checked_mul(ENTRY_BYTES) != Some(t) {
        return Err(SegmentError::BadFooter);
    }
    if crc32c::crc32c(&footer[..t + 40]) != u32_at(footer, t + 40) {
        return Err(SegmentError::FooterChecksum);
    }
    let raw: Vec<(i64, u64, u32, i64)> = footer[..t]
        .chunks_exact(ENTRY_BYTES)
        .map(|e| {
            (
                i64_at(e, 0),
                i64_at(e, 8) as u64,
                u32_at(e, 16),
                i64_at(e, 20),
            )
        })
        .collect();
    let mut chunks = Vec::with_capacity(raw.len());
    let (mut position, mut offset) = (0u64, base);
    for (i, &(chunk_base, chunk_position, len, max_timestamp)) in raw.iter().enumerate() {
        let chunk_end = raw.get(i + 1).map_or(end, |next| next.0);
        if chunk_base != offset || chunk_position != position || chunk_end <= chunk_base {
            return Err(SegmentError::BadFooter);
        }
        chunks.push(Chunk {
            base_offset: Offset(chunk_base),
            end_offset: Offset(chunk_end),
            position,
            len,
            max_timestamp,
        });
        position += u64::from(len);
        offset = chunk_end;
    }
    if offset != end || position != data_len {
        return Err(SegmentError::BadFooter);
    }
    Ok(SegmentIndex { partition, chunks })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tp() -> TopicPartition {
        TopicPartition {
            topic_id: uuid::Uuid::from_u128(7),
            partition: 3,
        }
    }

    fn build(batches: &[(usize, i64)], interval: u64) -> BuiltSegment {
        let mut b = SegmentBuilder::new(tp(), interval, 0);
        let mut offset = 100;
        for (i, &(len, count)) in batches.iter().enumerate() {
            b.push(
                &vec![i as u8; len],
                Offset(offset),
                Offset(offset + count),
                i as i64,
            );
            offset += count;
        }
        b.finish()
    }

    #[test]
    fn the_footer_indexes_chunks_of_at_least_the_interval() {
        let built = build(&[(10, 2), (10, 3), (10, 1), (5, 1)], 20);
        assert_eq!(built.data_len, 35);
        let footer = &built.bytes[built.data_len as usize..];
        assert_eq!(footer.len(), built.footer_len as usize);
        let index = decode_footer(footer, built.data_len).unwrap();
        assert_eq!(index.partition, tp());
        let spans: Vec<_> = index
            .chunks
            .iter()
            .map(|c| {
                (
                    c.base_offset.0,
                    c.end_offset.0,
                    c.position,
                    c.len,
                    c.max_timestamp,
                )
            })
            .collect();
        assert_eq!(spans, vec![(100, 105, 0, 20, 1), (105, 107, 20, 15, 3)]);
        assert_eq!(built.max_timestamp, 3);
        // From an offset inside the second chunk; a budget below one chunk still gets one.
        assert_eq!(index.chunks_from(Offset(106), 1).len(), 1);
        assert_eq!(
            index.chunks_from(Offset(106), 1)[0].base_offset,
            Offset(105)
        );
        assert_eq!(index.chunks_from(Offset(100), 35).len(), 2);
        assert_eq!(index.chunks_from(Offset(100), 34).len(), 1);
    }

    #[test]
    fn a_changed_byte_or_length_is_refused() {
        let built = build(&[(10, 2), (10, 3)], 5);
        let footer = built.bytes[built.data_len as usize..].to_vec();
        assert!(decode_footer(&footer, built.data_len + 1).is_err());
        for at in 0..footer.len() {
            let mut bad = footer.clone();
            bad[at] ^= 0x40;
            assert!(decode_footer(&bad, built.data_len).is_err(), "byte {at}");
        }
    }

    proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300), len in 0u64..1000) {
            let _ = decode_footer(&bytes, len);
        }

        #[test]
        fn every_offset_is_found_in_the_chunk_that_holds_it(
            batches in proptest::collection::vec((1usize..50, 1i64..5), 1..40),
            interval in 1u64..200,
        ) {
            let built = build(&batches, interval);
            let index = decode_footer(&built.bytes[built.data_len as usize..], built.data_len).unwrap();
            let end = 100 + batches.iter().map(|b| b.1).sum::<i64>();
            for offset in 100..end {
                let c = index.chunks_from(Offset(offset), 0)[0];
                prop_assert!(c.base_offset.0 <= offset && offset < c.end_offset.0);
            }
        }
    }
}
