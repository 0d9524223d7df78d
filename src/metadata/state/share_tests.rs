use super::*;

const RULES: ShareRules = ShareRules {
    delivery_count_limit: 3,
    record_locks_max: 100,
};

fn ack(first: i64, last: i64, ty: AckType) -> AckBatch {
    AckBatch {
        first,
        last,
        types: vec![ty],
    }
}

fn read(from: i64, batches: &[(i64, i64)]) -> Read {
    Read {
        from,
        to: batches.last().map_or(from - 1, |b| b.1),
        batches: batches.to_vec(),
    }
}

fn acquired(first: i64, last: i64, deliveries: u16) -> Acquired {
    Acquired {
        first,
        last,
        deliveries,
    }
}

#[test]
fn new_records_are_acquired_a_whole_batch_at_a_time() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 5;
    let got = p.acquire(
        "a",
        &read(0, &[(0, 3), (4, 9), (10, 12)]),
        &mut budget,
        1_000,
    );
    // The budget of 5 ends inside the second batch, which is taken whole.
    assert_eq!(got, vec![acquired(0, 9, 1)]);
    assert_eq!(budget, 0);
    assert_eq!((p.start, p.end), (0, 10));
    assert_eq!(p.next_fetch_offset(), 10);
}

#[test]
fn a_record_goes_to_one_member_at_a_time() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 9)]), &mut budget, 1_000);
    let mut budget = 100;
    assert!(
        p.acquire("b", &read(0, &[(0, 9)]), &mut budget, 1_000)
            .is_empty()
    );
    // Another member cannot acknowledge them.
    assert_eq!(
        p.acknowledge("b", &[ack(0, 9, AckType::Accept)]),
        Err(AckError::InvalidRecordState)
    );
}

#[test]
fn accepted_records_move_the_start_and_leave_the_window() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 9)]), &mut budget, 1_000);
    p.acknowledge("a", &[ack(0, 4, AckType::Accept)]).unwrap();
    assert_eq!((p.start, p.end), (5, 10));
    p.acknowledge("a", &[ack(5, 9, AckType::Reject)]).unwrap();
    assert_eq!((p.start, p.end), (10, 10));
    assert_eq!(p.spans().count(), 0);
    // Already done with: acknowledging again below the start is refused, as Kafka refuses
    // a batch it no longer holds.
    assert_eq!(
        p.acknowledge("a", &[ack(0, 9, AckType::Accept)]),
        Err(AckError::InvalidRecordState)
    );
}

#[test]
fn a_late_acknowledgement_after_another_member_finished_the_records_is_refused() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 9)]), &mut budget, 1_000);
    // a's lock ends; b takes the records (second delivery) and accepts them.
    p.expire_locks(1_000);
    let mut budget = 100;
    assert_eq!(
        p.acquire("b", &read(0, &[(0, 9)]), &mut budget, 2_000),
        vec![acquired(0, 9, 2)]
    );
    p.acknowledge("b", &[ack(0, 9, AckType::Accept)]).unwrap();
    assert_eq!((p.start, p.end), (10, 10));
    // a's acceptance of its first delivery comes late: not a's any more, refused.
    assert_eq!(
        p.acknowledge("a", &[ack(0, 9, AckType::Accept)]),
        Err(AckError::InvalidRecordState)
    );
}

#[test]
fn released_records_are_delivered_again_until_the_limit_archives_them() {
    let mut p = SharePartition::new(0, RULES);
    for delivery in 1..=3u16 {
        let mut budget = 100;
        let member = format!("m{delivery}");
        let got = p.acquire(&member, &read(0, &[(0, 4)]), &mut budget, 1_000);
        assert_eq!(got, vec![acquired(0, 4, delivery)]);
        p.acknowledge(&member, &[ack(0, 4, AckType::Release)])
            .unwrap();
    }
    // The third release reached the limit of 3: archived, and the start moves past.
    assert_eq!((p.start, p.end), (5, 5));
}

#[test]
fn per_offset_acknowledgements_split_a_batch() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 3)]), &mut budget, 1_000);
    let types = vec![
        AckType::Accept,
        AckType::Release,
        AckType::Accept,
        AckType::Release,
    ];
    p.acknowledge(
        "a",
        &[AckBatch {
            first: 0,
            last: 3,
            types,
        }],
    )
    .unwrap();
    assert_eq!(p.start, 1);
    assert_eq!(p.next_fetch_offset(), 1);
    let mut budget = 100;
    let got = p.acquire("b", &read(1, &[(0, 3)]), &mut budget, 1_000);
    assert_eq!(got, vec![acquired(1, 1, 2), acquired(3, 3, 2)]);
}

