//! The cleaner against a model: random histories of puts, tombstones, transactions (committed
//! and aborted) and cleaning passes, with maps too small for the dirty section and batches in
//! every codec; after each pass the model says which records must survive and which may not.

use super::rewrite::rebuild;
use super::*;
use crate::protocol::record_batch::{
    BatchSpec, RecordBatch, build_batch, build_control_batch, set_base_offset,
};
use crate::protocol::records::{self, Record};
use bytes::Bytes;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
enum Step {
    /// A batch outside transactions: producer -1 (plain) or 9 (idempotent), a codec, records
    /// as (key, value or tombstone, with a header).
    Plain {
        idempotent: bool,
        codec: u8,
        records: Vec<(u8, Option<u8>, bool)>,
    },
    /// A batch of transactional producer 1–3 (opening its transaction if none is open).
    Txn {
        producer: i64,
        codec: u8,
        records: Vec<(u8, Option<u8>, bool)>,
    },
    /// The producer's open transaction ends (nothing when none is open).
    End { producer: i64, commit: bool },
    /// A cleaning pass `advance_ms` after the last one, with a map of `slots` entries.
    Clean { advance_ms: i64, slots: usize },
}

fn step() -> impl Strategy<Value = Step> {
    let records = proptest::collection::vec(
        (
            0u8..6,
            proptest::option::weighted(0.75, any::<u8>()),
            any::<bool>(),
        ),
        1..5,
    );
    prop_oneof![
        4 => (any::<bool>(), 0u8..5, records.clone()).prop_map(|(idempotent, codec, records)| Step::Plain { idempotent, codec, records }),
        2 => (1i64..4, 0u8..5, records).prop_map(|(producer, codec, records)| Step::Txn { producer, codec, records }),
        1 => (1i64..4, any::<bool>()).prop_map(|(producer, commit)| Step::End { producer, commit }),
        1 => (0i64..300, 2usize..40).prop_map(|(advance_ms, slots)| Step::Clean { advance_ms, slots }),
    ]
}

const RETENTION_MS: i64 = 250;

/// One record of the history, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Written {
    offset: i64,
    key: u8,
    value: Option<u8>,
    header: bool,
    /// The transaction it belongs to (index into `History::txns`), if any.
    txn: Option<usize>,
}

#[derive(Debug, Clone, Copy)]
struct Txn {
    producer: i64,
    /// `None` while open.
    committed: Option<bool>,
    first_offset: i64,
    marker_offset: Option<i64>,
}

#[derive(Default)]
struct History {
    /// The log as the cleaner left it plus what came after.
    log: Vec<Bytes>,
    next_offset: i64,
    written: Vec<Written>,
    txns: Vec<Txn>,
    open: BTreeMap<i64, usize>,
    /// The last offset of each producer's last data batch.
    last_batch_of: BTreeMap<i64, i64>,
    /// When the first pass read each batch (by base offset).
    first_seen: BTreeMap<i64, i64>,
    now_ms: i64,
    /// Where the next pass's dirty section starts.
    checkpoint: i64,
}

fn codec_of(code: u8) -> i16 {
    i16::from(code)
}

fn header_bytes(header: bool) -> Bytes {
    if header {
        // One header, key "h", value "v" (varints zigzag-encoded).
        Bytes::from_static(&[2, 2, b'h', 2, b'v'])
    } else {
        Bytes::from_static(&[0])
    }
}

impl History {
    fn append(
        &mut self,
        producer: i64,
        transactional: bool,
        codec: u8,
        records: &[(u8, Option<u8>, bool)],
    ) -> i64 {
        let base = self.next_offset;
        let template = build_batch(BatchSpec {
            producer_id: producer,
            producer_epoch: if producer >= 0 { 0 } else { -1 },
            base_sequence: if producer >= 0 { 0 } else { -1 },
            records: records.len() as i32,
            value_bytes: 0,
            base_timestamp_ms: 1_000 + base,
        });
        let mut raw = template.to_vec();
        let attributes = codec_of(codec) | if transactional { 0x10 } else { 0 };
        raw[21..23].copy_from_slice(&attributes.to_be_bytes());
        let template = RecordBatch::new(Bytes::from(raw)).unwrap();
        let written: Vec<Record> = records
            .iter()
            .enumerate()
            .map(|(i, (key, value, header))| Record {
                index: i as i32,
                attributes: 0,
                timestamp: 1_000 + base + i as i64,
                offset_delta: i as i32,
                key: Some(Bytes::from(vec![*key])),
                value: value.map(|v| Bytes::from(vec![v; 3])),
                headers: header_bytes(*header),
            })
            .collect();
        let mut batch = rebuild(&template, &written, None).unwrap().to_vec();
        set_base_offset(&mut batch, base);
        self.log.push(Bytes::from(batch));
        self.next_offset += records.len() as i64;
        if producer >= 0 {
            self.last_batch_of.insert(producer, self.next_offset - 1);
        }
        base
    }

