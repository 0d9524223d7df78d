//! Other real clients against a real floe process: kcat, confluent-kafka (also as KIP-848
//! group members and admin client), and three implementations that share no code with
//! librdkafka: kafka-python, kafkajs and aiokafka.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use support::{Floe, run_client, temp_dir};

#[test]
fn kcat_produces_lists_and_consumes() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let b = floe.bootstrap();
    let input = (0..50)
        .map(|i| format!("line-{i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut producer = std::process::Command::new("kcat")
        .args(["-b", &b, "-P", "-t", "kcat-topic", "-K", ":"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("kcat is installed by the README test command");
    {
        use std::io::Write;
        let mut stdin = producer.stdin.take().expect("stdin");
        for (i, line) in input.lines().enumerate() {
            writeln!(stdin, "k{i}:{line}").expect("write");
        }
    }
    assert!(producer.wait().expect("kcat").success());
    let listing = run_client("kcat", &["-b", &b, "-L", "-t", "kcat-topic"]);
    assert!(
        listing.contains("topic \"kcat-topic\" with 1 partitions"),
        "{listing}"
    );
    let out = run_client(
        "kcat",
        &[
            "-b",
            &b,
            "-C",
            "-t",
            "kcat-topic",
            "-o",
            "beginning",
            "-e",
            "-f",
            "%k=%s@%o\n",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 50, "{out}");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(*line, format!("k{i}=line-{i}@{i}"));
    }
}

#[test]
fn confluent_kafka_round_trips_every_codec() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let out = run_client(
        "python3",
        &[
            "tests/clients/confluent_smoke.py",
            &floe.bootstrap(),
            "cf",
            "3000",
        ],
    );
    assert_eq!(out.lines().count(), 5, "{out}");
}

#[test]
fn kafka_python_round_trips() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let out = run_client(
        "python3",
        &[
            "tests/clients/kafka_python_smoke.py",
            &floe.bootstrap(),
            "kp",
            "1000",
        ],
    );
    assert!(out.contains("1000 records"), "{out}");
}

#[test]
fn confluent_kafka_kip848_group_is_consumed_described_and_listed() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &[
            "--group-consumer-heartbeat-interval",
            "500ms",
            "--group-initial-rebalance-delay",
            "0s",
        ],
    );
    let out = run_client(
        "python3",
        &[
            "tests/clients/confluent_kip848.py",
            &floe.bootstrap(),
            "k848",
            "600",
        ],
    );
    assert!(out.contains("600 records read once by 2 members"), "{out}");
    assert!(out.contains("classic group described beside it"), "{out}");
}

#[test]
fn topic_configs_produce_rules_and_group_views_answer_as_kafka() {
    let dir = temp_dir();
    let floe = Floe::start(&dir.path().join("data"), support::NO_FLAGS);
    let out = run_client(
        "python3",
        &[
            "tests/clients/confluent_admin_surface.py",
            &floe.bootstrap(),
            "surface",
        ],
    );
    assert!(out.contains("as Kafka answers them"), "{out}");
}

#[test]
fn kafkajs_produces_consumes_with_a_group_and_administers() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &["--group-initial-rebalance-delay", "0s"],
    );
    // The README test command installs kafkajs here (npm; outside the clone).
    let modules = std::env::var("FLOE_NODE_MODULES").unwrap_or_else(|_| {
        format!(
            "{}/.cache/floe-node/node_modules",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let output = std::process::Command::new("node")
        .args([
            "tests/clients/kafkajs_smoke.js",
            &floe.bootstrap(),
            "kjs",
            "600",
        ])
        .env("NODE_PATH", &modules)
        .env("KAFKAJS_NO_PARTITIONER_WARNING", "1")
        .output()
        .expect("node is installed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("600 records"),
        "kafkajs failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn aiokafka_produces_consumes_with_a_group_and_administers() {
    let dir = temp_dir();
    let floe = Floe::start(
        &dir.path().join("data"),
        &["--group-initial-rebalance-delay", "0s"],
    );
    let out = run_client(
        "python3",
        &[
            "tests/clients/aiokafka_smoke.py",
            &floe.bootstrap(),
            "aio",
            "300",
        ],
    );
    assert!(out.contains("300 records"), "{out}");
}
