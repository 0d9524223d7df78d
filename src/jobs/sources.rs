//! The bytes a round of merges reads, fetched once per object. A produce object holds runs of
//! many partitions; merging each partition on its own would GET the object once for every
//! partition it holds (one ranged GET per run). A round instead plans the groups of all the
//! partitions it merges, batches them (`SpanBudget`, at most `SOURCE_BYTES_MAX`), and for each
//! object fetches one span covering every run the batch reads from it; each run is
//! then sliced from its span. Runs the memory tier holds are copied from there, not fetched.

use super::context::JobContext;
use crate::fetch::reader::marker_bytes;
use crate::fetch::runs::Located;
use crate::ids::ObjectKey;
use crate::store::ObjectStoreError;
use crate::telemetry::ErrorChain;
use bytes::Bytes;
use futures::StreamExt;
use std::collections::HashMap;
use std::ops::Range;

/// Bytes of spans one batch fetches at most (a batch holds at least one group, whatever its
/// size): with `--segment-bytes` at its default, a few partitions' groups at a time.
pub const SOURCE_BYTES_MAX: u64 = 256 << 20;

/// Span GETs a batch has in flight at once.
const FETCHES_AT_ONCE: usize = 4;

/// The bytes of an entry's run within its object (empty for a transaction marker, which no
/// object holds).
fn range_of(entry: &Located) -> Range<u64> {
    if entry.marker.is_some() {
        return 0..0;
    }
    entry.entry.byte_start..entry.entry.byte_start + entry.entry.byte_len
}

/// The spans a batch will fetch, one per object covering every run read from it; as groups
/// join a batch, it keeps the batch within `SOURCE_BYTES_MAX`.
#[derive(Default)]
pub struct SpanBudget {
    spans: HashMap<ObjectKey, Range<u64>>,
    bytes: u64,
}

impl SpanBudget {
    /// Bytes of spans the batch fetches so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// How much the batch's spans grow if `entries` join it.
    pub fn grown_by(&self, entries: &[Located]) -> u64 {
        let mut grown: HashMap<&ObjectKey, Range<u64>> = HashMap::new();
        for entry in entries {
            let r = range_of(entry);
            if r.is_empty() {
                continue;
            }
            let span = grown
                .entry(&entry.key)
                .or_insert_with(|| self.spans.get(&entry.key).cloned().unwrap_or(r.clone()));
            *span = span.start.min(r.start)..span.end.max(r.end);
        }
        grown
            .iter()
            .map(|(key, span)| {
                let before = self.spans.get(*key).map_or(0, |s| s.end - s.start);
                (span.end - span.start) - before
            })
            .sum()
    }

    pub fn add(&mut self, entries: &[Located]) {
        self.bytes += self.grown_by(entries);
        for entry in entries {
            let r = range_of(entry);
            if r.is_empty() {
                continue;
            }
            self.spans
                .entry(entry.key.clone())
                .and_modify(|s| *s = s.start.min(r.start)..s.end.max(r.end))
                .or_insert(r);
        }
    }
}

/// What a batch read: spans of objects by key, and the runs found in the memory tier.
#[derive(Default)]
pub struct Sources {
    spans: HashMap<ObjectKey, (u64, Bytes)>,
    held: HashMap<(ObjectKey, u64), Bytes>,
}

impl Sources {
    /// Reads nothing ahead: each run is read when asked for.
    pub fn none() -> Sources {
        Sources::default()
    }

    /// Copies the entries' runs the memory tier holds, and fetches one span per object for
    /// the rest, a few at once.
    pub async fn fetch(ctx: &JobContext, entries: &[&Located]) -> Sources {
        let mut sources = Sources::default();
        let mut missed = Vec::new();
        for &entry in entries {
            let range = range_of(entry);
            if range.is_empty() {
                continue;
            }
            match ctx.read_cache.peek(&entry.key, range.clone()).await {
                Some(bytes) => {
                    sources.held.insert((entry.key.clone(), range.start), bytes);
                }
                None => missed.push(entry),
            }
        }
        let mut wanted = SpanBudget::default();
        for entry in missed {
            wanted.add(std::slice::from_ref(entry));
        }
        // A span that cannot be read is left out: its runs are then read one by one, and only
        // the groups that need that object fail.
        sources.spans = futures::stream::iter(wanted.spans)
            .map(|(key, span)| async move {
                let read = ctx.store.get_range(key.as_str(), span.clone()).await;
                (key, span.start, read)
            })
            .buffer_unordered(FETCHES_AT_ONCE)
            .filter_map(|(key, start, read)| async move {
                match read {
                    Ok(bytes) => Some((key, (start, bytes))),
                    Err(e) => {
                        tracing::debug!(key = %key, error = %ErrorChain(&e), "reading a span for merges failed");
                        None
                    }
                }
            })
            .collect()
            .await;
        tracing::debug!(
            runs = entries.len(),
            from_memory = sources.held.len(),
            spans = sources.spans.len(),
            "read the objects of a batch of merges"
        );
        sources
    }