    fn run(&mut self, step: &Step) {
        match step {
            Step::Plain {
                idempotent,
                codec,
                records,
            } => {
                let producer = if *idempotent { 9 } else { -1 };
                let base = self.append(producer, false, *codec, records);
                for (i, (key, value, header)) in records.iter().enumerate() {
                    self.written.push(Written {
                        offset: base + i as i64,
                        key: *key,
                        value: *value,
                        header: *header,
                        txn: None,
                    });
                }
            }
            Step::Txn {
                producer,
                codec,
                records,
            } => {
                let txn = match self.open.get(producer) {
                    Some(&txn) => txn,
                    None => {
                        self.txns.push(Txn {
                            producer: *producer,
                            committed: None,
                            first_offset: self.next_offset,
                            marker_offset: None,
                        });
                        self.open.insert(*producer, self.txns.len() - 1);
                        self.txns.len() - 1
                    }
                };
                let base = self.append(*producer, true, *codec, records);
                for (i, (key, value, header)) in records.iter().enumerate() {
                    self.written.push(Written {
                        offset: base + i as i64,
                        key: *key,
                        value: *value,
                        header: *header,
                        txn: Some(txn),
                    });
                }
            }
            Step::End { producer, commit } => {
                let Some(txn) = self.open.remove(producer) else {
                    return;
                };
                let mut marker =
                    build_control_batch(*producer, 0, *commit, 0, 1_000 + self.next_offset)
                        .to_vec();
                set_base_offset(&mut marker, self.next_offset);
                self.txns[txn].committed = Some(*commit);
                self.txns[txn].marker_offset = Some(self.next_offset);
                self.log.push(Bytes::from(marker));
                self.next_offset += 1;
            }
            Step::Clean { advance_ms, slots } => self.clean(*advance_ms, *slots),
        }
    }

    /// Whether the record at `w` was aborted.
    fn aborted(&self, w: &Written) -> bool {
        w.txn.is_some_and(|t| self.txns[t].committed == Some(false))
    }

