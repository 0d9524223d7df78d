//! The `floe` command line: parse flags, build a Config, run.

use clap::{Parser, Subcommand};
use floe::config::Config;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "floe",
    version,
    about = "A diskless, Kafka wire-compatible broker on object storage"
)]
struct Cli {
    #[command(subcommand)]
    command: CommandLine,
}

#[derive(Subcommand)]
enum CommandLine {
    /// Run a broker. With no flags: Kafka on 127.0.0.1:9092, objects and metadata under ./floe-data.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Directory for the metadata log and, by default, the objects.
    #[arg(long, env = "FLOE_DATA_DIR", default_value = "./floe-data")]
    data_dir: PathBuf,
    /// Address the Kafka listener binds.
    #[arg(long, env = "FLOE_KAFKA_ADDR", default_value = "127.0.0.1:9092")]
    kafka_addr: String,
    /// host:port clients are told to connect to (defaults to the bound address).
    #[arg(long, env = "FLOE_ADVERTISED_ADDR", default_value = "")]
    advertised_addr: String,
    /// Object store URL: file:///absolute/path or memory:// (default: <data-dir>/objects).
    #[arg(long, env = "FLOE_OBJECT_STORE", default_value = "")]
    object_store: String,
    /// Seal an object this long after its first batch (e.g. 5ms, 250ms).
    #[arg(long, env = "FLOE_FLUSH_INTERVAL", value_parser = humantime::parse_duration)]
    flush_interval: Option<Duration>,
    /// Seal an object once it holds this many bytes.
    #[arg(long, env = "FLOE_OBJECT_BYTES_MAX", default_value_t = 8 * 1024 * 1024)]
    object_bytes_max: usize,
    /// Create unknown topics when a client's Metadata request allows it.
    #[arg(long, env = "FLOE_AUTO_CREATE_TOPICS", default_value_t = true, action = clap::ArgAction::Set)]
    auto_create_topics: bool,
    /// Partitions of auto-created topics and of CreateTopics requests that ask for -1.
    #[arg(long, env = "FLOE_DEFAULT_PARTITIONS", default_value_t = 1)]
    default_partitions: i32,
    /// Produce bytes accepted but not yet committed; beyond it producers wait.
    #[arg(long, env = "FLOE_PRODUCE_BUFFER_BYTES_MAX", default_value_t = 256 * 1024 * 1024)]
    produce_buffer_bytes_max: usize,
    /// Largest record batch accepted (Kafka's max.message.bytes).
    #[arg(long, env = "FLOE_BATCH_BYTES_MAX", default_value_t = 1024 * 1024 + 12)]
    batch_bytes_max: usize,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLOE_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .init();
    let cli = Cli::parse();
    match cli.command {
        CommandLine::Serve(args) => serve(args),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = Config::local(args.data_dir);
    config.kafka_addr = args.kafka_addr;
    config.advertised_addr = args.advertised_addr;
    // The local filesystem answers in microseconds, so a short interval costs nothing there;
    // remote stores bill per PUT, so they default to 250 ms.
    let remote = !(args.object_store.is_empty()
        || args.object_store.starts_with("file://")
        || args.object_store.starts_with("memory://"));
    config.object_store = args.object_store;
    config.flush_interval = args.flush_interval.unwrap_or(if remote {
        Duration::from_millis(250)
    } else {
        Duration::from_millis(5)
    });
    config.object_bytes_max = args.object_bytes_max;
    config.auto_create_topics = args.auto_create_topics;
    config.default_partitions = args.default_partitions;
    config.produce_buffer_bytes_max = args.produce_buffer_bytes_max;
    config.batch_bytes_max = args.batch_bytes_max;

    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let running = floe::server::start(config).await?;
        tracing::info!(addr = %running.local_addr, "floe is serving Kafka");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => tracing::info!("shutting down"),
            result = running.task => {
                if let Err(e) = result {
                    anyhow::bail!("the listener stopped: {e}");
                }
            }
        }
        Ok(())
    })
}
