//! `floe bench` as a user runs it: an embedded experiment reports sane numbers, and a
//! two-point sweep writes its CSV and plot.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

fn floe(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(args)
        .env("FLOE_LOG", "warn")
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
    // The PUT budget: one PUT per 100 ms interval plus one per 8 MiB accepted (and one saved
    // up before the first batch), whatever the 4 partitions and 2 producers. The store's
    // readiness probe writes one object of its own.
    let seconds = load["seconds"].as_f64().expect("seconds");
    let megabytes = load["megabytes_per_second"].as_f64().expect("rate") * seconds;
    let puts = report["object_store"]["puts"].as_f64().expect("puts");
    let budget = 1.0 + seconds / 0.1 + megabytes * 1e6 / (8.0 * 1024.0 * 1024.0) + 1.0;
    assert!(
        puts >= 1.0 && puts <= budget.ceil(),
        "{puts} PUTs in {seconds} s, budget {budget}"
    );
    assert!(report["monthly_usd"]["total"].as_f64().expect("cost") > 0.0);
}

#[test]
fn a_two_point_sweep_writes_csv_and_png() {
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
        "--out",
        out,
    ]);
    let csv = std::fs::read_to_string(out_dir.path().join("sweep.csv")).expect("sweep.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("latency_model,flush_interval_ms"));
    assert!(lines[1].starts_with("s3-express,20,"), "{csv}");
    let png = std::fs::read(out_dir.path().join("sweep.png")).expect("sweep.png");
    assert!(png.len() > 10_000, "a real picture, not an empty file");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}
