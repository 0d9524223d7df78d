//! floe on real S3 servers over HTTP: SeaweedFS (a MinIO stand-in), moto and LocalStack (run
//! as a process: `localstack/run.sh`). Each behaviour that depends on the store runs on
//! LocalStack as well as on the server it was first written for.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::kafka::{assert_read_back, flush, produce, producer};
use support::s3::{ACCESS_KEY, S3Server, SECRET_KEY};
use support::{Floe, temp_dir};

const PARTITIONS: i32 = 200;

/// Counts the objects floe wrote, with the S3 ListObjectsV2 API (SeaweedFS allows anonymous
/// listing when it runs without an identity configuration; LocalStack checks no signature).
fn count_objects(server: &S3Server, bucket: &str) -> usize {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let mut count = 0;
        let mut token: Option<String> = None;
        loop {
            let mut url = format!("{}/{bucket}?list-type=2&prefix=floe/v1/", server.endpoint);
            if let Some(t) = &token {
                url.push_str(&format!("&continuation-token={}", url_encode(t)));
            }
            let body = client
                .get(&url)
                .send()
                .await
                .expect("list")
                .text()
                .await
                .expect("body");
            count += body.matches("<Key>").count();
            token = body
                .split_once("<NextContinuationToken>")
                .and_then(|(_, rest)| rest.split_once("</NextContinuationToken>"))
                .map(|(t, _)| t.to_string());
            if token.is_none() {
                return count;
            }
        }
    })
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn seaweedfs_puts_follow_time_and_bytes_not_partitions_and_survive_restart() {
    let dir = temp_dir();
    let server = S3Server::seaweedfs(&dir.path().join("seaweedfs"));
    puts_follow_time_and_bytes_not_partitions_and_survive_restart(&dir, &server);
}

#[test]
fn localstack_puts_follow_time_and_bytes_not_partitions_and_survive_restart() {
    let dir = temp_dir();
    let server = S3Server::localstack(&dir.path().join("localstack"));
    puts_follow_time_and_bytes_not_partitions_and_survive_restart(&dir, &server);
}

fn puts_follow_time_and_bytes_not_partitions_and_survive_restart(
    dir: &tempfile::TempDir,
    server: &S3Server,
) {
    let name = server.name;
    let flush_interval = Duration::from_millis(100);
    let mut flags = server.floe_flags("floe-e2e");
    flags.extend([
        "--flush-interval".into(),
        "100ms".into(),
        "--default-partitions".into(),
        PARTITIONS.to_string(),
    ]);
    let data = dir.path().join("data");
    let mut floe = Floe::start(&data, &flags);

    let started = Instant::now();
    let (p, acks) = producer(&floe.bootstrap(), "lz4");
    produce(&p, "wide", PARTITIONS, 100_000, "w");
    flush(&p);
    let elapsed = started.elapsed();
    assert!(
        acks.errors.lock().expect("errors").is_empty(),
        "{:?}",
        acks.errors.lock().expect("errors")
    );
    let acked = acks.by_partition.lock().expect("acks").clone();
    assert_eq!(acked.len(), PARTITIONS as usize);
    assert_eq!(acked.values().map(Vec::len).sum::<usize>(), 100_000);

    let objects = count_objects(server, "floe-e2e");
    let bytes: u64 = 100_000 * 40;
    // The PUT budget: one PUT per flush interval plus one per 8 MiB accepted, and two saved
    // up before the first batch.
    let earned =
        elapsed.as_secs_f64() / flush_interval.as_secs_f64() + bytes as f64 / (8 << 20) as f64;
    let bound = 2 + earned.ceil() as usize;
    println!(
        "{name}: 100000 records over {PARTITIONS} partitions in {elapsed:?}: {} objects (bound {bound})",
        objects
    );
    assert!(objects > 0);
    assert!(
        objects <= bound,
        "{} objects > {bound}: PUTs must follow time and bytes",
        objects
    );

    floe.stop();
    let writes = floe.request_summary();
    assert!(
        writes
            .iter()
            .any(|l| l.contains("op=\"put\"") || l.contains("op=put")),
        "{writes:?}"
    );
    let mut floe = Floe::start(&data, &flags);
    assert_read_back(&floe.bootstrap(), "wide", &acked);
    floe.stop();
    println!("{name} writer: {writes:#?}");
    println!("{name} reader after restart: {:#?}", floe.request_summary());
}

