//! From index entries to the byte ranges a read fetches.
//!
//! An index entry in a produce object is one run, read whole. An entry that is a segment (one
//! partition's batches, written by compaction) can be far larger than a fetch: its footer
//! says where each chunk of batches lies, so a read takes only the chunks from the offset it
//! wants while its budget lasts. Footers are read once and kept in the agent's index cache
//! (byte-bounded), so a segment costs one small GET before its first read and none after.

use super::reader::{ReadError, Run};
use crate::ids::{ObjectKey, Offset};
use crate::metadata::state::markers::Marker;
use crate::metadata::state::{BatchRef, FooterAt, Objects};
use crate::object::segment::{Chunk, SegmentIndex, decode_footer};
use crate::read_cache::ReadCache;
use std::sync::Arc;

/// An index entry with what reading it takes, copied out of the state under its read lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub entry: BatchRef,
    pub key: ObjectKey,
    /// Set for a segment.
    pub footer: Option<FooterAt>,
    /// Set for a transaction marker, whose bytes the reader builds (no object holds them).
    pub marker: Option<Marker>,
}

/// What a marker's entry shows as its object key, in messages only: no object has it.
const MARKER_KEY: &str = "(transaction marker)";

/// The entry's object in the state; `None` only if the state is inconsistent (an entry whose
/// object is not live), which a read answers as a storage error.
pub fn locate(objects: &Objects, entry: &BatchRef) -> Option<Located> {
    if let Some(marker) = Marker::of(entry) {
        return Some(Located {
            entry: entry.clone(),
            key: ObjectKey::new(MARKER_KEY),
            footer: None,
            marker: Some(marker),
        });
    }
    let object = objects.get(entry.object)?;
    Some(Located {
        entry: entry.clone(),
        key: object.key.clone(),
        footer: object.footer,
        marker: None,
    })
}

impl Located {
    /// The entry as one run (a produce object's run; a segment's whole batches).
    pub fn whole(&self) -> Run {
        Run {
            base_offset: self.entry.base_offset,
            end_offset: self.entry.end_offset,
            object_key: self.key.clone(),
            byte_start: self.entry.byte_start,
            byte_len: self.entry.byte_len,
            max_timestamp: self.entry.max_timestamp,
            marker: self.marker,
        }
    }

    fn corrupt(&self) -> ReadError {
        ReadError::CorruptSegment {
            key: self.key.clone(),
            cause: crate::object::segment::SegmentError::BadFooter,
        }
    }

    /// Consecutive chunks of a segment as one run.
    fn chunks(&self, chunks: &[Chunk]) -> Option<Run> {
        let (first, last) = (chunks.first()?, chunks.last()?);
        Some(Run {
            base_offset: first.base_offset,
            end_offset: last.end_offset,
            object_key: self.key.clone(),
            byte_start: self.entry.byte_start + first.position,
            byte_len: last.position + u64::from(last.len) - first.position,
            max_timestamp: chunks.iter().map(|c| c.max_timestamp).max().unwrap_or(-1),
            marker: None,
        })
    }
}

/// Segment footers this agent has read, by object key; bounded by bytes (0 keeps none).
pub struct SegmentIndexCache {
    indexes: Option<moka::sync::Cache<ObjectKey, Arc<SegmentIndex>>>,
}

impl SegmentIndexCache {
    pub fn new(bytes_max: u64) -> SegmentIndexCache {
        let indexes = (bytes_max > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(bytes_max)
                .weigher(|_key: &ObjectKey, index: &Arc<SegmentIndex>| index.weight())
                .build()
        });
        SegmentIndexCache { indexes }
    }

    /// Entries and bytes held (for metrics).
    pub fn usage(&self) -> (u64, u64) {
        self.indexes.as_ref().map_or((0, 0), |c| {
            c.run_pending_tasks();
            (c.entry_count(), c.weighted_size())
        })
    }

    /// The segment's footer, from the cache or else read and decoded.
    pub async fn get(
        &self,
        read_cache: &ReadCache,
        segment: &Located,
        footer: FooterAt,
    ) -> Result<Arc<SegmentIndex>, ReadError> {
        if let Some(index) = self.indexes.as_ref().and_then(|c| c.get(&segment.key)) {
            return Ok(index);
        }
        let raw = read_cache
            .read(&segment.key, footer.start, u64::from(footer.len))
            .await?;
        let index = decode_footer(&raw, segment.entry.byte_len).map_err(|cause| {
            ReadError::CorruptSegment {
                key: segment.key.clone(),
                cause,
            }
        })?;
        // The footer must describe the entry: the same offsets, from the first to the last.
        let first = index.chunks.first().map(|c| c.base_offset);
        let last = index.chunks.last().map(|c| c.end_offset);
        if first != Some(segment.entry.base_offset) || last != Some(segment.entry.end_offset) {
            return Err(segment.corrupt());
        }
        let index = Arc::new(index);
        if let Some(c) = &self.indexes {
            c.insert(segment.key.clone(), index.clone());
        }
        Ok(index)
    }
}

/// The runs a fetch at `offset` reads from `entries` (in offset order) within `budget` bytes:
/// whole runs of produce objects, and of a segment the chunks from the one holding the offset.
/// The first entry always yields something (Kafka's "at least one batch").
pub async fn runs_for_fetch(
    indexes: &SegmentIndexCache,
    read_cache: &ReadCache,
    entries: &[Located],
    offset: Offset,
    budget: u64,
) -> Result<Vec<Run>, ReadError> {
    let mut runs = Vec::with_capacity(entries.len());
    let mut left = budget;
    for located in entries {
        let run = match located.footer {
            None => located.whole(),
            Some(footer) => {
                let index = indexes.get(read_cache, located, footer).await?;
                let from = offset.max(located.entry.base_offset);
                located
                    .chunks(index.chunks_from(from, left))
                    .ok_or_else(|| located.corrupt())?
            }
        };
        let bytes = run.read_bytes();
        if !runs.is_empty() && bytes > left {
            break;
        }
        left = left.saturating_sub(bytes);
        runs.push(run);
        if left == 0 {
            break;
        }
    }
    Ok(runs)
}

/// The runs of `entry` whose largest time reaches `target`, in offset order: the entry itself,
/// or a segment's chunks that reach it.
pub async fn runs_reaching(
    indexes: &SegmentIndexCache,
    read_cache: &ReadCache,
    located: &Located,
    target: i64,
) -> Result<Vec<Run>, ReadError> {
    let Some(footer) = located.footer else {
        return Ok(vec![located.whole()]);
    };
    let index = indexes.get(read_cache, located, footer).await?;
    Ok(index
        .chunks
        .iter()
        .filter(|c| c.max_timestamp >= target)
        .filter_map(|c| located.chunks(std::slice::from_ref(c)))
        .collect())
}
