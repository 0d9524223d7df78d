//! The `floe` command line: parse flags, build a Config, run.

mod cli;

use clap::{Parser, Subcommand};
use cli::bench::{BenchArgs, bench};
use cli::serve::ServeArgs;

#[derive(Parser)]
#[command(
    name = "floe",
    version,
    about = "A diskless, Kafka wire-compatible broker on object storage"
)]
struct Cli {
    /// Log format: text or json (one JSON object per line). Levels: FLOE_LOG, e.g. debug.
    #[arg(long, global = true, env = "FLOE_LOG_FORMAT", default_value = "text")]
    log_format: LogFormat,
    #[command(subcommand)]
    command: CommandLine,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum CommandLine {
    /// Run a broker. With no flags: Kafka on 127.0.0.1:9092, objects and metadata under ./floe-data.
    Serve(Box<ServeArgs>),
    /// Measure throughput, produce and end-to-end latency, object-store requests and their cost.
    Bench(Box<BenchArgs>),
    /// Create, list, describe, delete topics and change their configs.
    Topic {
        #[command(flatten)]
        admin: cli::AdminArgs,
        #[command(subcommand)]
        command: cli::topic::TopicCommand,
    },
    /// List, describe and delete consumer groups; reset their offsets.
    Group {
        #[command(flatten)]
        admin: cli::AdminArgs,
        #[command(subcommand)]
        command: cli::group::GroupCommand,
    },
    /// Describe and alter client quotas (users, client ids, ips, their defaults).
    Quota {
        #[command(flatten)]
        admin: cli::AdminArgs,
        #[command(subcommand)]
        command: cli::quota::QuotaCommand,
    },
    /// The cluster's brokers and its metadata quorum.
    Cluster {
        #[command(flatten)]
        admin: cli::AdminArgs,
        #[command(subcommand)]
        command: cli::cluster::ClusterCommand,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLOE_LOG")
        // openraft narrates every election and snapshot at info; its warnings are what matter.
        .unwrap_or_else(|_| "info,openraft=warn".into());
    match cli.log_format {
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init(),
        LogFormat::Text => tracing_subscriber::fmt()
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .with_env_filter(filter)
            .init(),
    }
    match cli.command {
        CommandLine::Serve(args) => serve(*args),
        CommandLine::Bench(args) => bench(*args),
        CommandLine::Topic { admin, command } => cli::run_admin(admin, cli::Admin::Topic(command)),
        CommandLine::Group { admin, command } => cli::run_admin(admin, cli::Admin::Group(command)),
        CommandLine::Quota { admin, command } => cli::run_admin(admin, cli::Admin::Quota(command)),
        CommandLine::Cluster { admin, command } => {
            cli::run_admin(admin, cli::Admin::Cluster(command))
        }
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let config = args.config()?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let mut running = floe::node::start(config).await?;
        tracing::info!(addr = %running.local_addr, "floe is serving Kafka");
        if let Some(admin) = running.admin_addr {
            tracing::info!(addr = %admin, "admin HTTP is serving");
        }
        let store = running.broker.store.clone();
        let drain = running.broker.drain.clone();
        tokio::select! {
            _ = shutdown_signal() => {}
            _ = drain.started() => {}
            result = &mut running.task => {
                if let Err(e) = result {
                    anyhow::bail!("the listener stopped: {e}");
                }
            }
        }
        let drained = running.drain(running.broker.config.drain_timeout).await;
        if drained.complete() {
            tracing::info!(elapsed = ?drained.elapsed, "drained; stopping");
        } else {
            tracing::warn!(
                elapsed = ?drained.elapsed,
                connections_open = drained.connections_open,
                pending_bytes = drained.pending_bytes,
                deregistered = drained.deregistered,
                "the drain deadline passed; stopping with what is left"
            );
        }
        running.stop().await;
        for op in store.metrics().snapshot() {
            tracing::info!(
                op = op.operation.name(),
                requests = op.requests,
                errors = op.errors,
                bytes = op.bytes,
                latency_seconds_sum = op.latency.sum,
                "object store requests"
            );
        }
        Ok(())
    })
}

/// SIGINT (Ctrl-C) or SIGTERM (containers, service managers): both drain.
async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return tokio::signal::ctrl_c().await.unwrap_or(()),
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
