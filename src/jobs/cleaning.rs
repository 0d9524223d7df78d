//! The cleaner of a compacted partition, a pass at a time: read the section `plan` chose,
//! build the key map from its dirty part, filter every batch from the log start (`cleaner`),
//! write what is kept into segments of at most the target size, each covering exactly the
//! entries it replaces, and swap each in through the quorum. A swap the state refuses (the
//! entries changed meanwhile) ends the pass; what was swapped before it stays, and the next
//! pass goes on from there. Memory: the key map, one entry's batches, and one output segment.

use super::compactor::{CompactionError, swap_in};
use super::context::JobContext;
use super::plan::{CleanSection, CleanSettings};
use super::sources::Sources;
use crate::cleaner::{AbortedTxn, Cleaned, Filter, Kept, KeyMap, Settings};
use crate::fetch::runs::{Located, locate};
use crate::ids::{Offset, TopicPartition};
use crate::metadata::state::BatchRef;
use crate::metadata::state::markers::read_bytes;
use crate::object::key::{is_segment, new_cleaned_segment_key};
use crate::object::segment::{SegmentBuilder, batch_base};
use crate::protocol::record_batch::{Batches, RecordBatch, set_base_offset};
use std::collections::BTreeMap;

/// The least memory a pass's key map gets (a map is sized to the dirty offsets, up to the
/// configured buffer).
const KEY_MAP_MIN_BYTES: u64 = 64 << 10;

/// Runs one pass over `section` of `tp`; what it did.
pub async fn clean(
    ctx: &JobContext,
    tp: TopicPartition,
    section: CleanSection,
    settings: &CleanSettings,
    segment_bytes: u64,
    index_interval: u64,
) -> Result<Cleaned, CompactionError> {
    let CleanSection {
        entries,
        first_dirty,
        ..
    } = section;
    let Some(end) = entries.last().map(|e| e.end_offset) else {
        return Ok(Cleaned::default());
    };
    let (located, aborted, now_ms) = ctx.metadata.read(|s| {
        let located = entries
            .iter()
            .map(|e| locate(s.objects(), e))
            .collect::<Option<Vec<_>>>();
        let start = entries.first().map_or(end, |e| e.base_offset);
        let aborted: Vec<AbortedTxn> = s
            .transactions()
            .aborted_between(&tp, start, end)
            .into_iter()
            .map(|a| AbortedTxn {
                producer_id: a.producer_id.0,
                first_offset: a.first_offset.0,
                last_offset: a.last_offset.0,
            })
            .collect();
        (located, aborted, s.now_ms())
    });
    let located = located.ok_or(CompactionError::UnknownObject)?;

    // Pass 1: the latest offset of each key in the dirty section. A key takes an offset, so
    // the dirty section's offsets bound its keys: the map is sized to hold that many, up to
    // the memory allowed (Kafka sizes its map to the whole buffer; sized to the section, a
    // pass over a few thousand records takes kilobytes, not the buffer).
    let dirty_offsets =
        entries
            .iter()
            .filter(|e| e.end_offset > first_dirty)
            .fold(0u64, |sum, e| {
                let from = e.base_offset.max(first_dirty);
                sum.saturating_add(u64::try_from(e.end_offset.0 - from.0).unwrap_or(0))
            });
    let most = ctx.config.cleaner_dedupe_buffer_bytes;
    let memory = most.min(KeyMap::memory_for(dirty_offsets).max(KEY_MAP_MIN_BYTES));
    let keys = build_map(ctx, &located, first_dirty, &aborted, memory).await?;
    let first_dirty_end = located
        .iter()
        .map(|l| l.entry.end_offset)
        .find(|end| *end > first_dirty);
    let short = |keys: &KeyMap| {
        first_dirty_end.is_some_and(|end| keys.end_offset().is_none_or(|covered| covered < end.0))
    };
    if short(&keys) {
        tracing::warn!(topic = %tp.topic_id, partition = tp.partition, bytes = most, "the cleaner's key map cannot hold one index entry's keys: raise --cleaner-dedupe-buffer-size");
    }
    // Only whole entries the map covers are replaced; the rest stays dirty for the next pass.
    let covered = keys.end_offset().unwrap_or(first_dirty.0);

    // Pass 2: every batch from the log start, kept, rewritten or dropped, into segments.
    // The producer state is in the quorum, not rebuilt from the log: no batch is kept for it.
    let no_producers = BTreeMap::new();
    let pass = Settings {
        now_ms,
        delete_retention_ms: settings.delete_retention_ms,
    };
    let mut filter = Filter::new(&keys, pass, &aborted, &no_producers);
    let section_bytes = entries
        .iter()
        .fold(0u64, |sum, e| sum.saturating_add(read_bytes(e)));
    let reserve = segment_bytes.min(section_bytes);
    let mut group = Group::new(tp, index_interval, segment_bytes, reserve);
    for entry in located
        .iter()
        .take_while(|l| l.entry.end_offset.0 <= covered)
    {
        for batch in read_entry(ctx, entry).await? {
            let kept = filter
                .batch(&batch)
                .map_err(|_| mismatch(entry, Offset(batch.base_offset())))?;
            group.add(&batch, kept, filter.horizon);
        }
        group.replaces(entry.entry.clone());
        if group.full() && !group.swap(ctx).await? {
            return Ok(filter.cleaned);
        }
    }
    group.swap(ctx).await?;
    Ok(filter.cleaned)
}

