//! Transactions in the state machine: markers, the last stable offset, aborted spans,
//! fencing, timeouts and offsets committed in a transaction.

use super::*;
use crate::ids::{Offset, ProducerEpoch, ProducerId, TopicPartition};
use crate::metadata::state::markers::Marker;

const TXN: &str = "txn-1";

fn init(state: &mut MetadataState, timeout_ms: i64) -> (ProducerId, ProducerEpoch) {
    match state.apply(InitTransactionalProducer {
        transactional_id: TXN.into(),
        timeout_ms,
        existing: None,
    }) {
        Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Ok(p))) => p,
        other => panic!("unexpected {other:?}"),
    }
}

fn add(state: &mut MetadataState, p: (ProducerId, ProducerEpoch), partition: i32) -> Outcome {
    state.apply(AddPartitionsToTxn {
        transactional_id: TXN.into(),
        producer_id: p.0,
        producer_epoch: p.1,
        partitions: vec![("t".into(), partition)],
    })
}

/// EndTxn (transaction version 1): the partitions marked.
fn end(
    state: &mut MetadataState,
    p: (ProducerId, ProducerEpoch),
    commit: bool,
) -> Result<Vec<TopicPartition>, TxnError> {
    end_v(state, p, commit, false).map(|e| e.marked)
}

fn end_v(
    state: &mut MetadataState,
    p: (ProducerId, ProducerEpoch),
    commit: bool,
    next_epoch: bool,
) -> Result<TxnEnd, TxnError> {
    match state.apply(EndTxn {
        transactional_id: TXN.into(),
        producer_id: p.0,
        producer_epoch: p.1,
        commit,
        next_epoch,
    }) {
        Outcome::Transaction(TransactionOutcome::EndTxn(result)) => result,
        other => panic!("unexpected {other:?}"),
    }
}

fn tick(state: &mut MetadataState, now_ms: i64) {
    state.apply(Tick { now_ms });
}

fn markers(state: &MetadataState, tp: &TopicPartition) -> Vec<(Offset, Marker)> {
    state
        .partition(tp)
        .expect("partition")
        .index
        .iter()
        .filter_map(|r| Some((r.base_offset, Marker::of(r)?)))
        .collect()
}

#[test]
fn a_committed_transaction_holds_the_stable_offset_until_its_marker() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = init(&mut state, 60_000);
    commit(
        &mut state,
        "plain",
        tp,
        vec![batch(0, 10, 2, NO_PRODUCER, -1)],
    );
    assert_eq!(
        add(&mut state, p, 0),
        Outcome::Transaction(TransactionOutcome::AddPartitionsToTxn(vec![Ok(())]))
    );
    let out = commit(&mut state, "a", tp, vec![batch(0, 10, 3, p, 0)]);
    assert_eq!(
        out,
        vec![BatchOutcome::Appended {
            base_offset: Offset(2)
        }]
    );
    // Others write after it: the stable offset stays at the transaction's first batch.
    commit(&mut state, "b", tp, vec![batch(0, 10, 1, NO_PRODUCER, -1)]);
    assert_eq!(state.last_stable_offset(&tp), Some(Offset(2)));
    assert_eq!(end(&mut state, p, true), Ok(vec![tp]));
    assert_eq!(state.last_stable_offset(&tp), Some(Offset(7)));
    assert_eq!(state.high_watermark("t", 0), Some(Offset(7)));
    let marks = markers(&state, &tp);
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0].0, Offset(6));
    assert_eq!(
        marks[0].1,
        Marker {
            producer_id: p.0,
            producer_epoch: p.1,
            commit: true
        }
    );
    assert!(
        state
            .transactions()
            .aborted_between(&tp, Offset(0), Offset(100))
            .is_empty()
    );
    // A retried commit succeeds again and writes nothing; an abort now is out of turn.
    assert_eq!(end(&mut state, p, true), Ok(vec![]));
    assert_eq!(state.high_watermark("t", 0), Some(Offset(7)));
    assert_eq!(end(&mut state, p, false), Err(TxnError::InvalidTxnState));
}