#[test]
fn every_acked_record_survives_ten_percent_injected_faults_on_moto() {
    let dir = temp_dir();
    let server = S3Server::moto(&dir.path().join("moto"));
    every_acked_record_survives_ten_percent_injected_faults(&dir, &server);
}

#[test]
fn every_acked_record_survives_ten_percent_injected_faults_on_localstack() {
    let dir = temp_dir();
    let server = S3Server::localstack(&dir.path().join("localstack"));
    every_acked_record_survives_ten_percent_injected_faults(&dir, &server);
}

fn every_acked_record_survives_ten_percent_injected_faults(
    dir: &tempfile::TempDir,
    server: &S3Server,
) {
    let mut flags = server.floe_flags("floe-faults");
    flags.extend([
        "--flush-interval".into(),
        "20ms".into(),
        "--default-partitions".into(),
        "4".into(),
        "--object-store-faults".into(),
        "rate=0.1,hang=50ms".into(),
        "--object-store-backoff".into(),
        "5ms".into(),
    ]);
    let floe = Floe::start(&dir.path().join("data"), &flags);
    let (p, acks) = producer(&floe.bootstrap(), "zstd");
    produce(&p, "faulty", 4, 20_000, "f");
    flush(&p);
    // librdkafka retries retriable errors itself; anything it reports was not retriable.
    assert!(
        acks.errors.lock().expect("errors").is_empty(),
        "{:?}",
        acks.errors.lock().expect("errors")
    );
    let acked = acks.by_partition.lock().expect("acks").clone();
    assert_eq!(acked.values().map(Vec::len).sum::<usize>(), 20_000);
    assert_read_back(&floe.bootstrap(), "faulty", &acked);
    let log = floe.log();
    assert!(!log.contains("panicked"), "{log}");
}

/// `floe serve` on a system-picked port without admin HTTP, for a start-up expected to fail.
fn serve_once(data_dir: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_floe"));
    command
        .args([
            "serve",
            "--kafka-addr",
            "127.0.0.1:0",
            "--admin-addr",
            "off",
        ])
        .arg("--data-dir")
        .arg(data_dir);
    command
}

#[test]
fn an_unreachable_store_fails_start_up_with_a_clear_message() {
    let dir = temp_dir();
    let closed = support::free_port();
    let output = serve_once(&dir.path().join("data"))
        .args(["--object-store", "s3://missing-bucket/x", "--s3-endpoint"])
        .arg(format!("http://127.0.0.1:{closed}"))
        .args([
            "--s3-path-style",
            "--s3-allow-http",
            "--object-store-attempts",
            "2",
            "--object-store-deadline",
            "2s",
        ])
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .output()
        .expect("run floe");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing-bucket"), "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{closed}")), "{stderr}");
}

#[test]
fn seaweedfs_compaction_and_collection_shrink_the_bucket_under_injected_faults() {
    let dir = temp_dir();
    let server = S3Server::seaweedfs(&dir.path().join("seaweedfs"));
    compaction_and_collection_shrink_the_bucket_under_injected_faults(&dir, &server);
}

#[test]
fn localstack_compaction_and_collection_shrink_the_bucket_under_injected_faults() {
    let dir = temp_dir();
    let server = S3Server::localstack(&dir.path().join("localstack"));
    compaction_and_collection_shrink_the_bucket_under_injected_faults(&dir, &server);
}

