//! Share groups (KIP-932) under faults: three nodes (voters and agents) behind haproxy, one
//! share group of three confluent-kafka ShareConsumers (librdkafka's share consumer, a client
//! floe's own tests did not write) accepting every record, while agents are killed and
//! restarted and paused past their lease, and a producer writes on. Every client prints what
//! it did (`tests/clients/share_chaos.py`); the test judges the whole history:
//!
//! - every acknowledged record is delivered and accepted (its acceptance committed, as the
//!   client's acknowledgement commit callback reports each batch: `commit_sync`'s answer is one
//!   per partition and can hide a batch that failed);
//! - no record is accepted twice, and none is delivered again after its acceptance was
//!   committed (a later delivery would carry a higher delivery count);
//! - a record's deliveries count up by one from 1, whichever consumers got them.
//!
//! Redeliveries (records whose consumer's commit was lost to a fault, or whose lock ran out
//! while an agent was down) are allowed and counted.

#![allow(clippy::disallowed_methods)]

mod support;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::haproxy::behind_haproxy;
use support::temp_dir;

const TOPIC: &str = "share-chaos";
const GROUP: &str = "share-chaos-group";
const SCRIPT: &str = "tests/clients/share_chaos.py";
const RECORDS_BEFORE: u32 = 3_000;
const RECORDS_DURING: u32 = 3_000;
const CONSUMERS: usize = 3;

