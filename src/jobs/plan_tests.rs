//! The jobs' decisions, on states built by applying commands as the quorum would.

use super::*;
use crate::ids::{Offset, ProducerEpoch, ProducerId, TopicPartition};
use crate::metadata::state::{AlterTopicConfigs, CreateTopic, DeleteTopic};
use crate::metadata::state::{
    CommitObject, CommittedBatch, DeleteRecords, EnforceRetention, FooterAt, ForgetObjects,
    LogOutcome, MetadataState, NewSegment, Outcome, PartitionBatches, ReplaceRuns, Tick,
};
use proptest::prelude::*;
use std::collections::BTreeMap;
use uuid::Uuid;

const TOPIC: Uuid = Uuid::from_u128(7);

fn tp(partition: i32) -> TopicPartition {
    TopicPartition {
        topic_id: TOPIC,
        partition,
    }
}

fn state(partitions: i32) -> MetadataState {
    let mut s = MetadataState::default();
    s.apply(Tick { now_ms: 1_000 });
    s.apply(CreateTopic {
        name: "t".into(),
        id: TOPIC,
        partitions,
        configs: BTreeMap::new(),
    });
    s
}

fn batch(start: u64, len: u64, count: i64, ts: i64) -> CommittedBatch {
    CommittedBatch {
        byte_start: start,
        byte_len: len,
        offset_count: count,
        max_timestamp: ts,
        producer_id: ProducerId(-1),
        producer_epoch: ProducerEpoch(-1),
        base_sequence: -1,
        last_sequence: -1,
    }
}

/// Commits an object `key` holding one batch of `len` bytes for each partition listed.
fn commit(s: &mut MetadataState, key: &str, partitions: &[i32], len: u64) {
    let outcome = s.apply(CommitObject {
        object_key: ObjectKey::new(key),
        partitions: partitions
            .iter()
            .map(|p| PartitionBatches {
                partition: tp(*p),
                batches: vec![batch(16, len, 2, s.now_ms())],
            })
            .collect(),
    });
    assert!(matches!(outcome, Outcome::Log(LogOutcome::CommitObject(_))));
}

fn tick_to(s: &mut MetadataState, now_ms: i64) {
    while s.now_ms() < now_ms {
        s.apply(Tick { now_ms });
    }
}

fn settings() -> CompactionSettings {
    CompactionSettings {
        segment_bytes: 1_000,
        lag_ms: 10_000,
        entries_max: 100,
    }
}

fn plan(s: &MetadataState, partition: i32) -> Option<Vec<BatchRef>> {
    let p = s.partition(&tp(partition)).unwrap();
    runs_to_compact(p, s.objects(), s.now_ms(), &settings())
}

fn swap(s: &mut MetadataState, partition: i32, replaced: Vec<BatchRef>, key: &str) -> bool {
    let len = replaced.iter().map(|r| r.byte_len).sum();
    let outcome = s.apply(ReplaceRuns {
        partition: tp(partition),
        replaced,
        segment: NewSegment {
            key: ObjectKey::new(key),
            data_len: len,
            footer: FooterAt {
                start: len,
                len: 48,
            },
            max_timestamp: 0,
        },
    });
    outcome == Outcome::Log(LogOutcome::ReplaceRuns(true))
}

#[test]
fn young_runs_wait_and_overdue_ones_are_compacted_together() {
    let mut s = state(1);
    commit(&mut s, "a", &[0], 10);
    commit(&mut s, "b", &[0], 10);
    assert_eq!(plan(&s, 0), None, "younger than the lag");
    tick_to(&mut s, 15_000);
    assert_eq!(plan(&s, 0), None, "older than the lag, not yet overdue");
    commit(&mut s, "c", &[0], 10);
    tick_to(&mut s, 22_000);
    let group = plan(&s, 0).expect("overdue");
    assert_eq!(group.len(), 2, "the young third run stays");
    assert!(swap(&mut s, 0, group, "seg-1"));
    let p = s.partition(&tp(0)).unwrap();
    assert_eq!(p.index.len(), 2);
    assert_eq!(p.bytes, 30);
    // The produce objects are dead now, the segment live.
    assert_eq!(s.objects().dead_count(), 2);
    assert_eq!(s.objects().live_count(), 2);
}