#[test]
fn an_aborted_transaction_leaves_its_span_for_read_committed_readers() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = init(&mut state, 60_000);
    add(&mut state, p, 0);
    commit(&mut state, "a", tp, vec![batch(0, 10, 3, p, 0)]);
    commit(&mut state, "b", tp, vec![batch(0, 10, 2, p, 3)]);
    assert_eq!(end(&mut state, p, false), Ok(vec![tp]));
    let spans = state
        .transactions()
        .aborted_between(&tp, Offset(0), Offset(6));
    assert_eq!(
        spans,
        vec![AbortedTxn {
            producer_id: p.0,
            first_offset: Offset(0),
            last_offset: Offset(5),
        }]
    );
    // Only spans overlapping the range come back.
    assert!(
        state
            .transactions()
            .aborted_between(&tp, Offset(6), Offset(9))
            .is_empty()
    );
    assert_eq!(state.last_stable_offset(&tp), Some(Offset(6)));
    // DeleteRecords past the marker forgets the span.
    state.apply(DeleteRecords {
        partitions: vec![(tp, 6)],
    });
    assert!(
        state
            .transactions()
            .aborted_between(&tp, Offset(0), Offset(9))
            .is_empty()
    );
}

#[test]
fn a_transactional_batch_outside_its_open_transaction_is_refused() {
    let mut state = MetadataState::default();
    let tp = TopicPartition {
        topic_id: topic(&mut state, 2),
        partition: 0,
    };
    let other = TopicPartition { partition: 1, ..tp };
    let p = init(&mut state, 60_000);
    // Nothing open yet.
    let out = commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 0)]);
    assert_eq!(out, vec![BatchOutcome::InvalidTxnState]);
    add(&mut state, p, 0);
    // Open, but not for this partition.
    let out = commit(&mut state, "b", other, vec![batch(0, 10, 1, p, 0)]);
    assert_eq!(out, vec![BatchOutcome::InvalidTxnState]);
    commit(&mut state, "c", tp, vec![batch(0, 10, 1, p, 0)]);
    end(&mut state, p, true).expect("ended");
    // A batch that arrives after the end (a late retry) is never indexed.
    let out = commit(&mut state, "d", tp, vec![batch(0, 10, 1, p, 1)]);
    assert_eq!(out, vec![BatchOutcome::InvalidTxnState]);
    assert_eq!(state.high_watermark("t", 0), Some(Offset(2)));
}

#[test]
fn a_new_instance_fences_the_old_and_aborts_what_it_left_open() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let old = init(&mut state, 60_000);
    add(&mut state, old, 0);
    commit(&mut state, "a", tp, vec![batch(0, 10, 2, old, 0)]);
    let new = init(&mut state, 60_000);
    assert_eq!(new.0, old.0);
    assert_eq!(new.1, ProducerEpoch(old.1.0 + 1));
    // The open transaction was aborted: its marker is at 2, and the span is kept.
    assert_eq!(markers(&state, &tp)[0].0, Offset(2));
    assert!(!markers(&state, &tp)[0].1.commit);
    assert_eq!(state.last_stable_offset(&tp), Some(Offset(3)));
    assert_eq!(
        state
            .transactions()
            .aborted_between(&tp, Offset(0), Offset(3))
            .len(),
        1
    );
    // The zombie is fenced everywhere.
    assert_eq!(end(&mut state, old, true), Err(TxnError::ProducerFenced));
    assert_eq!(
        add(&mut state, old, 0),
        Outcome::Transaction(TransactionOutcome::AddPartitionsToTxn(vec![Err(
            TxnError::ProducerFenced
        )]))
    );
    let out = commit(&mut state, "late", tp, vec![batch(0, 10, 1, old, 2)]);
    assert_eq!(out, vec![BatchOutcome::InvalidProducerEpoch]);
    // The new instance starts its sequences again.
    add(&mut state, new, 0);
    let out = commit(&mut state, "b", tp, vec![batch(0, 10, 1, new, 0)]);
    assert_eq!(
        out,
        vec![BatchOutcome::Appended {
            base_offset: Offset(3)
        }]
    );
    // KIP-360: a retry of the last init presenting the epoch it replaced gets the same answer.
    assert_eq!(
        state.apply(InitTransactionalProducer {
            transactional_id: TXN.into(),
            timeout_ms: 60_000,
            existing: Some((new.0, ProducerEpoch(new.1.0 - 1))),
        }),
        Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Err(
            TxnError::ProducerFenced
        ))),
        "not while a transaction is open"
    );
    end(&mut state, new, true).expect("ended");
    let newer = state.apply(InitTransactionalProducer {
        transactional_id: TXN.into(),
        timeout_ms: 60_000,
        existing: Some(new),
    });
    assert_eq!(
        newer,
        Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Ok((
            new.0,
            ProducerEpoch(new.1.0 + 1)
        ))))
    );
    let retried = state.apply(InitTransactionalProducer {
        transactional_id: TXN.into(),
        timeout_ms: 60_000,
        existing: Some(new),
    });
    assert_eq!(retried, newer);
}

