//! `floe bench` and its subcommands (`sweep`, `calibrate`): their flags, and the glue from
//! flags to the library's benchmark, sweep and calibration runners (`floe::bench`).

use clap::Subcommand;
use floe::bench::experiment::{self, EmbeddedBroker};
use floe::bench::load::LoadSpec;
use floe::bench::sweep::SweepSpec;
use floe::cost::PriceProfile;
use floe::store::open::ObjectStoreConfig;
use std::path::PathBuf;
use std::time::Duration;

/// The load itself, shared by `floe bench` and `floe bench sweep`.
#[derive(clap::Args, Clone)]
struct LoadArgs {
    /// Topic to create (if missing) and load.
    #[arg(long, default_value = "floe-bench")]
    topic: String,
    #[arg(long, default_value_t = 8)]
    partitions: i32,
    /// Producer connections.
    #[arg(long, default_value_t = 4)]
    producers: usize,
    #[arg(long, default_value_t = 1024)]
    record_bytes: usize,
    /// Records per batch (one batch per produce request).
    #[arg(long, default_value_t = 100)]
    batch_records: i32,
    /// Requests outstanding per producer connection.
    #[arg(long, default_value_t = 5)]
    in_flight: usize,
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
    duration: Duration,
    /// Target records per second over all producers (default: as fast as possible).
    #[arg(long)]
    rate: Option<f64>,
    /// -1 (all), 1 or 0.
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    acks: i16,
    /// Plain producers instead of idempotent ones.
    #[arg(long)]
    no_idempotence: bool,
    /// Skip the consumer (no end-to-end latency).
    #[arg(long)]
    no_consume: bool,
    /// Price profile: s3-standard, s3-express, a JSON file with the same fields, or auto
    /// (the profile named like the latency model, else s3-standard).
    #[arg(long, default_value = "auto")]
    price_profile: String,
    /// Retention used for the storage part of the monthly cost.
    #[arg(long, default_value_t = 168.0)]
    retention_hours: f64,
}

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    sweep: Option<BenchCommand>,
    #[command(flatten)]
    load: LoadArgs,
    /// Start a broker in this process (with the flags below) instead of using --bootstrap.
    #[arg(long)]
    embedded: bool,
    #[arg(long, default_value = "127.0.0.1:9092")]
    bootstrap: String,
    /// The running broker's admin HTTP, for its object-store counters.
    #[arg(long, default_value = "http://127.0.0.1:9644")]
    admin_url: String,
    /// Embedded broker: flush interval.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "250ms")]
    flush_interval: Duration,
    /// Embedded broker: object size that seals an object.
    #[arg(long, default_value_t = 8 * 1024 * 1024)]
    object_bytes_max: usize,
    /// Embedded broker: object store (memory:// lets the latency model stand in for S3).
    #[arg(long, default_value = "memory://")]
    object_store: String,
    /// Embedded broker: injected latency model (none, s3-standard, s3-express, p50=..,p99=..,
    /// or a model file written by `floe bench calibrate`).
    #[arg(long, default_value = "s3-standard")]
    latency_model: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Run one embedded experiment per combination, price each as deployments at a target
    /// ingest; write sweep.csv, sweep.json, sweep.png and cost-breakdown.png.
    Sweep(Box<SweepArgs>),
    /// Time PUT, GET and DELETE against a real store at the sizes floe writes; fit a latency
    /// model file that --latency-model and --object-store-latency accept.
    Calibrate(CalibrateArgs),
}