    /// A pass over everything below the first open transaction (the last stable offset).
    fn clean(&mut self, advance_ms: i64, slots: usize) {
        self.now_ms += advance_ms;
        let stable = self
            .open
            .values()
            .map(|&t| self.txns[t].first_offset)
            .min()
            .unwrap_or(self.next_offset);
        let batches: Vec<RecordBatch> = self
            .log
            .iter()
            .map(|b| RecordBatch::new(b.clone()).unwrap())
            .collect();
        let cleanable: Vec<&RecordBatch> = batches
            .iter()
            .filter(|b| b.base_offset() < stable)
            .collect();
        for batch in &cleanable {
            self.first_seen
                .entry(batch.base_offset())
                .or_insert(self.now_ms);
        }
        let aborted: Vec<AbortedTxn> = self
            .txns
            .iter()
            .filter(|t| t.committed == Some(false))
            .map(|t| AbortedTxn {
                producer_id: t.producer,
                first_offset: t.first_offset,
                last_offset: t.marker_offset.unwrap(),
            })
            .collect();
        let mut keys = KeyMap::with_memory(slots * key_map::ENTRY_BYTES);
        keys.build(
            self.checkpoint,
            cleanable
                .iter()
                .copied()
                .filter(|b| b.base_offset() + b.offset_count() > self.checkpoint),
            &aborted,
        )
        .unwrap();
        let end = keys.end_offset();
        let mut filter = Filter::new(
            &keys,
            Settings {
                now_ms: self.now_ms,
                delete_retention_ms: RETENTION_MS,
            },
            &aborted,
            &self.last_batch_of,
        );
        let mut log = Vec::new();
        for batch in &batches {
            if batch.base_offset() >= stable {
                log.push(batch.as_bytes().clone());
                continue;
            }
            match filter.batch(batch).unwrap() {
                Kept::Whole => log.push(batch.as_bytes().clone()),
                Kept::Rewritten(bytes) => {
                    let rewritten = RecordBatch::new(bytes.clone()).unwrap();
                    rewritten
                        .validate()
                        .expect("a rewritten batch has a valid CRC");
                    assert_eq!(rewritten.base_offset(), batch.base_offset());
                    assert_eq!(rewritten.offset_count(), batch.offset_count());
                    if rewritten.record_count() > 0 {
                        assert_eq!(rewritten.compression(), batch.compression());
                    }
                    assert_eq!(rewritten.producer_id(), batch.producer_id());
                    assert_eq!(rewritten.base_sequence(), batch.base_sequence());
                    assert_eq!(rewritten.is_transactional(), batch.is_transactional());
                    log.push(bytes);
                }
                Kept::Dropped => {}
            }
        }
        self.log = log;
        if let Some(end) = end {
            self.checkpoint = self.checkpoint.max(end);
        }
        self.check(stable);
    }

    /// What survived, against the model.
    fn check(&self, stable: i64) {
        let mut survivors: BTreeMap<i64, Record> = BTreeMap::new();
        let mut markers: BTreeSet<i64> = BTreeSet::new();
        let mut batch_ends = BTreeSet::new();
        let mut previous_end = -1;
        for bytes in &self.log {
            let batch = RecordBatch::new(bytes.clone()).unwrap();
            assert!(
                batch.base_offset() > previous_end,
                "batches stay in offset order"
            );
            previous_end = batch.base_offset() + batch.offset_count() - 1;
            batch_ends.insert(previous_end);
            if batch.is_control() {
                markers.insert(batch.base_offset());
                continue;
            }
            for record in records::decode(&batch, 1 << 20).unwrap() {
                survivors.insert(batch.base_offset() + i64::from(record.offset_delta), record);
            }
        }
        // What the passes so far covered: below it, only the latest record of a key is left.
        let end = self.checkpoint;
        // The latest not-aborted record of each key below that.
        let mut latest: BTreeMap<u8, i64> = BTreeMap::new();
        for w in &self.written {
            if w.offset < end.min(stable) && !self.aborted(w) {
                latest.insert(w.key, w.offset);
            }
        }
        for w in &self.written {
            let survived = survivors.get(&w.offset);
            if let Some(record) = survived {
                // Whatever survives is what was written, at its offset.
                assert_eq!(
                    record.key.as_deref(),
                    Some(&[w.key][..]),
                    "offset {}",
                    w.offset
                );
                assert_eq!(
                    record.value,
                    w.value.map(|v| Bytes::from(vec![v; 3])),
                    "offset {}",
                    w.offset
                );
                assert_eq!(
                    record.headers,
                    header_bytes(w.header),
                    "offset {}",
                    w.offset
                );
                assert_eq!(record.timestamp, 1_000 + w.offset, "offset {}", w.offset);
            }
            if w.offset >= stable {
                assert!(
                    survived.is_some(),
                    "{w:?}: beyond the stable offset, never cleaned"
                );
                continue;
            }
            if self.aborted(w) {
                let ended = self.txns[w.txn.unwrap()].marker_offset.unwrap();
                if ended < stable {
                    assert!(survived.is_none(), "{w:?}: aborted");
                }
                continue;
            }
            let horizon = self
                .first_seen
                .get(&self.batch_base(w.offset))
                .map(|seen| seen + RETENTION_MS);
            let tombstone_live = w.value.is_some() || horizon.is_none_or(|h| h > self.now_ms);
            if w.offset >= end {
                // Beyond what the passes covered: kept.
                assert!(
                    survived.is_some(),
                    "{w:?}: beyond the cleaned section's end {end}"
                );
                continue;
            }
            let is_latest = latest.get(&w.key) == Some(&w.offset);
            if !is_latest {
                assert!(
                    survived.is_none(),
                    "{w:?}: superseded by offset {:?}",
                    latest.get(&w.key)
                );
            } else if w.value.is_some() {
                assert!(survived.is_some(), "{w:?}: the latest value of its key");
            } else {
                assert_eq!(
                    survived.is_some(),
                    tombstone_live,
                    "{w:?}: a tombstone, horizon {horizon:?}, now {}",
                    self.now_ms
                );
            }
        }
        // A transaction with a surviving record keeps its marker.
        for (t, txn) in self.txns.iter().enumerate() {
            let Some(marker) = txn.marker_offset else {
                continue;
            };
            let has_data = self
                .written
                .iter()
                .any(|w| w.txn == Some(t) && survivors.contains_key(&w.offset));
            if has_data {
                assert!(
                    markers.contains(&marker),
                    "{txn:?}: its records survive, its marker must"
                );
            }
        }
        // Each producer's last batch keeps its header.
        for last in self.last_batch_of.values() {
            assert!(
                batch_ends.contains(last),
                "the producer's last batch, ending at {last}, is kept"
            );
        }
    }