fn python(args: &[&str]) -> Command {
    let mut command = Command::new("python3");
    command
        .arg(SCRIPT)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn lines(child: Child, what: &str) -> Vec<serde_json::Value> {
    let output = child.wait_with_output().expect("client output");
    assert!(
        output.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {l}: {e}")))
        .collect()
}

#[derive(Default)]
struct Record {
    /// (consumer, delivery count) of each delivery.
    deliveries: Vec<(usize, i64)>,
    /// (consumer, delivery count) of each delivery whose acceptance was committed.
    accepted: Vec<(usize, i64)>,
}

#[test]
fn share_consumers_lose_nothing_and_accept_nothing_twice_under_kills_and_pauses() {
    let dir = temp_dir();
    let flags: Vec<String> = [
        // Records a member took while its agent died come back after 5 s, not 30 s.
        "--group-share-record-lock-duration",
        "5s",
        "--group-share-min-record-lock-duration",
        "1s",
        "--group-share-session-timeout",
        "45s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (mut nodes, balancer, _haproxy) = behind_haproxy(dir.path(), 3, &flags, |_, b| {
        vec!["--advertised-addr".into(), b.to_string()]
    });
    let bootstrap = balancer.to_string();
    let stop_file = dir.path().join("stop");
    let stop = stop_file.to_str().expect("path");

    let before = python(&[
        "produce",
        &bootstrap,
        TOPIC,
        &RECORDS_BEFORE.to_string(),
        "0",
    ])
    .spawn()
    .expect("python3 with confluent-kafka (the README test command installs it)");
    let mut produced = lines(before, "producer");
    // The group reads from the start of the topic.
    support::run_client(
        "python3",
        &[
            SCRIPT,
            "config",
            &bootstrap,
            GROUP,
            "share.auto.offset.reset=earliest",
        ],
    );
    let consumers: Vec<Child> = (0..CONSUMERS)
        .map(|i| {
            let name = format!("member-{i}");
            python(&["consume", &bootstrap, TOPIC, GROUP, &name, stop])
                .spawn()
                .expect("consumer")
        })
        .collect();
    let during = python(&[
        "produce",
        &bootstrap,
        TOPIC,
        &RECORDS_DURING.to_string(),
        &RECORDS_BEFORE.to_string(),
    ])
    .spawn()
    .expect("producer");

    // Faults: each node killed and restarted, then each paused past its lease (4 s).
    std::thread::sleep(Duration::from_secs(3));
    for node in &mut nodes {
        node.kill();
        std::thread::sleep(Duration::from_secs(3));
        node.restart();
        std::thread::sleep(Duration::from_secs(4));
    }
    for node in &nodes {
        node.pause();
        std::thread::sleep(Duration::from_secs(6));
        node.resume();
        std::thread::sleep(Duration::from_secs(4));
    }
    produced.extend(lines(during, "producer"));
    std::fs::write(&stop_file, b"").expect("stop file");
    let histories: Vec<Vec<serde_json::Value>> = consumers
        .into_iter()
        .enumerate()
        .map(|(i, c)| lines(c, &format!("consumer {i}")))
        .collect();

    // Each consumer's history beside the nodes' logs (kept with FLOE_TEST_KEEP).
    for (i, history) in histories.iter().enumerate() {
        let lines: Vec<String> = history.iter().map(|l| l.to_string()).collect();
        let path = dir.path().join(format!("consumer-{i}.jsonl"));
        std::fs::write(path, lines.join("\n") + "\n").expect("history file");
    }

    // Judge.
    let mut acked: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for line in &produced {
        if let Some(a) = line.get("acked") {
            acked.insert(
                (a[0].as_i64().unwrap(), a[1].as_i64().unwrap()),
                a[2].as_i64().unwrap(),
            );
        }
    }
    assert!(
        acked.len() as u32 >= RECORDS_BEFORE,
        "the producer before the faults had every record acknowledged"
    );
    let mut records: BTreeMap<(i64, i64), Record> = BTreeMap::new();
    let mut errors = 0;
    let mut failed_acks = 0;
    let mut misreported = 0;
    for (consumer, history) in histories.iter().enumerate() {
        // This consumer's latest delivery count of each record (what its commit accepts).
        let mut latest: BTreeMap<(i64, i64), i64> = BTreeMap::new();
        // Records commit_sync answered as committed, and those whose batch failed.
        let (mut reported, mut failed) = (BTreeSet::new(), BTreeSet::new());
        let offsets = |line: &serde_json::Value| -> Vec<(i64, i64)> {
            let partition = line[0].as_i64().unwrap();
            let offsets = line[1].as_array().unwrap().iter();
            offsets.map(|o| (partition, o.as_i64().unwrap())).collect()
        };
        for line in history {
            if let Some(d) = line.get("delivered") {
                let key = (d[0].as_i64().unwrap(), d[1].as_i64().unwrap());
                let count = d[2].as_i64().unwrap();
                latest.insert(key, count);
                records
                    .entry(key)
                    .or_default()
                    .deliveries
                    .push((consumer, count));
            } else if let Some(c) = line.get("commit") {
                if c[2].as_bool().unwrap() {
                    reported.extend(offsets(c));
                }
            } else if let Some(a) = line.get("acks") {
                let ok = a[2].as_bool().unwrap();
                for key in offsets(a) {
                    if ok {
                        let count = latest.get(&key).copied().unwrap_or(-1);
                        records
                            .entry(key)
                            .or_default()
                            .accepted
                            .push((consumer, count));
                    } else {
                        failed_acks += 1;
                        failed.insert(key);
                    }
                }
            } else if line.get("error").is_some() {
                errors += 1;
            }
        }
        misreported += failed.intersection(&reported).count();
    }
    let mut anomalies = Vec::new();
    for (key, number) in &acked {
        match records.get(key) {
            None => anomalies.push(format!("record {number} at {key:?} never delivered")),
            Some(r) if r.accepted.is_empty() => {
                anomalies.push(format!("record {number} at {key:?} never accepted"))
            }
            Some(_) => {}
        }
    }
    let mut redelivered = 0;
    for (key, record) in &records {
        if record.accepted.len() > 1 {
            anomalies.push(format!(
                "{key:?} accepted {} times (by {:?})",
                record.accepted.len(),
                record.accepted
            ));
        }
        let mut counts: Vec<i64> = record.deliveries.iter().map(|d| d.1).collect();
        counts.sort();
        if counts != (1..=counts.len() as i64).collect::<Vec<_>>() {
            anomalies.push(format!(
                "{key:?} delivered with counts {:?}",
                record.deliveries
            ));
        }
        // Nothing is delivered after its acceptance was committed: the accepted delivery is
        // the last one.
        if let Some((consumer, count)) = record.accepted.first()
            && *count != counts.last().copied().unwrap_or(0)
        {
            anomalies.push(format!(
                "{key:?} delivered again after consumer {consumer} accepted delivery {count}: \
                 {:?}",
                record.deliveries
            ));
        }
        redelivered += record.deliveries.len().saturating_sub(1);
    }
    eprintln!(
        "{} records acknowledged to the producer, {} delivered, {redelivered} redeliveries, \
         {failed_acks} records in failed acknowledgement batches ({misreported} of them \
         answered as committed by commit_sync), {errors} client errors",
        acked.len(),
        records.len()
    );
    assert!(anomalies.is_empty(), "anomalies: {anomalies:#?}");
}