#[test]
fn a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced() {
    let mut state = MetadataState::default();
    tick(&mut state, 1_000_000);
    let tp = partition_0(&mut state);
    let p = init(&mut state, 5_000);
    add(&mut state, p, 0);
    commit(&mut state, "a", tp, vec![batch(0, 10, 2, p, 0)]);
    let mut now = 1_000_000;
    while now < 1_020_000 {
        now += 1_000;
        tick(&mut state, now);
    }
    assert_eq!(state.transactions().timed_out_total(), 1);
    assert_eq!(state.last_stable_offset(&tp), Some(Offset(3)));
    assert_eq!(
        state.transactions().get(TXN).map(|t| t.status),
        Some(TxnStatus::CompleteAbort)
    );
    assert_eq!(end(&mut state, p, true), Err(TxnError::ProducerFenced));
}

#[test]
fn what_was_stamped_before_the_first_tick_counts_from_it() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = init(&mut state, 60_000);
    add(&mut state, p, 0);
    commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 0)]);
    // The clock starts long after time 0: the transaction is neither idle for a week nor
    // past its timeout.
    tick(&mut state, 1_800_000_000_000);
    tick(&mut state, 1_800_000_010_000);
    assert_eq!(
        state.transactions().get(TXN).map(|t| t.status),
        Some(TxnStatus::Ongoing)
    );
    assert_eq!(end(&mut state, p, true), Ok(vec![tp]));
}

#[test]
fn offsets_committed_in_a_transaction_appear_only_when_it_commits() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = init(&mut state, 60_000);
    let offsets = |o: i64| {
        vec![(
            "t".to_string(),
            0,
            GroupOffset {
                offset: Offset(o),
                leader_epoch: -1,
                metadata: None,
                commit_timestamp: 0,
            },
        )]
    };
    let txn_commit = |state: &mut MetadataState, o: i64| {
        state.apply(TxnOffsetCommit {
            transactional_id: TXN.into(),
            producer_id: p.0,
            producer_epoch: p.1,
            group: "g".into(),
            offsets: offsets(o),
        })
    };
    // Without AddOffsetsToTxn first, the commit does not fit the transaction.
    assert_eq!(
        txn_commit(&mut state, 5),
        Outcome::Transaction(TransactionOutcome::TxnOffsetCommit(vec![Err(
            TxnError::InvalidTxnState
        )]))
    );
    let added = state.apply(AddOffsetsToTxn {
        transactional_id: TXN.into(),
        producer_id: p.0,
        producer_epoch: p.1,
        group: "g".into(),
    });
    assert_eq!(
        added,
        Outcome::Transaction(TransactionOutcome::AddOffsetsToTxn(Ok(())))
    );
    assert_eq!(
        txn_commit(&mut state, 5),
        Outcome::Transaction(TransactionOutcome::TxnOffsetCommit(vec![Ok(())]))
    );
    assert_eq!(state.group_offset("g", "t", 0), None);
    end(&mut state, p, false).expect("ended");
    assert_eq!(state.group_offset("g", "t", 0), None, "aborted: dropped");
    state.apply(AddOffsetsToTxn {
        transactional_id: TXN.into(),
        producer_id: p.0,
        producer_epoch: p.1,
        group: "g".into(),
    });
    txn_commit(&mut state, 7);
    // An offsets-only transaction marks no partition.
    assert_eq!(end(&mut state, p, true), Ok(vec![]));
    assert_eq!(
        state.group_offset("g", "t", 0).map(|o| o.offset),
        Some(Offset(7))
    );
    assert!(tp.partition == 0);
}

