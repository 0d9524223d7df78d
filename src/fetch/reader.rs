//! Reads planned byte ranges from the object store and prepares them for a client.
//!
//! Objects hold batches byte for byte as producers sent them, with whatever base offset the
//! producer wrote. The reader assigns each batch its committed base offset (walking the run
//! from its first offset) and the leader epoch, both outside the CRC, so nothing is
//! decompressed or re-checksummed.

use crate::ids::{ObjectKey, Offset};
use crate::object::ObjectStoreError;
use crate::protocol::record_batch::{Batches, set_base_offset, set_partition_leader_epoch};
use crate::tiers::Tiers;
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
}

/// Patched batches for a client, and how many records they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBatches {
    pub bytes: Bytes,
    pub records: u64,
}

/// Reads runs and returns the batches holding offsets ≥ `fetch_offset`, patched, up to
/// `max_bytes` (always at least one batch).
pub async fn read_batches(
    tiers: &Tiers,
    runs: &[Run],
    fetch_offset: Offset,
    max_bytes: usize,
    leader_epoch: i32,
) -> Result<ReadBatches, ReadError> {
    let mut out = BytesMut::new();
    let mut records = 0u64;
    'runs: for run in runs {
        let raw = read_run(tiers, run).await?;
        let mut base = run.base_offset;
        let mut at = run.byte_start;
        for batch in Batches::new(raw) {
            let batch = batch.map_err(|e| ReadError::Corrupt {
                key: run.object_key.clone(),
                at,
                cause: e,
            })?;
            at += batch.size() as u64;
            let next = base + batch.offset_count();
            if next > fetch_offset {
                if !out.is_empty() && out.len() + batch.size() > max_bytes {
                    break 'runs;
                }
                let start = out.len();
                out.extend_from_slice(batch.as_bytes());
                set_base_offset(&mut out[start..], base.0);
                set_partition_leader_epoch(&mut out[start..], leader_epoch);
                records += batch.record_count().max(0) as u64;
            }
            base = next;
        }
    }
    Ok(ReadBatches {
        bytes: out.freeze(),
        records,
    })
}

/// A run's bytes, through the read tiers.
pub async fn read_run(tiers: &Tiers, run: &Run) -> Result<Bytes, ObjectStoreError> {
    tiers
        .read(&run.object_key, run.byte_start, run.byte_len)
        .await
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