    /// The base offset of the batch holding `offset` (as written).
    fn batch_base(&self, offset: i64) -> i64 {
        *self
            .first_seen_bases()
            .range(..=offset)
            .next_back()
            .map(|(base, _)| base)
            .unwrap()
    }

    fn first_seen_bases(&self) -> &BTreeMap<i64, i64> {
        &self.first_seen
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn survivors_are_what_kafka_keeps(steps in proptest::collection::vec(step(), 1..60)) {
        let mut history = History::default();
        for step in &steps {
            history.run(step);
        }
        // A last pass long after: every horizon has passed.
        history.run(&Step::Clean { advance_ms: 10 * RETENTION_MS, slots: 64 });
        history.run(&Step::Clean { advance_ms: 1, slots: 64 });
    }
}

/// Kafka's delete horizon, by hand: a tombstone stays `delete.retention.ms` after the first
/// pass that sees it, and goes at the first pass after that.
#[test]
fn a_tombstone_stays_for_the_delete_retention_then_goes() {
    let mut history = History::default();
    history.run(&Step::Plain {
        idempotent: false,
        codec: 0,
        records: vec![(1, Some(1), false), (2, Some(2), false)],
    });
    history.run(&Step::Plain {
        idempotent: false,
        codec: 3,
        records: vec![(1, None, true)],
    });
    history.run(&Step::Clean {
        advance_ms: 10,
        slots: 8,
    });
    assert_eq!(
        history.log.len(),
        2,
        "key 1's value goes, its tombstone stays"
    );
    let tombstone = RecordBatch::new(history.log[1].clone()).unwrap();
    assert_eq!(
        crate::protocol::record_batch::delete_horizon(&tombstone),
        Some(10 + RETENTION_MS)
    );
    history.run(&Step::Clean {
        advance_ms: RETENTION_MS - 1,
        slots: 8,
    });
    assert_eq!(history.log.len(), 2);
    history.run(&Step::Clean {
        advance_ms: 1,
        slots: 8,
    });
    assert_eq!(history.log.len(), 1, "past the horizon the tombstone goes");
}

/// A map smaller than the dirty section's keys: the pass cleans a prefix, the next goes on.
#[test]
fn a_small_map_cleans_in_prefixes_and_makes_progress() {
    let mut history = History::default();
    for round in 0..3u8 {
        for key in 0..6u8 {
            history.run(&Step::Plain {
                idempotent: false,
                codec: 0,
                records: vec![(key, Some(round), false)],
            });
        }
    }
    history.run(&Step::Clean {
        advance_ms: 1,
        slots: 4,
    });
    let first = history.checkpoint;
    assert!(
        first > 0 && first < history.next_offset,
        "a prefix: {first}"
    );
    while history.checkpoint < history.next_offset {
        let before = history.checkpoint;
        history.run(&Step::Clean {
            advance_ms: 1,
            slots: 4,
        });
        assert!(history.checkpoint > before, "each pass goes further");
    }
}
