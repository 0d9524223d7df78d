//! `floe bench` as a user runs it: an embedded experiment reports sane numbers, a two-point
//! sweep writes its CSV, JSON report and plots, and a calibration against a real S3 server
//! (moto) fits a latency model a sweep then runs on.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use std::path::Path;
use std::process::Command;
use support::s3::{ACCESS_KEY, S3Server, SECRET_KEY};

fn floe(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(args)
        .env("FLOE_LOG", "warn")
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .output()
        .expect("run floe");
    assert!(
        output.status.success(),
        "floe {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf8")
}

#[test]
fn an_embedded_run_reports_throughput_ordered_percentiles_and_puts_within_budget() {
    let out = floe(&[
        "bench",
        "--embedded",
        "--json",
        "--duration",
        "2s",
        "--flush-interval",
        "100ms",
        "--latency-model",
        "s3-express",
        "--partitions",
        "4",
        "--producers",
        "2",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    let load = &report["load"];
    assert!(
        load["records_per_second"].as_f64().expect("rate") > 0.0,
        "{report}"
    );
    assert_eq!(load["produce_errors"], 0);
    for latency in [&load["produce_latency_ms"], &load["end_to_end_latency_ms"]] {
        let p = |k: &str| latency[k].as_f64().expect(k);
        assert!(
            p("p50") > 0.0 && p("p50") <= p("p90") && p("p90") <= p("p99"),
            "{latency}"
        );
        assert!(p("p99") <= p("p999") && p("p999") <= p("max"), "{latency}");
    }
    assert_eq!(
        load["consumed_records"], load["records"],
        "every acknowledged record is read back"
    );
    // The PUT budget: one PUT per 100 ms interval plus one per 8 MiB accepted (and two saved
    // up before the first batch), whatever the 4 partitions and 2 producers. The store's
    // readiness probe writes one object of its own.
    let seconds = load["seconds"].as_f64().expect("seconds");
    let megabytes = load["megabytes_per_second"].as_f64().expect("rate") * seconds;
    let puts = report["object_store"]["puts"].as_f64().expect("puts");
    let budget = 2.0 + seconds / 0.1 + megabytes * 1e6 / (8.0 * 1024.0 * 1024.0) + 1.0;
    assert!(
        puts >= 1.0 && puts <= budget.ceil(),
        "{puts} PUTs in {seconds} s, budget {budget}"
    );
    assert!(report["monthly_usd"]["total"].as_f64().expect("cost") > 0.0);
}

fn assert_png(path: &Path) {
    let png = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(png.len() > 10_000, "{}: a real picture", path.display());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn a_two_point_sweep_writes_csv_json_and_plots_priced_at_a_target_ingest() {
    let out_dir = tempfile::tempdir().expect("temp dir");
    let out = out_dir.path().to_str().expect("utf8 path");
    floe(&[
        "bench",
        "sweep",
        "--embedded",
        "--flush-interval",
        "20ms,100ms",
        "--latency-model",
        "s3-express",
        "--duration",
        "1s",
        "--partitions",
        "2",
        "--producers",
        "1",
        "--target-ingest",
        "1GiB/s",
        "--agents",
        "3,6",
        "--out",
        out,
    ]);
    let csv = std::fs::read_to_string(out_dir.path().join("sweep.csv")).expect("sweep.csv");
    let lines: Vec<&str> = csv.lines().collect();
    // 2 flush intervals × 2 agent counts × zone-aware and not.
    assert_eq!(lines.len(), 1 + 2 * 2 * 2, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(&header[..2], ["latency_model", "flush_interval_ms"]);
    assert!(lines[1].starts_with("s3-express,20,"), "{csv}");
    for line in &lines[1..] {
        assert_eq!(line.split(',').count(), header.len(), "{line}");
    }
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("sweep.json")).expect("sweep.json"),
    )
    .expect("JSON report");
    let points = report["points"].as_array().expect("points");
    assert_eq!(points.len(), 8);
    let frontier = report["frontier"].as_array().expect("frontier");
    assert!(!frontier.is_empty(), "{report}");
    for point in points {
        let bill = &point["bill"];
        // Priced at 1 GiB/s, not at the rate this machine measured.
        assert_eq!(point["ingest_bytes_per_second"], 1073741824.0);
        assert!(bill["agents"].as_u64().expect("agents") >= 3);
        assert!(bill["total"].as_f64().expect("total") > 0.0);
        // Classic Kafka at 1 GiB/s pays more for cross-zone replication alone.
        assert!(point["classic_kafka"]["total"].as_f64().expect("kafka") > 138_000.0);
    }
    assert!(
        report["basis"]
            .as_str()
            .expect("basis")
            .contains("extrapolated")
    );
    let cpu = report["experiments"][0]["agent_cpu_seconds_per_gib"].as_f64();
    assert!(
        cpu.is_some_and(|c| c > 0.0),
        "the agent's CPU is measured: {cpu:?}"
    );
    assert_png(&out_dir.path().join("sweep.png"));
    assert_png(&out_dir.path().join("cost-breakdown.png"));
}

#[test]
fn a_calibration_against_moto_fits_a_model_that_a_sweep_runs_on() {
    let dir = support::temp_dir();
    let server = S3Server::moto(&dir.path().join("moto"));
    let model = dir.path().join("moto-model.json");
    let model = model.to_str().expect("utf8 path");
    let out = floe(&[
        "bench",
        "calibrate",
        "--object-store",
        "s3://calibrate/floe",
        "--s3-endpoint",
        &server.endpoint,
        "--s3-path-style",
        "--s3-allow-http",
        "--create-bucket",
        "--sizes",
        "65536,1048576,4194304",
        "--samples",
        "4",
        "--json",
        "--out",
        model,
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    for op in ["put", "get", "delete"] {
        let sizes = report[op].as_array().expect(op);
        assert_eq!(sizes.len(), 3, "{report}");
        for s in sizes {
            assert_eq!(s["samples"], 4);
            let (p50, p99) = (s["p50_ms"].as_f64().unwrap(), s["p99_ms"].as_f64().unwrap());
            assert!(p50 > 0.0 && p50 <= p99, "{s}");
        }
    }
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).expect("model file")).expect("JSON");
    assert_eq!(file["format"], 1);
    assert_eq!(file["price_profile"], "s3-standard");
    assert!(
        file["store"].as_str().unwrap().contains("calibrate"),
        "{file}"
    );
    for op in ["put", "get", "other"] {
        let p = &file[op];
        assert!(p["p50_ms"].as_f64().unwrap() > 0.0, "{file}");
        assert!(p["p99_ms"].as_f64().unwrap() >= p["p50_ms"].as_f64().unwrap());
    }

    let out_dir = tempfile::tempdir().expect("temp dir");
    floe(&[
        "bench",
        "sweep",
        "--embedded",
        "--flush-interval",
        "50ms",
        "--latency-model",
        model,
        "--duration",
        "1s",
        "--partitions",
        "1",
        "--producers",
        "1",
        "--out",
        out_dir.path().to_str().expect("utf8 path"),
    ]);
    let csv = std::fs::read_to_string(out_dir.path().join("sweep.csv")).expect("sweep.csv");
    assert!(
        csv.lines()
            .nth(1)
            .expect("a row")
            .starts_with(&format!("{model},50,")),
        "{csv}"
    );
}