#[test]
fn a_full_segment_of_runs_is_compacted_before_it_is_overdue() {
    let mut s = state(1);
    for i in 0..6 {
        commit(&mut s, &format!("o{i}"), &[0], 200);
    }
    tick_to(&mut s, 12_000);
    let group = plan(&s, 0).expect("fills a segment");
    assert_eq!(group.len(), 5, "1,000 bytes: five runs of 200");
}

#[test]
fn a_small_segment_waits_until_what_follows_is_as_large() {
    let mut s = state(1);
    commit(&mut s, "a", &[0], 100);
    tick_to(&mut s, 22_000);
    let group = plan(&s, 0).unwrap();
    assert!(swap(&mut s, 0, group, "seg-a"));
    // 50 bytes of overdue runs after a 100-byte segment: compacted alone.
    commit(&mut s, "b", &[0], 50);
    tick_to(&mut s, 43_000);
    let group = plan(&s, 0).unwrap();
    assert_eq!(group.len(), 1);
    assert!(swap(&mut s, 0, group, "seg-b"));
    // 50 more: the 50-byte segment and they are as large as the 100-byte one: all merge.
    commit(&mut s, "c", &[0], 50);
    tick_to(&mut s, 64_000);
    let group = plan(&s, 0).unwrap();
    assert_eq!(
        group.iter().map(|r| r.byte_len).collect::<Vec<_>>(),
        vec![100, 50, 50]
    );
    assert!(swap(&mut s, 0, group, "seg-c"));
    assert_eq!(s.partition(&tp(0)).unwrap().index.len(), 1);
    assert_eq!(plan(&s, 0), None);
}

#[test]
fn a_swap_of_runs_that_changed_is_refused_and_its_segment_is_garbage() {
    let mut s = state(1);
    commit(&mut s, "a", &[0], 10);
    commit(&mut s, "b", &[0], 10);
    tick_to(&mut s, 22_000);
    let group = plan(&s, 0).unwrap();
    // DeleteRecords came first and dropped the first run.
    s.apply(DeleteRecords {
        partitions: vec![(tp(0), 2)],
    });
    assert!(!swap(&mut s, 0, group.clone(), "seg-1"));
    assert!(
        !swap(&mut s, 0, group[1..].to_vec(), "seg-1"),
        "a key is used once"
    );
    let dead: Vec<_> = dead_due(s.objects(), i64::MAX, 0)
        .into_iter()
        .map(|(_, k)| k.as_str().to_string())
        .collect();
    assert_eq!(dead, vec!["a".to_string(), "seg-1".to_string()]);
    // The same runs under a new key: made.
    assert!(swap(&mut s, 0, group[1..].to_vec(), "seg-2"));
}

#[test]
fn orphans_are_old_unknown_keys_of_floes_schema() {
    let mut s = state(1);
    let known = "v1/0000000001000-0f8fad5b-d9cb-469f-a165-70867728950e.floe";
    commit(&mut s, known, &[0], 10);
    let listed: Vec<String> = [
        known,
        "v1/0000000001000-1f8fad5b-d9cb-469f-a165-70867728950e.floe",
        "v1/0000000009000-2f8fad5b-d9cb-469f-a165-70867728950e.seg",
        "v1/0000000001000-3f8fad5b-d9cb-469f-a165-70867728950e.seg",
        "elsewhere/0000000001000-4f8fad5b-d9cb-469f-a165-70867728950e.floe",
    ]
    .iter()
    .map(|k| k.to_string())
    .collect();
    assert_eq!(
        orphans(&listed, s.objects(), 6_000, 5_000),
        vec![
            "v1/0000000001000-1f8fad5b-d9cb-469f-a165-70867728950e.floe",
            "v1/0000000001000-3f8fad5b-d9cb-469f-a165-70867728950e.seg",
        ]
    );
}