#[derive(clap::Args)]
struct CalibrateArgs {
    /// The store to measure: s3://bucket[/prefix], gs://…, az://…, file:///dir, memory://.
    #[arg(long, env = "FLOE_OBJECT_STORE")]
    object_store: String,
    /// S3 endpoint for S3-compatible stores, e.g. http://127.0.0.1:9000 (MinIO).
    #[arg(long, env = "FLOE_S3_ENDPOINT")]
    s3_endpoint: Option<String>,
    #[arg(long, env = "FLOE_S3_REGION")]
    s3_region: Option<String>,
    /// The AWS profile to read credentials and region from (default: AWS_PROFILE, default).
    #[arg(long, env = "FLOE_S3_PROFILE")]
    s3_profile: Option<String>,
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    s3_path_style: bool,
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    s3_allow_http: bool,
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    create_bucket: bool,
    /// Comma-separated object sizes in bytes (floe's objects range from one batch to
    /// --object-bytes-max).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "65536,1048576,4194304,8388608"
    )]
    sizes: Vec<u64>,
    /// Measured requests per operation and size.
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// The price profile the model file names: auto (S3 Express for a directory bucket,
    /// S3 Standard otherwise), s3-standard, s3-express or a price file.
    #[arg(long, default_value = "auto")]
    price_profile: String,
    /// The model file to write.
    #[arg(long, default_value = "latency-model.json")]
    out: PathBuf,
    /// Print the whole report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct SweepArgs {
    #[command(flatten)]
    load: LoadArgs,
    /// Must be given: the sweep always starts its own brokers.
    #[arg(long, required = true)]
    embedded: bool,
    /// Comma-separated flush intervals.
    #[arg(long, value_delimiter = ',', value_parser = humantime::parse_duration, default_value = "25ms,50ms,100ms,250ms,500ms")]
    flush_interval: Vec<Duration>,
    /// Comma-separated object sizes.
    #[arg(long, value_delimiter = ',', default_value = "8388608")]
    object_bytes_max: Vec<usize>,
    /// Comma-separated latency models (built-in names or model files from `calibrate`).
    #[arg(long, value_delimiter = ',', default_value = "s3-standard")]
    latency_model: Vec<String>,
    #[arg(long, default_value = "memory://")]
    object_store: String,
    /// Ingest to price each point at, e.g. 1GiB/s or 100MiB/s (default: the measured rate).
    /// Latency is measured at the rate this machine holds; the bill is extrapolated.
    #[arg(long, value_parser = floe::bench::sweep::parse_rate)]
    target_ingest: Option<f64>,
    /// Bytes read per byte written (consumer groups reading everything).
    #[arg(long, default_value_t = 1.0)]
    fan_out: f64,
    /// Zones the agents (and clients) are spread over.
    #[arg(long, default_value_t = 3)]
    zones: u32,
    /// Comma-separated minimum agent counts to price (more are added when CPU needs them).
    #[arg(long, value_delimiter = ',', default_value = "3")]
    agents: Vec<u32>,
    /// Comma-separated client zone layouts: true (clients name their zone), false.
    #[arg(long, value_delimiter = ',', default_value = "true,false")]
    zone_aware: Vec<bool>,
    /// CPU share agents are sized for.
    #[arg(long, default_value_t = 0.5)]
    target_utilisation: f64,
    #[arg(long, default_value_t = 3)]
    quorum_voters: u32,
    /// Compaction: segment size and the lag before produce objects are rewritten.
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    segment_bytes: u64,
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10m")]
    compaction_lag: Duration,
    /// Directory for sweep.csv, sweep.json, sweep.png and cost-breakdown.png.
    #[arg(long, default_value = "floe-sweep")]
    out: PathBuf,
}

fn load_spec(args: &LoadArgs, bootstrap: String) -> LoadSpec {
    LoadSpec {
        bootstrap,
        topic: args.topic.clone(),
        partitions: args.partitions.max(1),
        producers: args.producers.max(1),
        record_bytes: args.record_bytes,
        batch_records: args.batch_records.max(1),
        in_flight: args.in_flight.max(1),
        duration: args.duration,
        rate: args.rate,
        acks: args.acks,
        idempotent: !args.no_idempotence,
        consume: !args.no_consume,
        progress: true,
    }
}

pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    match args.sweep {
        Some(BenchCommand::Sweep(sweep)) => return runtime.block_on(run_sweep(*sweep)),
        Some(BenchCommand::Calibrate(calibrate)) => {
            return runtime.block_on(run_calibrate(calibrate));
        }
        None => {}
    }
    let model = if args.embedded {
        args.latency_model.as_str()
    } else {
        ""
    };
    let profile =
        PriceProfile::resolve(&args.load.price_profile, model).map_err(anyhow::Error::msg)?;
    let spec = load_spec(&args.load, args.bootstrap.clone());
    let report = runtime.block_on(async {
        if args.embedded {
            let broker = EmbeddedBroker {
                flush_interval: args.flush_interval,
                object_bytes_max: args.object_bytes_max,
                object_store: args.object_store.clone(),
                latency_model: args.latency_model.clone(),
            };
            experiment::run_embedded(&broker, spec, &profile, args.load.retention_hours).await
        } else {
            experiment::run_remote(spec, &args.admin_url, &profile, args.load.retention_hours).await
        }
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", experiment::human(&report));
    }
    Ok(())
}