#[test]
fn bad_requests_are_refused_and_nothing_changes() {
    let mut state = MetadataState::default();
    partition_0(&mut state);
    for (id, timeout) in [
        ("", 1000),
        ("x", 0),
        ("x", i64::MAX),
        (&"y".repeat(2000)[..], 1000),
    ] {
        let before = state.clone();
        let out = state.apply(InitTransactionalProducer {
            transactional_id: id.into(),
            timeout_ms: timeout,
            existing: None,
        });
        assert!(
            matches!(
                out,
                Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Err(_)))
            ),
            "{out:?}"
        );
        assert_eq!(state.transactions(), before.transactions());
    }
    let p = init(&mut state, 60_000);
    // An unknown partition fails the request; the others are not attempted.
    let out = state.apply(AddPartitionsToTxn {
        transactional_id: TXN.into(),
        producer_id: p.0,
        producer_epoch: p.1,
        partitions: vec![("t".into(), 0), ("t".into(), 9), ("nope".into(), 0)],
    });
    assert_eq!(
        out,
        Outcome::Transaction(TransactionOutcome::AddPartitionsToTxn(vec![
            Err(TxnError::OperationNotAttempted),
            Err(TxnError::UnknownTopicOrPartition),
            Err(TxnError::UnknownTopicOrPartition),
        ]))
    );
    assert_eq!(
        state.transactions().get(TXN).map(|t| t.status),
        Some(TxnStatus::Empty)
    );
    // Another producer id for this transactional id; an unknown id.
    assert_eq!(
        end(&mut state, (ProducerId(p.0.0 + 1), p.1), true),
        Err(TxnError::InvalidProducerIdMapping)
    );
    assert_eq!(end(&mut state, p, true), Err(TxnError::InvalidTxnState));
}

#[test]
fn replicas_agree_and_a_snapshot_carries_the_transactions() {
    let mut a = MetadataState::default();
    let tp = partition_0(&mut a);
    let mut b = a.clone();
    for state in [&mut a, &mut b] {
        let p = init(state, 60_000);
        add(state, p, 0);
        commit(state, "x", tp, vec![batch(0, 10, 2, p, 0)]);
        end(state, p, false).expect("ended");
        add(state, p, 0);
        commit(state, "y", tp, vec![batch(0, 10, 1, p, 2)]);
    }
    assert_eq!(a, b);
    let restored: MetadataState = postcard::from_bytes(&postcard::to_stdvec(&a).unwrap()).unwrap();
    assert_eq!(restored, a);
    assert_eq!(restored.last_stable_offset(&tp), Some(Offset(3)));
}

