//! Reads planned byte ranges from the object store and prepares them for a client.
//!
//! Objects hold batches byte for byte as producers sent them, with whatever base offset the
//! producer wrote. The reader assigns each batch its committed base offset (walking the run
//! from its first offset) and the leader epoch, both outside the CRC, so nothing is
//! decompressed or re-checksummed. Only a batch's first bytes, where those two fields are,
//! are copied to be patched; a long batch's rest goes out as the slice the tiers hold.

use crate::ids::{ObjectKey, Offset};
use crate::metadata::state::markers::Marker;
use crate::object::key::is_segment;
use crate::object::segment::batch_base;
use crate::protocol::record_batch::{
    Batches, REWRITTEN_HEADER_BYTES, build_control_batch, set_base_offset,
    set_partition_leader_epoch,
};
use crate::protocol::spliced::{Records, SPLICE_MIN};
use crate::read_cache::ReadCache;
use crate::store::ObjectStoreError;
use bytes::{Bytes, BytesMut};

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading from the object store failed")]
    Store(#[from] ObjectStoreError),
    #[error("object {key} holds a malformed batch at byte {at}")]
    Corrupt {
        key: ObjectKey,
        at: u64,
        #[source]
        cause: crate::protocol::record_batch::BatchError,
    },
    #[error("segment {key} has a malformed footer")]
    CorruptSegment {
        key: ObjectKey,
        #[source]
        cause: crate::object::segment::SegmentError,
    },
}

/// A byte range of one object holding consecutive batches of one partition, ready to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub base_offset: Offset,
    /// One past the last offset of the run.
    pub end_offset: Offset,
    pub object_key: ObjectKey,
    pub byte_start: u64,
    pub byte_len: u64,
    pub max_timestamp: i64,
    /// A transaction marker's run: its bytes are built, not read (see `state::markers`).
    pub marker: Option<Marker>,
}

impl Run {
    /// The bytes a read of the run returns (a marker's control batch, or the byte range), as
    /// `markers::read_bytes` counts an index entry's.
    pub fn read_bytes(&self) -> u64 {
        match self.marker {
            Some(_) => crate::metadata::state::markers::MARKER_BATCH_BYTES,
            None => self.byte_len,
        }
    }
}

/// Patched batches for a client, how many records they hold, and the offset after the last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBatches {
    pub bytes: Records,
    pub records: u64,
    pub end_offset: Offset,
    /// Each batch returned, in order (share groups acquire and return whole batches).
    pub batches: Vec<ReadBatch>,
}

/// One batch of a read: its offsets, where it lies in the returned bytes, what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBatch {
    pub first: i64,
    pub last: i64,
    pub bytes: std::ops::Range<usize>,
    pub control: bool,
    pub transactional: bool,
    pub producer_id: i64,
}

/// Reads runs and returns the batches holding offsets ≥ `fetch_offset` and starting below
/// `stable` (the last stable offset, for read_committed; else the high watermark), patched,
/// up to `max_bytes` (always at least one batch).
pub async fn read_batches(
    read_cache: &ReadCache,
    runs: &[Run],
    fetch_offset: Offset,
    stable: Offset,
    max_bytes: usize,
    leader_epoch: i32,
) -> Result<ReadBatches, ReadError> {
    let mut out = Patched::default();
    let mut records = 0u64;
    let mut end_offset = fetch_offset;
    let mut batches = Vec::new();
    'runs: for run in runs {
        if run.base_offset >= stable {
            break;
        }
        let raw = read_run(read_cache, run).await?;
        let in_segment = run.marker.is_none() && is_segment(run.object_key.as_str());
        let mut base = run.base_offset;
        let mut at = run.byte_start;
        for batch in Batches::new(raw) {
            let batch = batch.map_err(|e| ReadError::Corrupt {
                key: run.object_key.clone(),
                at,
                cause: e,
            })?;
            at += batch.size() as u64;
            base = batch_base(in_segment, base, batch.base_offset());
            let next = base + batch.offset_count();
            if base >= stable {
                break 'runs;
            }
            if next > fetch_offset {
                if !out.is_empty() && out.len() + batch.size() > max_bytes {
                    break 'runs;
                }
                end_offset = next;
                let start = out.len();
                out.push(batch.as_bytes(), base.0, leader_epoch);
                batches.push(ReadBatch {
                    first: base.0,
                    last: next.0 - 1,
                    bytes: start..out.len(),
                    control: batch.is_control(),
                    transactional: batch.is_transactional(),
                    producer_id: batch.producer_id(),
                });
                records += batch.record_count().max(0) as u64;
            }
            base = next;
        }
    }
    Ok(ReadBatches {
        bytes: out.finish(),
        records,
        end_offset,
        batches,
    })
}

/// Batches with their base offset and leader epoch set, as parts: short batches and the
/// patched heads of long ones are copied together, the rest of a long batch is shared.
#[derive(Default)]
struct Patched {
    parts: Records,
    copied: BytesMut,
}

impl Patched {
    fn len(&self) -> usize {
        self.parts.len() + self.copied.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&mut self, batch: &Bytes, base_offset: i64, leader_epoch: i32) {
        // What is left after the head must still be long enough to be spliced.
        let head = if batch.len() >= SPLICE_MIN + REWRITTEN_HEADER_BYTES {
            REWRITTEN_HEADER_BYTES
        } else {
            batch.len()
        };
        let start = self.copied.len();
        self.copied.extend_from_slice(&batch[..head]);
        set_base_offset(&mut self.copied[start..], base_offset);
        set_partition_leader_epoch(&mut self.copied[start..], leader_epoch);
        if head < batch.len() {
            self.parts.push(self.copied.split().freeze());
            self.parts.push(batch.slice(head..));
        }
    }

    fn finish(mut self) -> Records {
        self.parts.push(self.copied.split().freeze());
        self.parts
    }
}

/// A run's bytes, through the read tiers; a marker's, built.
pub async fn read_run(read_cache: &ReadCache, run: &Run) -> Result<Bytes, ObjectStoreError> {
    if let Some(marker) = run.marker {
        return Ok(marker_bytes(marker, run.max_timestamp));
    }
    read_cache
        .read(&run.object_key, run.byte_start, run.byte_len)
        .await
}

/// The control batch a marker's entry stands for (coordinator epoch 0: floe's coordinator
/// state is in the quorum and has no epoch of its own).
pub fn marker_bytes(marker: Marker, timestamp_ms: i64) -> Bytes {
    build_control_batch(
        marker.producer_id.0,
        marker.producer_epoch.0,
        marker.commit,
        0,
        timestamp_ms,
    )
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
