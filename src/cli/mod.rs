//! The `floe` command line: one file per subcommand (`serve.rs`: the broker's flags), and what the admin
//! subcommands (`topic`, `group`, `quota`, `cluster`) share: where the cluster is and how to
//! print.

pub mod admin_client;
pub mod bench;
pub mod cluster;
pub mod group;
pub mod quota;
pub mod serve;
pub mod table;
pub mod topic;

use anyhow::Context;
use std::path::PathBuf;
use std::time::Duration;

/// How the admin subcommands reach the cluster and print what they find.
#[derive(clap::Args)]
pub struct AdminArgs {
    /// A Kafka listener of any agent (host:port), PLAINTEXT.
    #[arg(
        long,
        short = 'b',
        global = true,
        env = "FLOE_BOOTSTRAP_SERVER",
        default_value = "127.0.0.1:9092"
    )]
    bootstrap_server: String,
    /// The admin HTTP address of an agent (`cluster quorum` reads it).
    #[arg(
        long,
        global = true,
        env = "FLOE_ADMIN_ADDR",
        default_value = "127.0.0.1:9644"
    )]
    admin_addr: String,
    /// A file holding the admin API's bearer token, when it requires one.
    #[arg(long, global = true, env = "FLOE_ADMIN_TOKEN_FILE")]
    admin_token_file: Option<PathBuf>,
    /// table or json.
    #[arg(long, short, global = true, default_value = "table")]
    output: table::Output,
    /// How long one request may take.
    #[arg(long, global = true, value_parser = humantime::parse_duration, default_value = "30s")]
    timeout: Duration,
}

/// An admin subcommand and its arguments.
pub enum Admin {
    Topic(topic::TopicCommand),
    Group(group::GroupCommand),
    Quota(quota::QuotaCommand),
    Cluster(cluster::ClusterCommand),
}

pub fn run_admin(args: AdminArgs, command: Admin) -> anyhow::Result<()> {
    let token = match &args.admin_token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the admin token file {}", path.display()))?
                .trim()
                .to_string(),
        ),
        None => None,
    };
    let client = admin_client::AdminClient::new(args.bootstrap_server, args.timeout);
    let admin = cluster::AdminApi {
        addr: args.admin_addr,
        token,
        timeout: args.timeout,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match command {
            Admin::Topic(c) => topic::run(&client, args.output, c).await,
            Admin::Group(c) => group::run(&client, args.output, c).await,
            Admin::Quota(c) => quota::run(&client, args.output, c).await,
            Admin::Cluster(c) => cluster::run(&client, &admin, args.output, c).await,
        }
    })
}