fn compaction_and_collection_shrink_the_bucket_under_injected_faults(
    dir: &tempfile::TempDir,
    server: &S3Server,
) {
    let mut flags = server.floe_flags("floe-jobs");
    flags.extend(
        [
            "--flush-interval",
            "20ms",
            "--default-partitions",
            "8",
            // The jobs' own client draws faults too: compaction and deletion retry them.
            "--object-store-faults",
            "rate=0.05",
            "--compaction-lag",
            "1s",
            "--compaction-interval",
            "500ms",
            "--collection-interval",
            "1s",
            "--dead-object-grace",
            "2s",
        ]
        .map(String::from),
    );
    let floe = Floe::start(&dir.path().join("data"), &flags);
    let mut acked = BTreeMap::new();
    for round in 0..10 {
        let (p, acks) = producer(&floe.bootstrap(), "zstd");
        produce(&p, "jobs", 8, 400, &format!("r{round}"));
        flush(&p);
        assert!(acks.errors.lock().expect("errors").is_empty());
        for (partition, records) in acks.by_partition.lock().expect("acks").iter() {
            acked
                .entry(*partition)
                .or_insert_with(Vec::new)
                .extend(records.iter().cloned());
        }
    }
    let written = count_objects(server, "floe-jobs");
    assert!(written >= 10, "{written} objects");
    let deadline = Instant::now() + Duration::from_secs(120);
    let storage = loop {
        let topics = support::http_json(floe.admin, "/v1/topics");
        let compacted = topics["topics"][0]["partitions"]
            .as_array()
            .is_some_and(|ps| ps.iter().all(|p| p["index_entries"] == p["segments"]));
        let storage = support::http_json(floe.admin, "/v1/storage");
        if compacted && storage["objects_dead"] == 0 {
            break storage;
        }
        assert!(
            Instant::now() < deadline,
            "not compacted and collected: {storage}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // The bucket holds the segments and nothing else (S3's own listing says so).
    let live = storage["objects_live"].as_u64().expect("live") as usize;
    assert_eq!(count_objects(server, "floe-jobs"), live);
    // A binary counter of segments: a few per partition at most.
    assert!(live <= 8 * 4, "{live} objects for 8 partitions");
    assert_read_back(&floe.bootstrap(), "jobs", &acked);
}

/// The shared config and credentials files under `home`: a `default` profile whose secret
/// the store refuses, and a `floe` profile with the right keys, its own region, and the
/// store's endpoint.
fn write_aws_files(home: &std::path::Path, endpoint: &str) {
    let aws = home.join(".aws");
    std::fs::create_dir_all(&aws).expect("~/.aws");
    std::fs::write(
        aws.join("config"),
        format!(
            "[default]\nregion = us-east-1\nendpoint_url = {endpoint}\n\n\
             [profile floe]\nregion = eu-west-1\nendpoint_url = {endpoint}\n"
        ),
    )
    .expect("config");
    std::fs::write(
        aws.join("credentials"),
        format!(
            "[default]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = not-the-secret\n\n\
             [floe]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
        ),
    )
    .expect("credentials");
}

/// The command's environment without any AWS variable, and `home` as its home.
fn only_the_aws_files(command: &mut std::process::Command, home: &std::path::Path) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("AWS_") {
            command.env_remove(&name);
        }
    }
    // The test keys every floe of the tests gets are set on the command itself.
    command
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env("HOME", home);
}

#[test]
fn a_profile_of_the_shared_aws_files_is_used_with_no_aws_environment() {
    let dir = temp_dir();
    // This store checks signatures: only the floe profile's keys are accepted.
    let server = S3Server::seaweedfs_with_keys(&dir.path().join("seaweedfs"));
    let home = dir.path().join("home");
    write_aws_files(&home, &server.endpoint);
    let flags = |profile: Option<&str>| {
        let mut flags: Vec<String> = [
            "--object-store",
            "s3://profiled/floe",
            "--s3-path-style",
            "--s3-allow-http",
            "--create-bucket",
            "--object-store-attempts",
            "2",
            "--object-store-deadline",
            "2s",
        ]
        .map(String::from)
        .to_vec();
        if let Some(profile) = profile {
            flags.extend(["--s3-profile".to_string(), profile.to_string()]);
        }
        flags
    };

    // The default profile's secret is wrong: the store refuses it, and start-up says so.
    let refused = serve_once(&dir.path().join("refused"))
        .args(flags(None))
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("run floe");
    assert!(!refused.status.success(), "the wrong secret was accepted");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("profiled") && stderr.contains("403"),
        "{stderr}"
    );

    // The floe profile: its keys, region and endpoint, from the files alone.
    let floe = Floe::start_configured(
        &dir.path().join("node"),
        support::free_addr(),
        support::free_addr(),
        &flags(Some("floe")),
        |command| only_the_aws_files(command, &home),
    );
    let log = floe.log();
    assert!(
        log.contains(&format!("at {} (region eu-west-1)", server.endpoint)),
        "the store was not the profile's:\n{log}"
    );
    let (p, acks) = producer(&floe.bootstrap(), "none");
    produce(&p, "profiled", 1, 200, "aws");
    flush(&p);
    assert!(acks.errors.lock().expect("errors").is_empty());
    let acked = acks.by_partition.lock().expect("acks").clone();
    assert_read_back(&floe.bootstrap(), "profiled", &acked);
    assert!(
        support::metric(floe.admin, "floe_object_store_requests_total{op=\"put\"}")
            .is_some_and(|puts| puts > 0.0),
        "no PUT reached the store"
    );
}