/// Pass 1: a map of `memory` bytes holding the latest offset of each key from `first_dirty`
/// on, as far as it holds them.
async fn build_map(
    ctx: &JobContext,
    located: &[Located],
    first_dirty: Offset,
    aborted: &[AbortedTxn],
    memory: u64,
) -> Result<KeyMap, CompactionError> {
    let mut keys = KeyMap::with_memory(usize::try_from(memory).unwrap_or(usize::MAX));
    // The clean section is covered even when nothing is dirty (a pass for expired tombstones).
    keys.build(first_dirty.0, std::iter::empty(), aborted)
        .map_err(|_| CompactionError::Mismatch {
            key: String::new(),
            at: first_dirty.0,
        })?;
    for entry in located.iter().filter(|l| l.entry.end_offset > first_dirty) {
        let batches = read_entry(ctx, entry).await?;
        keys.build(first_dirty.0, &batches, aborted)
            .map_err(|_| mismatch(entry, entry.entry.base_offset))?;
        if keys
            .end_offset()
            .is_some_and(|covered| covered < entry.entry.end_offset.0)
        {
            break; // Full: this pass cleans up to where it got.
        }
    }
    Ok(keys)
}

/// One output segment in the making, and the entries it replaces.
struct Group {
    tp: TopicPartition,
    index_interval: u64,
    segment_bytes: u64,
    /// What a segment's buffer reserves (the section may be smaller than a segment).
    reserve: u64,
    builder: SegmentBuilder,
    replaced: Vec<BatchRef>,
    /// The last batch read, for a segment that keeps nothing of what it replaces: it then
    /// holds that batch's header alone, so the offsets it covers are still a batch's.
    last: Option<RecordBatch>,
    pushed: bool,
    /// The earliest delete horizon of what it keeps (tombstones, markers).
    horizon: Option<i64>,
}

impl Group {
    fn new(tp: TopicPartition, index_interval: u64, segment_bytes: u64, reserve: u64) -> Group {
        Group {
            tp,
            index_interval,
            segment_bytes,
            reserve,
            builder: SegmentBuilder::new(tp, index_interval, reserve),
            replaced: Vec::new(),
            last: None,
            pushed: false,
            horizon: None,
        }
    }

    fn add(&mut self, batch: &RecordBatch, kept: Kept, horizon: Option<i64>) {
        if kept != Kept::Dropped
            && let Some(h) = horizon
        {
            self.horizon = Some(self.horizon.map_or(h, |earliest| earliest.min(h)));
        }
        let base = Offset(batch.base_offset());
        let end = base + batch.offset_count();
        match kept {
            Kept::Whole => {
                self.builder
                    .push(batch.as_bytes(), base, end, batch.max_timestamp());
                self.pushed = true;
            }
            Kept::Rewritten(bytes) => {
                let max = RecordBatch::new(bytes.clone())
                    .map_or(batch.max_timestamp(), |b| b.max_timestamp());
                self.builder.push(&bytes, base, end, max);
                self.pushed = true;
            }
            Kept::Dropped => {}
        }
        self.last = Some(batch.clone());
    }

    fn replaces(&mut self, entry: BatchRef) {
        self.replaced.push(entry);
    }

    fn full(&self) -> bool {
        self.builder.data_len() >= self.segment_bytes
    }

    /// PUTs the segment and swaps it in for the entries it replaces; whether the state made
    /// the swap. Starts the next group either way.
    async fn swap(&mut self, ctx: &JobContext) -> Result<bool, CompactionError> {
        let next = Group::new(
            self.tp,
            self.index_interval,
            self.segment_bytes,
            self.reserve,
        );
        let mut done = std::mem::replace(self, next);
        let (Some(first), Some(last)) = (done.replaced.first(), done.replaced.last()) else {
            return Ok(true);
        };
        if !done.pushed {
            let Some(batch) = &done.last else {
                return Ok(true);
            };
            let empty = crate::cleaner::rewrite::rebuild(batch, &[], None)
                .unwrap_or_else(|| batch.as_bytes().clone());
            let base = Offset(batch.base_offset());
            done.builder.push(
                &empty,
                base,
                base + batch.offset_count(),
                batch.max_timestamp(),
            );
        }
        done.builder.cover(first.base_offset, last.end_offset);
        let built = done.builder.finish();
        let key = new_cleaned_segment_key(ctx.clock.now_ms(), done.horizon, &ctx.rng);
        swap_in(ctx, done.tp, done.replaced, key, &built).await
    }
}

fn mismatch(entry: &Located, at: Offset) -> CompactionError {
    CompactionError::Mismatch {
        key: entry.key.to_string(),
        at: at.0,
    }
}

/// An entry's batches, each with its committed base offset in its header.
async fn read_entry(
    ctx: &JobContext,
    entry: &Located,
) -> Result<Vec<RecordBatch>, CompactionError> {
    let raw = Sources::none().read(ctx, entry).await?;
    let in_segment = entry.marker.is_none() && is_segment(entry.key.as_str());
    let mut base = entry.entry.base_offset;
    let mut batches = Vec::new();
    for batch in Batches::new(raw) {
        let batch = batch.map_err(|_| mismatch(entry, base))?;
        base = batch_base(in_segment, base, batch.base_offset());
        let mut bytes = batch.as_bytes().to_vec();
        set_base_offset(&mut bytes, base.0);
        let placed = RecordBatch::new(bytes.into()).map_err(|_| mismatch(entry, base))?;
        base = base + placed.offset_count();
        batches.push(placed);
    }
    if base > entry.entry.end_offset {
        return Err(mismatch(entry, base));
    }
    Ok(batches)
}