    /// The bytes of an entry's run: built for a marker, else what the batch read, else the
    /// memory tier's or a ranged GET of its own.
    pub async fn read(&self, ctx: &JobContext, entry: &Located) -> Result<Bytes, ObjectStoreError> {
        if let Some(marker) = entry.marker {
            return Ok(marker_bytes(marker, entry.entry.max_timestamp));
        }
        let range = range_of(entry);
        if let Some(bytes) = self.slice(&entry.key, &range) {
            return Ok(bytes);
        }
        Ok(match ctx.read_cache.peek(&entry.key, range.clone()).await {
            Some(raw) => raw,
            None => ctx.store.get_range(entry.key.as_str(), range).await?,
        })
    }

    /// The range, if the batch read it whole.
    fn slice(&self, key: &ObjectKey, range: &Range<u64>) -> Option<Bytes> {
        if let Some(bytes) = self.held.get(&(key.clone(), range.start))
            && bytes.len() as u64 == range.end - range.start
        {
            return Some(bytes.clone());
        }
        let (start, bytes) = self.spans.get(key)?;
        let from = usize::try_from(range.start.checked_sub(*start)?).ok()?;
        let to = usize::try_from(range.end - start).ok()?;
        (to <= bytes.len()).then(|| bytes.slice(from..to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Offset;
    use crate::metadata::state::BatchRef;
    use crate::metadata::state::objects::ObjectId;

    fn located(key: &str, start: u64, len: u64) -> Located {
        Located {
            entry: BatchRef {
                object: ObjectId(1),
                base_offset: Offset(0),
                end_offset: Offset(1),
                byte_start: start,
                byte_len: len,
                max_timestamp: 0,
            },
            key: ObjectKey::new(key),
            footer: None,
            marker: None,
        }
    }

    #[test]
    fn an_object_read_by_several_partitions_is_one_span() {
        let entries = [
            located("a", 100, 50),
            located("b", 0, 10),
            located("a", 10, 20),
            located("a", 400, 1),
        ];
        let mut budget = SpanBudget::default();
        budget.add(&entries);
        let spans = budget.spans;
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[&ObjectKey::new("a")], 10..401);
        assert_eq!(spans[&ObjectKey::new("b")], 0..10);
    }

    #[test]
    fn a_batch_grows_by_what_its_spans_grow() {
        let mut budget = SpanBudget::default();
        // Three partitions' runs in object "a" (a 300-byte span in all), one in "b".
        budget.add(&[located("a", 100, 100)]);
        assert_eq!(budget.bytes(), 100);
        assert_eq!(budget.grown_by(&[located("a", 0, 100)]), 100);
        assert_eq!(
            budget.grown_by(&[located("a", 120, 10)]),
            0,
            "inside the span: free"
        );
        budget.add(&[located("a", 0, 100)]);
        budget.add(&[located("a", 200, 100)]);
        assert_eq!(budget.bytes(), 300);
        // A group reading two objects; a gap inside a span is fetched too.
        assert_eq!(
            budget.grown_by(&[located("b", 0, 250), located("a", 400, 10)]),
            250 + 110
        );
        budget.add(&[located("b", 0, 250), located("a", 400, 10)]);
        assert_eq!(budget.bytes(), 660);
    }

    #[test]
    fn a_run_is_sliced_from_its_objects_span() {
        let mut sources = Sources::none();
        let object = Bytes::from((0u8..=255).collect::<Vec<u8>>());
        sources
            .spans
            .insert(ObjectKey::new("a"), (100, object.slice(100..200)));
        let key = ObjectKey::new("a");
        assert_eq!(
            sources.slice(&key, &(120..130)),
            Some(object.slice(120..130))
        );
        assert_eq!(
            sources.slice(&key, &(100..200)),
            Some(object.slice(100..200))
        );
        assert_eq!(sources.slice(&key, &(90..110)), None, "before the span");
        assert_eq!(sources.slice(&key, &(150..201)), None, "past what was read");
        assert_eq!(sources.slice(&ObjectKey::new("b"), &(0..1)), None);
    }
}
