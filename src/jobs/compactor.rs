//! Compaction of one partition's runs into a segment: read the runs (from what the round
//! fetched, `sources`), write their batches with their committed base offsets into one
//! segment object with its footer, PUT it, and swap it in through the quorum. The state makes
//! the swap only if the runs are as they were read; a lost swap leaves a segment no one refers
//! to, which the collector deletes.

use super::context::JobContext;
use super::metrics::JobMetrics;
use super::sources::Sources;
use crate::fetch::runs::Located;
use crate::ids::ObjectKey;
use crate::ids::{Offset, TopicPartition};
use crate::metadata::state::markers::read_bytes;
use crate::metadata::state::{BatchRef, FooterAt, NewSegment, ReplaceRuns};
use crate::object::key::{is_segment, new_segment_key};
use crate::object::segment::{BuiltSegment, SegmentBuilder, batch_base};
use crate::protocol::record_batch::Batches;

#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    #[error("an index entry names an object the state does not hold")]
    UnknownObject,
    #[error("reading or writing the object store failed")]
    Store(#[from] crate::store::ObjectStoreError),
    #[error("object {key} does not hold the batches its index entry says (at offset {at})")]
    Mismatch { key: String, at: i64 },
    #[error("the metadata write failed")]
    Metadata(#[from] crate::metadata::store::MetadataError),
}

/// Kafka's `index.interval.bytes` default: bytes of batches per footer entry.
pub const INDEX_INTERVAL_BYTES: u64 = 4096;

/// Compacts `located` (consecutive entries of `tp`, as the state held them), reading their
/// runs from what the round fetched (`sources`); whether the swap was made.
pub async fn compact(
    ctx: &JobContext,
    sources: &Sources,
    tp: TopicPartition,
    located: &[Located],
    index_interval: u64,
) -> Result<bool, CompactionError> {
    let data_bytes = located
        .iter()
        .fold(0u64, |sum, l| sum.saturating_add(read_bytes(&l.entry)));
    let mut builder = SegmentBuilder::new(tp, index_interval, data_bytes);
    for entry in located {
        let raw = sources.read(ctx, entry).await?;
        let mismatch = |at: Offset| CompactionError::Mismatch {
            key: entry.key.to_string(),
            at: at.0,
        };
        let in_segment = entry.marker.is_none() && is_segment(entry.key.as_str());
        let mut base = entry.entry.base_offset;
        for batch in Batches::new(raw) {
            let batch = batch.map_err(|_| mismatch(base))?;
            base = batch_base(in_segment, base, batch.base_offset());
            let end = base + batch.offset_count();
            builder.push(batch.as_bytes(), base, end, batch.max_timestamp());
            base = end;
        }
        if base != entry.entry.end_offset {
            return Err(mismatch(base));
        }
    }
    let built = builder.finish();
    let key = new_segment_key(ctx.clock.now_ms(), &ctx.rng);
    let entries = located.iter().map(|l| l.entry.clone()).collect();
    swap_in(ctx, tp, entries, key, &built).await
}

/// PUTs `built` under `key` and swaps it in for `replaced` through the quorum; whether the
/// state made the swap (it refuses when the entries changed meanwhile).
pub(super) async fn swap_in(
    ctx: &JobContext,
    tp: TopicPartition,
    replaced: Vec<BatchRef>,
    key: ObjectKey,
    built: &BuiltSegment,
) -> Result<bool, CompactionError> {
    ctx.store.put(key.as_str(), built.bytes.clone()).await?;
    let segment = NewSegment {
        key,
        data_len: built.data_len,
        footer: FooterAt {
            start: built.data_len,
            len: built.footer_len,
        },
        max_timestamp: built.max_timestamp,
    };
    let count = replaced.len() as u64;
    let made = ctx
        .metadata
        .write(ReplaceRuns {
            partition: tp,
            replaced,
            segment,
        })
        .await?;
    let m = &ctx.metrics;
    if made {
        JobMetrics::add(&m.segments_written, 1);
        JobMetrics::add(&m.bytes_rewritten, built.data_len);
        JobMetrics::add(&m.entries_replaced, count);
    } else {
        // Never deleted here: the state buried the refused segment (the collector deletes it
        // after the grace period), or never saw it (the orphan sweep does). Deleting it now
        // would be wrong when the refusal is a retried write whose first copy made the swap.
        JobMetrics::add(&m.swaps_lost, 1);
    }
    Ok(made)
}