async fn run_calibrate(args: CalibrateArgs) -> anyhow::Result<()> {
    use floe::bench::calibrate::{self, CalibrateSpec};
    if args.sizes.is_empty() || args.sizes.iter().any(|&n| n == 0 || n > 1 << 30) {
        anyhow::bail!("--sizes: each size must lie in 1..=1073741824 bytes");
    }
    let config = ObjectStoreConfig {
        url: args.object_store.clone(),
        s3_endpoint: args.s3_endpoint,
        s3_region: args.s3_region,
        s3_profile: args.s3_profile,
        s3_path_style: args.s3_path_style,
        s3_allow_http: args.s3_allow_http,
        create_bucket: args.create_bucket,
        ..Default::default()
    };
    let rng = floe::random::Rng::from_entropy();
    let run_id = rng.uuid().simple().to_string();
    // The data directory matters only for an empty --object-store (local files under it).
    let scratch = std::env::temp_dir().join(format!("floe-calibrate-{run_id}"));
    let client =
        floe::store::open::open(&config, &scratch, floe::clock::Clock::system(), rng).await;
    let _ = std::fs::remove_dir_all(&scratch);
    let client = client?;
    let price_profile = match args.price_profile.as_str() {
        "auto" => calibrate::price_profile_for(&args.object_store).to_string(),
        other => other.to_string(),
    };
    let spec = CalibrateSpec {
        sizes: args.sizes,
        samples: args.samples.max(1),
        price_profile,
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let report = calibrate::run(&client, &spec, &run_id, |round, rounds| {
        if terminal {
            eprint!("\rcalibrating: round {}/{rounds}", round + 1);
        }
    })
    .await?;
    if terminal {
        eprintln!();
    }
    std::fs::write(&args.out, serde_json::to_string_pretty(&report.model)?)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", calibrate::human(&report));
        println!(
            "wrote {}: use it as --latency-model {0} (floe bench) or --object-store-latency {0}",
            args.out.display()
        );
    }
    Ok(())
}

async fn run_sweep(args: SweepArgs) -> anyhow::Result<()> {
    let spec = load_spec(&args.load, String::new());
    let sweep = SweepSpec {
        flush_intervals: args.flush_interval,
        object_bytes_max: args.object_bytes_max,
        latency_models: args.latency_model,
        object_store: args.object_store,
    };
    let reports = floe::bench::sweep::run(&sweep, &spec, &args.load.price_profile, args.load.retention_hours, |r| {
        eprintln!(
            "flush {:>6.0} ms {:<12} {:>7.1} MB/s  produce p50 {:>7.1} ms p99 {:>7.1} ms  {:>5} PUTs  ${:.2}/month",
            r.flush_interval_ms.unwrap_or(0.0),
            r.latency_model.as_deref().unwrap_or(""),
            r.load.megabytes_per_second,
            r.load.produce_latency_ms.p50,
            r.load.produce_latency_ms.p99,
            r.object_store.puts,
            r.monthly_usd.total
        );
    })
    .await?;
    let pricing = floe::bench::sweep::PricingSpec {
        target_ingest_bytes_per_second: args.target_ingest,
        fan_out: args.fan_out,
        zones: args.zones,
        agents_min: args.agents,
        zone_aware: args.zone_aware,
        target_utilisation: args.target_utilisation,
        quorum_voters: args.quorum_voters,
        segment_bytes: args.segment_bytes as f64,
        compaction_lag_seconds: args.compaction_lag.as_secs_f64(),
        retention_seconds: args.load.retention_hours * 3600.0,
    };
    let report = floe::bench::sweep::price(reports, &pricing, &args.load.price_profile)?;
    std::fs::create_dir_all(&args.out)?;
    let files =
        ["sweep.csv", "sweep.json", "sweep.png", "cost-breakdown.png"].map(|f| args.out.join(f));
    std::fs::write(&files[0], floe::bench::sweep::csv(&report))?;
    std::fs::write(&files[1], serde_json::to_string_pretty(&report)?)?;
    floe::bench::plot::latency_vs_cost(&report, &files[2])?;
    floe::bench::plot::cost_breakdown(&report, &files[3])?;
    println!("{}", report.basis);
    for &i in &report.frontier {
        let p = &report.points[i];
        println!(
            "frontier: {:<12} flush {:>4.0} ms  {:>3} agents{}  produce p50 {:>6.1} / p99 {:>6.1} ms  ${:>10.2}/month  ${:.5}/GiB  (classic Kafka ${:.2}/month)",
            p.latency_model,
            p.flush_interval_ms,
            p.bill.agents,
            if p.zone_aware { "" } else { " (zone-unaware)" },
            p.produce_p50_ms,
            p.produce_p99_ms,
            p.bill.total,
            p.bill.per_gib,
            p.classic_kafka.total
        );
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    println!("wrote {}", names.join(", "));
    Ok(())
}