/// A step of a random history.
#[derive(Debug, Clone)]
enum Step {
    Commit { partitions: Vec<i32>, len: u64 },
    Tick(i64),
    Compact(i32),
    DeleteRecords(i32, i64),
    Retention { ms: i64 },
    Collect,
    DeleteTopic,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (proptest::collection::vec(0..3i32, 1..3), 1u64..400)
            .prop_map(|(partitions, len)| Step::Commit { partitions, len }),
        3 => (1i64..20_000).prop_map(Step::Tick),
        3 => (0..3i32).prop_map(Step::Compact),
        1 => (0..3i32, -1i64..30).prop_map(|(p, o)| Step::DeleteRecords(p, o)),
        1 => (0i64..50_000).prop_map(|ms| Step::Retention { ms }),
        2 => Just(Step::Collect),
        1 => Just(Step::DeleteTopic),
    ]
}

proptest! {
    /// Whatever happens, nothing the collector would delete is referenced by an index entry,
    /// every live object is referenced, and the byte counts match the entries.
    #[test]
    fn a_referenced_object_is_never_collected(steps in proptest::collection::vec(step(), 1..80)) {
        let mut s = state(3);
        let mut n = 0;
        for step in steps {
            n += 1;
            match step {
                Step::Commit { partitions, len } => commit(&mut s, &format!("o{n}"), &partitions, len),
                Step::Tick(by) => {
                    let to = s.now_ms() + by;
                    tick_to(&mut s, to)
                }
                Step::Compact(p) => {
                    if let Some(group) = s.partition(&tp(p)).and_then(|part| runs_to_compact(part, s.objects(), s.now_ms(), &settings())) {
                        swap(&mut s, p, group, &format!("seg{n}"));
                    }
                }
                Step::DeleteRecords(p, offset) => {
                    s.apply(DeleteRecords { partitions: vec![(tp(p), offset)] });
                }
                Step::Retention { ms } => {
                    if s.topic("t").is_some() {
                        s.apply(AlterTopicConfigs { name: "t".into(), changes: vec![("retention.ms".into(), Some(ms.to_string()))] });
                    }
                    s.apply(EnforceRetention);
                }
                Step::Collect => {
                    let due: Vec<_> = dead_due(s.objects(), s.now_ms(), 5_000).into_iter().map(|(id, _)| id).collect();
                    s.apply(ForgetObjects { ids: due });
                }
                Step::DeleteTopic => {
                    s.apply(DeleteTopic { name: "t".into() });
                    s.apply(CreateTopic { name: "t".into(), id: TOPIC, partitions: 3, configs: BTreeMap::new() });
                }
            }
            let mut referenced: BTreeMap<ObjectId, u32> = BTreeMap::new();
            for topic in s.topics() {
                for p in &topic.partitions {
                    prop_assert_eq!(p.bytes, p.index.iter().map(|r| r.byte_len).sum::<u64>());
                    if let Some(first) = p.index.front() {
                        prop_assert!(first.end_offset > p.log_start_offset);
                    }
                    for r in p.index.iter() {
                        *referenced.entry(r.object).or_default() += 1;
                    }
                }
            }
            let collectable = dead_due(s.objects(), i64::MAX, 0);
            for (id, key) in &collectable {
                prop_assert!(!referenced.contains_key(id), "{key} is referenced");
            }
            for (id, refs) in &referenced {
                let object = s.objects().get(*id);
                prop_assert!(object.is_some(), "an entry names a dead object");
                prop_assert_eq!(object.unwrap().refs, *refs);
            }
            prop_assert_eq!(s.objects().live_count(), referenced.len());
        }
    }
}

#[test]
fn retention_advances_the_log_start_and_kills_the_objects() {
    let mut s = state(1);
    commit(&mut s, "a", &[0], 10);
    tick_to(&mut s, 5_000);
    commit(&mut s, "b", &[0], 10);
    s.apply(AlterTopicConfigs {
        name: "t".into(),
        changes: vec![("retention.ms".into(), Some("2000".into()))],
    });
    assert_eq!(
        s.apply(EnforceRetention),
        Outcome::Log(LogOutcome::EnforceRetention(1))
    );
    let p = s.partition(&tp(0)).unwrap();
    assert_eq!(p.log_start_offset, Offset(2));
    assert_eq!(s.objects().dead_count(), 1);
}

