//! The admin command line (`floe topic|group|quota|cluster`) against a running broker: every
//! subcommand, in JSON so the answers can be checked, and a group offset reset that a
//! consumer then follows.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::Message;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};
use support::kafka::{flush, produce, producer};
use support::{Floe, temp_dir, wait_for};

const TOPIC: &str = "cli-orders";
const GROUP: &str = "cli-group";

/// `floe <args> -o json` against `floe`: its JSON answer, or its error text.
fn floe_cli(floe: &Floe, args: &[&str]) -> Result<Value, String> {
    let output = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(args)
        .args([
            "-b",
            &floe.bootstrap(),
            "--admin-addr",
            &floe.admin.to_string(),
        ])
        .args(["-o", "json"])
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run floe");
    if output.status.success() {
        let text = String::from_utf8_lossy(&output.stdout);
        serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
    } else {
        Err(String::from_utf8_lossy(&output.stderr).to_string())
    }
}

fn ok(floe: &Floe, args: &[&str]) -> Value {
    floe_cli(floe, args).unwrap_or_else(|e| panic!("floe {args:?}: {e}"))
}

/// The group's committed offset per partition of the topic, as `group describe` shows them.
fn committed(floe: &Floe) -> BTreeMap<i64, i64> {
    ok(floe, &["group", "describe", GROUP])["offsets"]
        .as_array()
        .expect("offsets")
        .iter()
        .map(|o| {
            (
                o["partition"].as_i64().expect("partition"),
                o["current_offset"].as_i64().expect("offset"),
            )
        })
        .collect()
}

/// A member of the group that reads until it has `count` records: what it read, per
/// partition, and the consumer itself (still a member until dropped).
fn read_as_member(floe: &Floe, count: usize) -> (BTreeMap<i32, Vec<i64>>, BaseConsumer) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", floe.bootstrap())
        .set("group.id", GROUP)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    consumer.subscribe(&[TOPIC]).expect("subscribe");
    let mut read: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while read.values().map(Vec::len).sum::<usize>() < count {
        assert!(Instant::now() < deadline, "read only {read:?}");
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            read.entry(m.partition()).or_default().push(m.offset());
        }
    }
    consumer
        .commit_consumer_state(CommitMode::Sync)
        .expect("commit");
    (read, consumer)
}