#[test]
fn acknowledgements_of_a_partition_apply_all_or_none() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 9)]), &mut budget, 1_000);
    let before = p.clone();
    // The second batch is past what was handed out.
    let refused = p.acknowledge(
        "a",
        &[ack(0, 4, AckType::Accept), ack(5, 20, AckType::Accept)],
    );
    assert_eq!(refused, Err(AckError::InvalidRequest));
    assert_eq!(p, before);
    // Out of order.
    let refused = p.acknowledge(
        "a",
        &[ack(5, 9, AckType::Accept), ack(0, 4, AckType::Accept)],
    );
    assert_eq!(refused, Err(AckError::InvalidRequest));
    assert_eq!(p, before);
}

#[test]
fn an_expired_lock_gives_records_back() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 9)]), &mut budget, 1_000);
    assert!(!p.expire_locks(999));
    assert!(p.expire_locks(1_000));
    assert_eq!(
        p.acknowledge("a", &[ack(0, 9, AckType::Accept)]),
        Err(AckError::InvalidRecordState)
    );
    let mut budget = 100;
    assert_eq!(
        p.acquire("b", &read(0, &[(0, 9)]), &mut budget, 2_000),
        vec![acquired(0, 9, 2)]
    );
}

#[test]
fn a_member_gone_gives_back_only_its_own_records() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 4)]), &mut budget, 1_000);
    p.acquire("b", &read(5, &[(5, 9)]), &mut budget, 1_000);
    assert!(p.release_member("a"));
    assert_eq!(p.next_fetch_offset(), 0);
    assert_eq!(p.acknowledge("b", &[ack(5, 9, AckType::Accept)]), Ok(()));
}

#[test]
fn the_window_stops_at_its_record_limit() {
    let rules = ShareRules {
        delivery_count_limit: 5,
        record_locks_max: 10,
    };
    let mut p = SharePartition::new(0, rules);
    let mut budget = 1_000;
    let got = p.acquire(
        "a",
        &read(0, &[(0, 5), (6, 11), (12, 20)]),
        &mut budget,
        1_000,
    );
    // The second batch starts inside the limit and is taken whole; the third is not.
    assert_eq!(got, vec![acquired(0, 11, 1)]);
    assert!(!p.can_acquire());
    p.acknowledge("a", &[ack(0, 5, AckType::Accept)]).unwrap();
    assert!(p.can_acquire());
}

#[test]
fn offsets_the_log_no_longer_holds_are_archived() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    // Offsets 3 to 6 were compacted away before the first read.
    let got = p.acquire("a", &read(0, &[(0, 2), (7, 9)]), &mut budget, 1_000);
    assert_eq!(got, vec![acquired(0, 2, 1), acquired(7, 9, 1)]);
    p.acknowledge(
        "a",
        &[ack(0, 2, AckType::Accept), ack(7, 9, AckType::Accept)],
    )
    .unwrap();
    assert_eq!((p.start, p.end), (10, 10));
}

#[test]
fn the_log_start_moving_on_ends_what_was_below_it() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    p.acquire("a", &read(0, &[(0, 9)]), &mut budget, 1_000);
    p.advance_to_log_start(5);
    assert_eq!((p.start, p.end), (5, 10));
    // Acknowledging records below the start is skipped; the rest still apply.
    assert_eq!(p.acknowledge("a", &[ack(0, 9, AckType::Accept)]), Ok(()));
    assert_eq!((p.start, p.end), (10, 10));
}

#[test]
fn spans_stay_merged_and_cover_the_window() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    let batches = [(0, 0), (1, 1), (2, 2), (3, 3)];
    p.acquire("a", &read(0, &batches), &mut budget, 1_000);
    assert_eq!(p.spans().count(), 1, "one member, one lock: one span");
    p.acknowledge("a", &[ack(1, 1, AckType::Accept)]).unwrap();
    let spans: Vec<(i64, i64)> = p.spans().map(|(f, s)| (f, s.last)).collect();
    assert_eq!(spans, vec![(0, 0), (1, 1), (2, 3)]);
}

#[test]
fn markers_after_the_last_record_are_passed_over() {
    let mut p = SharePartition::new(0, RULES);
    let mut budget = 100;
    // Offsets 0-4 are records, 5 a transaction marker.
    let read = Read {
        from: 0,
        to: 5,
        batches: vec![(0, 4)],
    };
    assert_eq!(
        p.acquire("a", &read, &mut budget, 1_000),
        vec![acquired(0, 4, 1)]
    );
    assert_eq!(p.end, 6);
    p.acknowledge("a", &[ack(0, 4, AckType::Accept)]).unwrap();
    assert_eq!((p.start, p.end), (6, 6));
}