#[test]
fn a_swap_applied_twice_answers_made_both_times_and_a_late_one_is_refused_without_panic() {
    let mut s = state(1);
    for key in ["a", "b", "c"] {
        commit(&mut s, key, &[0], 10);
    }
    tick_to(&mut s, 22_000);
    let group = plan(&s, 0).unwrap();
    assert_eq!(group.len(), 3);
    // The quorum may apply a retried write twice: the second copy is the same swap.
    assert!(swap(&mut s, 0, group.clone(), "seg-1"));
    assert!(swap(&mut s, 0, group.clone(), "seg-1"));
    let segment = s.partition(&tp(0)).unwrap().index[0].object;
    assert_eq!(s.objects().get(segment).map(|o| o.refs), Some(1));
    // A second compactor's swap of the same runs, now one entry: refused, nothing changes.
    let before = s.clone();
    assert!(!swap(&mut s, 0, group, "seg-2"));
    assert_eq!(s.partition(&tp(0)), before.partition(&tp(0)));
}

fn clean_settings(min_cleanable_ratio: f64) -> CleanSettings {
    CleanSettings {
        min_cleanable_ratio,
        min_lag_ms: 0,
        max_lag_ms: i64::MAX,
        delete_retention_ms: 1_000,
    }
}

fn section(s: &MetadataState, settings: &CleanSettings) -> Option<CleanSection> {
    let p = s.partition(&tp(0)).unwrap();
    let stable = s.last_stable_offset(&tp(0)).unwrap();
    LogToClean::of(p, s.objects(), stable, s.now_ms(), settings, 100).section()
}

#[test]
fn the_cleaner_takes_all_but_the_last_entry_when_enough_is_dirty() {
    let mut s = state(1);
    assert_eq!(section(&s, &clean_settings(0.5)), None, "nothing to clean");
    commit(&mut s, "a", &[0], 10);
    assert_eq!(
        section(&s, &clean_settings(0.5)),
        None,
        "the last entry is never cleaned"
    );
    commit(&mut s, "b", &[0], 10);
    commit(&mut s, "c", &[0], 10);
    let due = section(&s, &clean_settings(0.5)).expect("all dirty");
    assert_eq!(due.entries.len(), 2);
    assert_eq!((due.first_dirty, due.dirty_ratio), (Offset(0), 1.0));
    // Once the first two are a cleaned segment, the third alone is 1/3 dirty.
    let replaced = due.entries.clone();
    assert!(swap(&mut s, 0, replaced, "v1/0000000000001-x.cleaned.seg"));
    commit(&mut s, "d", &[0], 10);
    let third = section(&s, &clean_settings(0.2)).expect("a third dirty");
    assert_eq!(third.first_dirty, Offset(4));
    assert_eq!(section(&s, &clean_settings(0.5)), None, "below the ratio");
}

#[test]
fn the_log_to_clean_says_where_cleaning_stands() {
    let mut s = state(1);
    let view = |s: &MetadataState| {
        let p = s.partition(&tp(0)).unwrap();
        let stable = s.last_stable_offset(&tp(0)).unwrap();
        LogToClean::of(
            p,
            s.objects(),
            stable,
            s.now_ms(),
            &clean_settings(0.5),
            100,
        )
    };
    for key in ["a", "b", "c"] {
        commit(&mut s, key, &[0], 10);
    }
    let before = view(&s);
    assert_eq!((before.clean, before.entries.len()), (0, 2));
    assert_eq!(
        (
            before.clean_bytes,
            before.dirty_bytes,
            before.uncleanable_bytes
        ),
        (0, 20, 10),
        "the last entry is not cleanable"
    );
    assert_eq!(
        (before.last_cleaned_ms, before.next_horizon_ms),
        (None, None)
    );
    assert!(before.due());
    // A pass wrote a and b into a segment that keeps a tombstone until 5,000.
    let key = "v1/0000000000042-00000000-0000-0000-0000-000000000000.h0000000005000.cleaned.seg";
    assert!(swap(&mut s, 0, before.entries, key));
    commit(&mut s, "d", &[0], 10);
    let after = view(&s);
    assert_eq!((after.clean, after.entries.len()), (1, 2));
    assert_eq!(
        (
            after.clean_bytes,
            after.dirty_bytes,
            after.uncleanable_bytes
        ),
        (20, 10, 10)
    );
    assert_eq!(after.dirty_ratio, 10.0 / 30.0);
    assert_eq!(after.last_cleaned_ms, Some(42));
    assert_eq!(
        (after.next_horizon_ms, after.segments_with_horizon),
        (Some(5_000), 1)
    );
    assert!(
        !after.due(),
        "a third dirty, below the ratio, horizon ahead"
    );
    tick_to(&mut s, 5_000);
    assert!(view(&s).due(), "the tombstone's horizon has passed");
}

