//! Block arithmetic: pure decisions about which aligned blocks a read needs.
//!
//! Reads of an object go through blocks of a fixed size aligned to the object's start (the
//! last block ends with the object). A block is the unit every tier holds and the unit a GET
//! fetches, so any number of reads of one block — by one consumer walking through it, by many
//! consumers of the same data, by consumers of different partitions sharing a produce object —
//! cost one GET.

use crate::ids::ObjectKey;
use bytes::{Bytes, BytesMut};
use std::ops::Range;

/// One block of one object: the `index`th run of `unit` bytes (a block size, or
/// `WHOLE_OBJECT`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockId {
    pub key: ObjectKey,
    pub unit: u64,
    pub index: u64,
}

/// The unit of an object read whole: one block from its first byte to its last.
pub const WHOLE_OBJECT: u64 = 1 << 62;

/// A block's bytes and the size of the object it belongs to (which says whether a block
/// follows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub bytes: Bytes,
    pub object_size: u64,
}

/// The byte range block `index` covers, before clamping to the object's end.
pub fn block_range(index: u64, block_bytes: u64) -> Range<u64> {
    let start = index.saturating_mul(block_bytes);
    start..start.saturating_add(block_bytes)
}

/// The indexes of the blocks holding bytes `range` (empty for an empty range).
pub fn blocks_covering(range: &Range<u64>, block_bytes: u64) -> Range<u64> {
    if range.end <= range.start {
        return 0..0;
    }
    range.start / block_bytes..(range.end - 1) / block_bytes + 1
}

/// The block a sequential reader will want next, worth fetching ahead of it: the read ended in
/// the second half of its last block and the object goes on past that block.
pub fn read_ahead(range: &Range<u64>, block_bytes: u64, object_size: u64) -> Option<u64> {
    let last = blocks_covering(range, block_bytes).last()?;
    let into_block = range.end - last * block_bytes;
    let next = last + 1;
    (into_block * 2 > block_bytes && block_range(next, block_bytes).start < object_size)
        .then_some(next)
}

/// A read this many times smaller than its block gets a copy of its own: whoever keeps it (a
/// fetch response sends its batches as slices of what it read) should not keep the whole block
/// after the memory tier has let it go.
const SHARED_BLOCK_SHARE_MIN: usize = 8;

/// Bytes `range` out of consecutive blocks starting at block `first`; `None` if the blocks do
/// not hold the whole range (the object is shorter than the read).
pub fn slice_blocks(
    blocks: &[Block],
    first: u64,
    range: &Range<u64>,
    block_bytes: u64,
) -> Option<Bytes> {
    let start_of = |i: usize| (first + i as u64) * block_bytes;
    let held_end = blocks
        .last()
        .map(|b| start_of(blocks.len() - 1) + b.bytes.len() as u64)?;
    if range.start < start_of(0) || range.end > held_end {
        return None;
    }
    let local = |i: usize, at: u64| (at - start_of(i)) as usize;
    if let [only] = blocks {
        // The common case, without a copy: the read lies in one block.
        let read = only.bytes.slice(local(0, range.start)..local(0, range.end));
        if read.len() * SHARED_BLOCK_SHARE_MIN < only.bytes.len() {
            return Some(Bytes::copy_from_slice(&read));
        }
        return Some(read);
    }
    let mut out = BytesMut::with_capacity((range.end - range.start) as usize);
    for (i, block) in blocks.iter().enumerate() {
        let block_start = start_of(i);
        let from = range.start.max(block_start);
        let to = range.end.min(block_start + block.bytes.len() as u64);
        if from < to {
            out.extend_from_slice(&block.bytes[local(i, from)..local(i, to)]);
        }
    }
    Some(out.freeze())
}

/// An uploaded object cut into its blocks (slices of the one buffer, no copy).
pub fn split_into_blocks(object: &Bytes, block_bytes: u64) -> impl Iterator<Item = (u64, Block)> {
    let size = object.len() as u64;
    let count = size.div_ceil(block_bytes);
    (0..count).map(move |index| {
        let range = block_range(index, block_bytes);
        let end = range.end.min(size);
        (
            index,
            Block {
                bytes: object.slice(range.start as usize..end as usize),
                object_size: size,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn covering_and_read_ahead() {
        assert_eq!(blocks_covering(&(0..1), 4), 0..1);
        assert_eq!(blocks_covering(&(3..5), 4), 0..2);
        assert_eq!(blocks_covering(&(4..8), 4), 1..2);
        assert_eq!(blocks_covering(&(5..5), 4), 0..0);
        // Ended in the first half of block 0: no read-ahead; in the second half: block 1.
        assert_eq!(read_ahead(&(0..2), 4, 100), None);
        assert_eq!(read_ahead(&(0..3), 4, 100), Some(1));
        // The object ends with block 0.
        assert_eq!(read_ahead(&(0..3), 4, 4), None);
        assert_eq!(read_ahead(&(0..3), 4, 5), Some(1));
    }

    #[test]
    fn a_small_read_does_not_hold_its_block() {
        let object = Bytes::from(vec![5u8; 800]);
        let blocks: Vec<_> = split_into_blocks(&object, 1000).map(|(_, b)| b).collect();
        let inside = |b: &Bytes| object.as_ptr_range().contains(&b.as_ptr());
        // Eighty bytes of 800: a copy. A quarter: a slice of the block.
        let small = slice_blocks(&blocks, 0, &(10..90), 1000).unwrap();
        assert_eq!(small, object.slice(10..90));
        assert!(!inside(&small));
        let large = slice_blocks(&blocks, 0, &(0..200), 1000).unwrap();
        assert!(inside(&large));
    }

    proptest! {
        /// Any range of an object, cut from its blocks, is the range of the object.
        #[test]
        fn slices_match_the_object(
            size in 1u64..200,
            block in 1u64..40,
            a in 0u64..200,
            b in 0u64..200,
        ) {
            let object = Bytes::from((0..size).map(|i| i as u8).collect::<Vec<_>>());
            let blocks: Vec<_> = split_into_blocks(&object, block).map(|(_, b)| b).collect();
            prop_assert_eq!(blocks.iter().map(|b| b.bytes.len() as u64).sum::<u64>(), size);
            let (start, end) = (a.min(b), a.max(b));
            let range = start..end;
            let needed = blocks_covering(&range, block);
            let held: Vec<_> = needed
                .clone()
                .filter_map(|i| blocks.get(i as usize).cloned())
                .collect();
            let got = slice_blocks(&held, needed.start, &range, block);
            if range.is_empty() {
                return Ok(());
            }
            if end <= size {
                prop_assert_eq!(got, Some(object.slice(start as usize..end as usize)));
            } else {
                prop_assert_eq!(got, None);
            }
        }
    }
}