#[test]
fn every_admin_subcommand_against_a_running_broker() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("node"),
        &["--group-initial-rebalance-delay", "0s"],
    );

    // Topics.
    let created = ok(
        &floe,
        &[
            "topic",
            "create",
            TOPIC,
            "-p",
            "3",
            "-c",
            "retention.ms=3600000",
        ],
    );
    assert_eq!(created[0]["partitions"], 3);
    let listed = ok(&floe, &["topic", "list"]);
    assert!(
        listed
            .as_array()
            .expect("list")
            .iter()
            .any(|t| t["topic"] == TOPIC)
    );
    let again = floe_cli(&floe, &["topic", "create", TOPIC]).expect_err("a second create");
    assert!(again.contains("TopicAlreadyExists"), "{again}");
    let altered = ok(
        &floe,
        &[
            "topic",
            "alter-config",
            TOPIC,
            "--set",
            "cleanup.policy=delete",
            "--delete",
            "retention.ms",
        ],
    );
    let configs: Vec<&Value> = altered.as_array().expect("configs").iter().collect();
    assert_eq!(configs.len(), 1, "{altered}");
    assert_eq!(configs[0]["name"], "cleanup.policy");

    // Ten records per partition, read and committed by a member of the group.
    let (p, acks) = producer(&floe.bootstrap(), "none");
    produce(&p, TOPIC, 3, 30, "cli");
    flush(&p);
    assert!(acks.errors.lock().expect("errors").is_empty());
    let described = ok(&floe, &["topic", "describe", TOPIC]);
    let partitions = described["partitions"].as_array().expect("partitions");
    assert_eq!(partitions.len(), 3);
    assert!(
        partitions.iter().all(|p| p["high_watermark"] == 10),
        "{described}"
    );
    assert_eq!(described["configs"][0]["name"], "cleanup.policy");

    let (_, member) = read_as_member(&floe, 30);
    let groups = ok(&floe, &["group", "list"]);
    assert!(
        groups
            .as_array()
            .expect("groups")
            .iter()
            .any(|g| g["group"] == GROUP)
    );
    let group = ok(&floe, &["group", "describe", GROUP]);
    assert_eq!(group["group"][0]["state"], "Stable", "{group}");
    assert_eq!(group["members"].as_array().map(Vec::len), Some(1));
    assert!(
        group["offsets"]
            .as_array()
            .expect("offsets")
            .iter()
            .all(|o| o["current_offset"] == 10 && o["lag"] == 0),
        "{group}"
    );
    // Kafka refuses to move the offsets of a group with members; so does floe's tool.
    let refused = floe_cli(
        &floe,
        &[
            "group",
            "reset-offsets",
            GROUP,
            "--topic",
            TOPIC,
            "--to-earliest",
            "--execute",
        ],
    )
    .expect_err("reset of an active group");
    assert!(refused.contains("no member"), "{refused}");
    drop(member);

    // A dry run changes nothing; every target is planned within the log.
    wait_for("the group to empty", Duration::from_secs(30), || {
        (ok(&floe, &["group", "describe", GROUP])["group"][0]["state"] == "Empty").then_some(())
    });
    let plan = |target: &[&str]| {
        let mut args = vec!["group", "reset-offsets", GROUP, "--topic", TOPIC];
        args.extend_from_slice(target);
        ok(&floe, &args)
            .as_array()
            .expect("plan")
            .iter()
            .map(|r| r["new_offset"].as_i64().expect("new offset"))
            .collect::<Vec<_>>()
    };
    assert_eq!(plan(&["--to-earliest"]), [0, 0, 0]);
    assert_eq!(plan(&["--to-latest"]), [10, 10, 10]);
    assert_eq!(plan(&["--shift-by", "-3"]), [7, 7, 7]);
    assert_eq!(plan(&["--to-offset", "99"]), [10, 10, 10]);
    assert_eq!(plan(&["--to-timestamp", "0"]), [0, 0, 0]);
    assert_eq!(
        committed(&floe),
        BTreeMap::from([(0, 10), (1, 10), (2, 10)])
    );

    // Executed: the group's next member starts where the reset put it.
    let executed = ok(
        &floe,
        &[
            "group",
            "reset-offsets",
            GROUP,
            "--topic",
            &format!("{TOPIC}:0,1"),
            "--to-offset",
            "4",
            "--execute",
        ],
    );
    assert_eq!(executed.as_array().map(Vec::len), Some(2));
    assert_eq!(committed(&floe), BTreeMap::from([(0, 4), (1, 4), (2, 10)]));
    let (read, member) = read_as_member(&floe, 12);
    assert_eq!(
        read,
        BTreeMap::from([(0, (4..10).collect()), (1, (4..10).collect())]),
        "the member follows the reset offsets"
    );
    drop(member);

    // Cluster views.
    let info = ok(&floe, &["cluster", "info"]);
    assert_eq!(info["brokers"].as_array().map(Vec::len), Some(1));
    assert_eq!(info["cluster"][0]["topics"], 1);
    let quorum = ok(&floe, &["cluster", "quorum"]);
    assert_eq!(quorum[0]["node_state"], "Leader", "{quorum}");

    // Deleting: the group once it has no member, then the topic.
    wait_for("the group to be deleted", Duration::from_secs(30), || {
        floe_cli(&floe, &["group", "delete", GROUP]).ok()
    });
    let groups = ok(&floe, &["group", "list"]);
    assert!(
        !groups
            .as_array()
            .expect("groups")
            .iter()
            .any(|g| g["group"] == GROUP)
    );
    ok(&floe, &["topic", "delete", TOPIC]);
    let gone = floe_cli(&floe, &["topic", "describe", TOPIC]).expect_err("a deleted topic");
    assert!(gone.contains("UnknownTopicOrPartition"), "{gone}");
}

#[test]
fn quota_subcommands_set_describe_and_remove_quotas() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), &[] as &[&str]);
    ok(
        &floe,
        &[
            "quota",
            "alter",
            "--user",
            "alice",
            "--client-id-default",
            "--add",
            "producer_byte_rate=1048576",
            "--add",
            "consumer_byte_rate=2097152",
        ],
    );
    ok(
        &floe,
        &[
            "quota",
            "alter",
            "--ip-default",
            "--add",
            "connection_creation_rate=50",
        ],
    );
    let alice = ok(&floe, &["quota", "describe", "--user", "alice"]);
    let mut rows: Vec<(String, String, f64)> = alice
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["entity"].as_str().expect("entity").to_string(),
                r["key"].as_str().expect("key").to_string(),
                r["value"].as_f64().expect("value"),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    let entity = "user=alice,client-id=<default>".to_string();
    assert_eq!(
        rows,
        vec![
            (entity.clone(), "consumer_byte_rate".into(), 2_097_152.0),
            (entity, "producer_byte_rate".into(), 1_048_576.0),
        ]
    );
    // Kafka's checks reach the command line as errors.
    let refused = floe_cli(
        &floe,
        &[
            "quota",
            "alter",
            "--user",
            "alice",
            "--add",
            "producer_byte_rate=1.5",
        ],
    )
    .expect_err("a fractional byte rate");
    assert!(
        refused.contains("InvalidRequest") && refused.contains("fractional"),
        "{refused}"
    );
    ok(
        &floe,
        &[
            "quota",
            "alter",
            "--user",
            "alice",
            "--client-id-default",
            "--delete",
            "producer_byte_rate",
            "--delete",
            "consumer_byte_rate",
        ],
    );
    let all = ok(&floe, &["quota", "describe"]);
    let all = all.as_array().expect("rows");
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["entity"], "ip=<default>");
}