/// A pass's bound is on the dirty entries it takes: a clean section longer than the bound
/// does not hide what follows it.
#[test]
fn a_long_clean_section_does_not_hide_the_dirty_entries() {
    let mut s = state(1);
    let key = |i: u32| format!("v1/{i:013}-00000000-0000-0000-0000-000000000000.cleaned.seg");
    for i in 0..3 {
        commit(&mut s, &format!("r{i}"), &[0], 10);
        commit(&mut s, &format!("tail{i}"), &[0], 10);
        let p = s.partition(&tp(0)).unwrap();
        let run = p.index.iter().nth(i as usize).unwrap().clone();
        assert!(swap(&mut s, 0, vec![run], &key(i + 1)));
    }
    for d in ["d1", "d2", "d3"] {
        commit(&mut s, d, &[0], 10);
    }
    let p = s.partition(&tp(0)).unwrap();
    let stable = s.last_stable_offset(&tp(0)).unwrap();
    let log = LogToClean::of(p, s.objects(), stable, s.now_ms(), &clean_settings(0.1), 2);
    assert_eq!(log.clean, 3, "three cleaned segments lead");
    assert_eq!(
        log.entries.len(),
        5,
        "the clean section and two dirty entries"
    );
    assert!(log.due());
}

#[test]
fn a_cleaned_segment_with_tombstones_past_their_horizon_is_cleaned_again() {
    let mut s = state(1);
    commit(&mut s, "a", &[0], 10);
    commit(&mut s, "b", &[0], 10);
    let due = section(&s, &clean_settings(0.5)).unwrap();
    assert!(swap(
        &mut s,
        0,
        due.entries,
        "v1/0000000000001-x.h0000000005000.cleaned.seg"
    ));
    commit(&mut s, "c", &[0], 10);
    assert_eq!(
        section(&s, &clean_settings(0.9)),
        None,
        "nothing dirty, horizon ahead"
    );
    tick_to(&mut s, 5_000);
    let again = section(&s, &clean_settings(0.9)).expect("the horizon has passed");
    // The segment (0..2) and b (2..4, half the bytes: below 0.9) are cleaned again.
    assert_eq!((again.entries.len(), again.first_dirty), (2, Offset(2)));
}

#[test]
fn the_cleaner_stops_at_young_records_and_open_transactions() {
    let mut s = state(1);
    commit(&mut s, "a", &[0], 10);
    tick_to(&mut s, 2_000);
    commit(&mut s, "b", &[0], 10);
    commit(&mut s, "c", &[0], 10);
    let young = CleanSettings {
        min_lag_ms: 500,
        ..clean_settings(0.1)
    };
    let due = section(&s, &young).unwrap();
    assert_eq!(
        due.entries.len(),
        1,
        "b was written at 2,000, younger than the lag"
    );
}

#[test]
fn clean_settings_are_read_from_a_compacted_topics_configs() {
    let configs = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(CleanSettings::of(&configs(&[])), None);
    assert_eq!(
        CleanSettings::of(&configs(&[("cleanup.policy", "delete")])),
        None
    );
    let compact = CleanSettings::of(&configs(&[
        ("cleanup.policy", "compact,delete"),
        ("min.cleanable.dirty.ratio", "0.25"),
        ("delete.retention.ms", "60000"),
    ]))
    .unwrap();
    assert_eq!(compact.min_cleanable_ratio, 0.25);
    assert_eq!(compact.delete_retention_ms, 60_000);
    assert_eq!((compact.min_lag_ms, compact.max_lag_ms), (0, i64::MAX));
}