#[test]
fn under_transaction_version_2_every_end_moves_the_epoch_on() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let p = init(&mut state, 60_000);
    add(&mut state, p, 0);
    commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 0)]);
    let ended = end_v(&mut state, p, true, true).expect("committed");
    assert_eq!(ended.marked, vec![tp]);
    let next = (ended.producer_id, ended.producer_epoch);
    assert_eq!(next, (p.0, ProducerEpoch(p.1.0 + 1)));
    // A retry with the epoch the end replaced gets the same answer, and writes nothing.
    let hw = state.high_watermark("t", 0);
    let retried = TxnEnd {
        marked: Vec::new(),
        ..ended.clone()
    };
    assert_eq!(end_v(&mut state, p, true, true), Ok(retried));
    assert_eq!(state.high_watermark("t", 0), hw);
    // A late batch of the ended transaction can never join the next one: its epoch is old.
    add(&mut state, next, 0);
    let out = commit(&mut state, "late", tp, vec![batch(0, 10, 1, p, 1)]);
    assert_eq!(out, vec![BatchOutcome::InvalidProducerEpoch]);
    // The next transaction starts its sequences again, at the new epoch.
    let out = commit(&mut state, "b", tp, vec![batch(0, 10, 1, next, 0)]);
    assert!(matches!(out[0], BatchOutcome::Appended { .. }), "{out:?}");
    // An abort with nothing open only moves the epoch; a commit with nothing open is refused.
    let aborted = end_v(&mut state, next, false, true).expect("aborted");
    let after = (aborted.producer_id, aborted.producer_epoch);
    let empty = end_v(&mut state, after, false, true).expect("an empty abort");
    assert!(empty.marked.is_empty());
    assert_eq!(empty.producer_epoch, ProducerEpoch(after.1.0 + 1));
    let last = (empty.producer_id, empty.producer_epoch);
    assert_eq!(
        end_v(&mut state, last, true, true),
        Err(TxnError::InvalidTxnState)
    );
    // The zombie of an older epoch is fenced.
    assert_eq!(
        end_v(&mut state, next, true, true),
        Err(TxnError::ProducerFenced)
    );
}

#[test]
fn an_exhausted_epoch_moves_the_id_to_a_new_producer_and_fences_the_old() {
    let mut state = MetadataState::default();
    let tp = partition_0(&mut state);
    let mut p = init(&mut state, 60_000);
    while p.1.0 < i16::MAX - 1 {
        p = init(&mut state, 60_000);
    }
    let fresh = init(&mut state, 60_000);
    assert_ne!(fresh.0, p.0);
    assert_eq!(fresh.1, ProducerEpoch(0));
    // The old id's batches are refused, not taken for a plain idempotent producer's.
    let out = commit(&mut state, "zombie", tp, vec![batch(0, 10, 1, p, 0)]);
    assert_eq!(out, vec![BatchOutcome::InvalidProducerEpoch]);
    // A retry presenting what the rotation replaced gets the new id again.
    let retried = state.apply(InitTransactionalProducer {
        transactional_id: TXN.into(),
        timeout_ms: 60_000,
        existing: Some(p),
    });
    assert_eq!(
        retried,
        Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Ok(fresh)))
    );
}

#[test]
fn a_zombie_fenced_by_a_timeout_is_never_taken_for_a_retry() {
    let mut state = MetadataState::default();
    tick(&mut state, 1_000_000);
    let tp = partition_0(&mut state);
    let p = init(&mut state, 5_000);
    add(&mut state, p, 0);
    commit(&mut state, "a", tp, vec![batch(0, 10, 1, p, 0)]);
    let mut now = 1_000_000;
    while state.transactions().timed_out_total() == 0 {
        now += 1_000;
        tick(&mut state, now);
    }
    assert_eq!(
        end_v(&mut state, p, false, true),
        Err(TxnError::ProducerFenced)
    );
    let retry = state.apply(InitTransactionalProducer {
        transactional_id: TXN.into(),
        timeout_ms: 5_000,
        existing: Some(p),
    });
    assert_eq!(
        retry,
        Outcome::Transaction(TransactionOutcome::InitTransactionalProducer(Err(
            TxnError::ProducerFenced
        )))
    );
}
