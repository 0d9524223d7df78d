//! The `floe` command line: parse flags, build a Config, run.

mod cli;

use anyhow::Context;
use clap::{Parser, Subcommand};
use cli::bench::{BenchArgs, bench};
use floe::config::Config;
use floe::ids::NodeId;
use floe::store::chaos::FaultPlan;
use floe::store::open::ObjectStoreConfig;
use floe::store::retry::RetryPolicy;
use std::path::PathBuf;
use std::time::Duration;

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
    /// The cluster's brokers and its metadata quorum.
    Cluster {
        #[command(flatten)]
        admin: cli::AdminArgs,
        #[command(subcommand)]
        command: cli::cluster::ClusterCommand,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Directory for the metadata log and, by default, the objects.
    #[arg(long, env = "FLOE_DATA_DIR", default_value = "./floe-data")]
    data_dir: PathBuf,
    /// Address the Kafka listener binds.
    #[arg(long, env = "FLOE_KAFKA_ADDR", default_value = "127.0.0.1:9092")]
    kafka_addr: String,
    /// Admin HTTP address (/healthz, /readyz, /metrics, /v1/...); "off" disables it.
    #[arg(long, env = "FLOE_ADMIN_ADDR", default_value = "127.0.0.1:9644")]
    admin_addr: String,
    /// Kafka listeners, as Kafka's `listeners`: NAME://host:port,... (e.g.
    /// PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9094). When given, --kafka-addr is not
    /// used; the first listener is the primary one.
    #[arg(long, env = "FLOE_LISTENERS", default_value = "")]
    listeners: String,
    /// What each listener advertises, as Kafka's `advertised.listeners`: NAME://host:port,...
    #[arg(long, env = "FLOE_ADVERTISED_LISTENERS", default_value = "")]
    advertised_listeners: String,
    /// Listener names' security protocols, as Kafka's `listener.security.protocol.map`:
    /// NAME:PROTOCOL,... (PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL map to themselves).
    #[arg(long, env = "FLOE_LISTENER_SECURITY_PROTOCOL_MAP", default_value = "")]
    listener_security_protocol_map: String,
    /// PEM certificate chain (leaf first) of the SSL and SASL_SSL listeners (Kafka's
    /// `ssl.keystore.certificate.chain`).
    #[arg(long, env = "FLOE_SSL_CERTIFICATE_FILE")]
    ssl_certificate_file: Option<PathBuf>,
    /// PEM private key of that certificate (Kafka's `ssl.keystore.key`).
    #[arg(long, env = "FLOE_SSL_KEY_FILE")]
    ssl_key_file: Option<PathBuf>,
    /// PEM CA certificates client certificates must chain to (Kafka's
    /// `ssl.truststore.certificates`).
    #[arg(long, env = "FLOE_SSL_TRUSTSTORE_FILE")]
    ssl_truststore_file: Option<PathBuf>,
    /// none, requested or required: whether clients present certificates (Kafka's
    /// `ssl.client.auth`). A certificate's subject becomes the principal on SSL listeners.
    #[arg(long, env = "FLOE_SSL_CLIENT_AUTH", default_value = "none")]
    ssl_client_auth: String,
    /// How often the TLS files are checked for changes (changed files are loaded without a
    /// restart).
    #[arg(long, env = "FLOE_SSL_RELOAD_INTERVAL", value_parser = humantime::parse_duration, default_value = "30s")]
    ssl_reload_interval: Duration,
    /// SASL mechanisms offered (Kafka's `sasl.enabled.mechanisms`).
    #[arg(
        long,
        env = "FLOE_SASL_ENABLED_MECHANISMS",
        default_value = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER"
    )]
    sasl_enabled_mechanisms: String,
    /// SASL/PLAIN users, one `name:password` per line; users not in it log in with the
    /// password of their SCRAM credential.
    #[arg(long, env = "FLOE_SASL_PLAIN_USERS_FILE")]
    sasl_plain_users_file: Option<PathBuf>,
    /// The JWKS file OAUTHBEARER tokens are verified against (Kafka's
    /// `sasl.oauthbearer.jwks.endpoint.url` with a file: URL). Without it OAUTHBEARER is not
    /// offered.
    #[arg(long, env = "FLOE_SASL_OAUTHBEARER_JWKS_FILE")]
    sasl_oauthbearer_jwks_file: Option<PathBuf>,
    /// The issuer tokens must name (Kafka's `sasl.oauthbearer.expected.issuer`).
    #[arg(long, env = "FLOE_SASL_OAUTHBEARER_EXPECTED_ISSUER")]
    sasl_oauthbearer_expected_issuer: Option<String>,
    /// Audiences a token must include one of, comma-separated (Kafka's
    /// `sasl.oauthbearer.expected.audience`).
    #[arg(
        long,
        env = "FLOE_SASL_OAUTHBEARER_EXPECTED_AUDIENCE",
        default_value = ""
    )]
    sasl_oauthbearer_expected_audience: String,
    /// Longest SASL session without re-authentication (Kafka's `connections.max.reauth.ms`);
    /// 0: no limit.
    #[arg(long, env = "FLOE_CONNECTIONS_MAX_REAUTH", value_parser = humantime::parse_duration, default_value = "0s")]
    connections_max_reauth: Duration,
    /// none, or acl: enforce Kafka ACLs (Kafka's `authorizer.class.name` set to
    /// StandardAuthorizer).
    #[arg(long, env = "FLOE_AUTHORIZER", default_value = "none")]
    authorizer: String,
    /// Principals allowed everything, separated by ';' (Kafka's `super.users`).
    #[arg(long, env = "FLOE_SUPER_USERS", default_value = "")]
    super_users: String,
    /// Allow an operation on a resource no ACL names (Kafka's
    /// `allow.everyone.if.no.acl.found`).
    #[arg(long, env = "FLOE_ALLOW_EVERYONE_IF_NO_ACL_FOUND", default_value_t = false, action = clap::ArgAction::Set)]
    allow_everyone_if_no_acl_found: bool,
    /// A file holding the bearer token the admin API's views and mutations require
    /// (`Authorization: Bearer <token>`). Without one they are served only on a loopback
    /// admin address.
    #[arg(long, env = "FLOE_ADMIN_TOKEN_FILE")]
    admin_token_file: Option<PathBuf>,
    /// Whether /metrics stays open when the admin API requires a token.
    #[arg(long, env = "FLOE_ADMIN_METRICS_OPEN", default_value_t = true, action = clap::ArgAction::Set)]
    admin_metrics_open: bool,
    /// /readyz probes the object store at most this often and answers the last result in
    /// between.
    #[arg(long, env = "FLOE_READY_PROBE_INTERVAL", value_parser = humantime::parse_duration, default_value = "5s")]
    ready_probe_interval: Duration,
    /// host:port clients are told to connect to (defaults to the bound address).
    #[arg(long, env = "FLOE_ADVERTISED_ADDR", default_value = "")]
    advertised_addr: String,
    /// Object store: file:///dir, memory://, s3://bucket[/prefix], gs://bucket[/prefix],
    /// az://container[/prefix] (default: objects packed into a few files in <data-dir>/packs;
    /// file:// keeps a file per object).
    #[arg(long, env = "FLOE_OBJECT_STORE", default_value = "")]
    object_store: String,
    /// S3 endpoint for S3-compatible stores, e.g. http://127.0.0.1:9000 (MinIO); default: the
    /// profile's endpoint_url or AWS_ENDPOINT_URL, else AWS.
    #[arg(long, env = "FLOE_S3_ENDPOINT")]
    s3_endpoint: Option<String>,
    /// S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's region, then
    /// us-east-1).
    #[arg(long, env = "FLOE_S3_REGION")]
    s3_region: Option<String>,
    /// The profile of ~/.aws/config and ~/.aws/credentials to read (default: AWS_PROFILE, then
    /// default). Credentials come from AWS's standard chain: the environment, the profile
    /// (static keys, SSO, credential_process, role assumption), web identity, ECS, EC2.
    #[arg(long, env = "FLOE_S3_PROFILE")]
    s3_profile: Option<String>,
    /// Path-style S3 requests (MinIO, LocalStack, SeaweedFS need this).
    #[arg(long, env = "FLOE_S3_PATH_STYLE", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    s3_path_style: bool,
    /// Allow plain-HTTP S3 endpoints (local stores).
    #[arg(long, env = "FLOE_S3_ALLOW_HTTP", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    s3_allow_http: bool,
    /// Create the S3 bucket at start if it is missing (local stores).
    #[arg(long, env = "FLOE_CREATE_BUCKET", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    create_bucket: bool,
    /// Injected object-store latency: none, s3-standard, s3-express,
    /// p50=20ms,p99=200ms[,bandwidth=100MB/s], or a model file (`floe bench calibrate`).
    #[arg(long, env = "FLOE_OBJECT_STORE_LATENCY", default_value = "none")]
    object_store_latency: String,
    /// Injected object-store faults: none, or rate=0.1[,kinds=500+503+timeout+reset+lost-put+short-get][,hang=200ms].
    #[arg(long, env = "FLOE_OBJECT_STORE_FAULTS", default_value = "none")]
    object_store_faults: String,
    /// Seed for injected latency and faults.
    #[arg(long, env = "FLOE_OBJECT_STORE_SEED", default_value_t = 1)]
    object_store_seed: u64,
    /// Attempts per object-store request, the first included.
    #[arg(long, env = "FLOE_OBJECT_STORE_ATTEMPTS", default_value_t = 8)]
    object_store_attempts: u32,
    /// First retry backoff (doubles per attempt, with jitter, up to 2s).
    #[arg(long, env = "FLOE_OBJECT_STORE_BACKOFF", value_parser = humantime::parse_duration, default_value = "25ms")]
    object_store_backoff: Duration,
    /// No retry starts after this long since a request's first attempt.
    #[arg(long, env = "FLOE_OBJECT_STORE_DEADLINE", value_parser = humantime::parse_duration, default_value = "20s")]
    object_store_deadline: Duration,
    /// One attempt's time limit.
    #[arg(long, env = "FLOE_OBJECT_STORE_REQUEST_TIMEOUT", value_parser = humantime::parse_duration, default_value = "10s")]
    object_store_request_timeout: Duration,
    /// The PUT budget: one PUT per interval (e.g. 5ms, 250ms), plus one per object-bytes-max
    /// accepted; an object is sealed as soon as the budget allows.
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
    /// Memory for blocks of objects: this agent's uploads and what fetches read (0 keeps none).
    #[arg(long, alias = "object-cache-bytes-max", env = "FLOE_BLOCK_CACHE_BYTES_MAX", default_value_t = 256 * 1024 * 1024)]
    block_cache_bytes_max: u64,
    /// The unit of the read path's caching and GETs (4 KiB to 64 MiB).
    #[arg(long, env = "FLOE_READ_BLOCK_BYTES", default_value_t = 4 * 1024 * 1024)]
    read_block_bytes: u64,
    /// Local disk for blocks of objects (the hot tier; 0 runs without one). Defaults to 1 GiB
    /// with a remote object store and 0 with local files (which are already on this disk).
    #[arg(long, env = "FLOE_HOT_TIER_BYTES_MAX")]
    hot_tier_bytes_max: Option<u64>,
    /// The hot tier's directory (default: `hot` under the data directory).
    #[arg(long, env = "FLOE_HOT_TIER_DIR")]
    hot_tier_dir: Option<PathBuf>,
    /// Fetch the next block ahead of a sequential reader.
    #[arg(long, env = "FLOE_READ_AHEAD", default_value_t = true, action = clap::ArgAction::Set)]
    read_ahead: bool,
    /// Largest record batch accepted (Kafka's message.max.bytes: the default of a topic's
    /// max.message.bytes).
    #[arg(long, env = "FLOE_BATCH_BYTES_MAX", default_value_t = 1024 * 1024 + 12)]
    batch_bytes_max: usize,
    /// Run background jobs (compaction, retention, garbage collection) when holding their
    /// leases; every agent may.
    #[arg(long, env = "FLOE_JOBS", default_value_t = true, action = clap::ArgAction::Set)]
    jobs: bool,
    /// A segment's target size (Kafka's segment.bytes; a topic's own value wins).
    #[arg(long, env = "FLOE_SEGMENT_BYTES", default_value_t = 64 * 1024 * 1024)]
    segment_bytes: u64,
    /// Runs younger than this stay in their produce objects (bounds each partition's
    /// uncompacted tail).
    #[arg(long, env = "FLOE_COMPACTION_LAG", value_parser = humantime::parse_duration, default_value = "10m")]
    compaction_lag: Duration,
    /// How often a compactor looks at its partitions.
    #[arg(long, env = "FLOE_COMPACTION_INTERVAL", value_parser = humantime::parse_duration, default_value = "10s")]
    compaction_interval: Duration,
    /// How often retention is applied and dead objects are deleted (Kafka's
    /// log.retention.check.interval.ms); the first time one interval after start.
    #[arg(long, env = "FLOE_COLLECTION_INTERVAL", value_parser = humantime::parse_duration, default_value = "5m")]
    collection_interval: Duration,
    /// How long an unreferenced object stays before it is deleted (reads in flight finish).
    #[arg(long, env = "FLOE_DEAD_OBJECT_GRACE", value_parser = humantime::parse_duration, default_value = "5m")]
    dead_object_grace: Duration,
    /// How often the object store is listed for orphans (uploads never committed).
    #[arg(long, env = "FLOE_ORPHAN_SWEEP_INTERVAL", value_parser = humantime::parse_duration, default_value = "10m")]
    orphan_sweep_interval: Duration,
    /// How old an unknown object must be to be deleted as an orphan.
    #[arg(long, env = "FLOE_ORPHAN_GRACE", value_parser = humantime::parse_duration, default_value = "1h")]
    orphan_grace: Duration,
    /// Memory for segment footers (the local index cache).
    #[arg(long, env = "FLOE_INDEX_CACHE_BYTES_MAX", default_value_t = 64 * 1024 * 1024)]
    index_cache_bytes_max: u64,
    /// This node's id: its member id in the metadata quorum and its Kafka broker id.
    #[arg(long, env = "FLOE_NODE_ID", default_value_t = 0)]
    node_id: u64,
    /// meta,agent: votes in the metadata quorum and serves Kafka; agent: serves Kafka and
    /// follows the quorum's log as a learner (stateless: rebuilt from a snapshot at start).
    #[arg(long, env = "FLOE_ROLES", default_value = "meta,agent")]
    roles: String,
    /// The quorum's voters and their Raft addresses: 1=host:port,2=host:port,3=host:port.
    /// Empty: a quorum of this node alone.
    #[arg(long, env = "FLOE_META_PEERS", default_value = "")]
    meta_peers: String,
    /// This node's Raft address (default: its entry in --meta-peers); agents need one.
    #[arg(long, env = "FLOE_RAFT_ADDR")]
    raft_addr: Option<String>,
    /// A file holding the cluster's shared secret (at least 16 bytes): every request on the
    /// internal listener (Raft, forwarding, joins) is signed with it, and a request without
    /// it is refused. Required when the Raft address is not a loopback address.
    #[arg(long, env = "FLOE_CLUSTER_SECRET_FILE")]
    cluster_secret_file: Option<std::path::PathBuf>,
    /// Availability zone of this agent: clients of the zone (client.id containing
    /// floe_az=<zone>) are routed to its agents.
    #[arg(long, env = "FLOE_ZONE")]
    zone: Option<String>,
    /// How long a new consumer group waits for more members before its first generation
    /// (Kafka's group.initial.rebalance.delay.ms).
    #[arg(long, env = "FLOE_GROUP_INITIAL_REBALANCE_DELAY", value_parser = humantime::parse_duration, default_value = "3s")]
    group_initial_rebalance_delay: Duration,
    /// How often members of consumer groups using the KIP-848 protocol heartbeat
    /// (Kafka's group.consumer.heartbeat.interval.ms).
    #[arg(long, env = "FLOE_GROUP_CONSUMER_HEARTBEAT_INTERVAL", value_parser = humantime::parse_duration, default_value = "5s")]
    group_consumer_heartbeat_interval: Duration,
    /// How long a KIP-848 group member may stay silent before it is removed
    /// (Kafka's group.consumer.session.timeout.ms).
    #[arg(long, env = "FLOE_GROUP_CONSUMER_SESSION_TIMEOUT", value_parser = humantime::parse_duration, default_value = "45s")]
    group_consumer_session_timeout: Duration,
    /// The longest transaction timeout a producer may ask for, at most 15m (Kafka's
    /// transaction.max.timeout.ms).
    #[arg(long, env = "FLOE_TRANSACTION_MAX_TIMEOUT", value_parser = humantime::parse_duration, default_value = "15m")]
    transaction_max_timeout: Duration,
    /// The transaction version Kafka 4 clients are told to use: 1, or 2 (KIP-890 part 2: a
    /// new epoch per transaction, partitions joined by Produce itself).
    #[arg(long, env = "FLOE_TRANSACTION_VERSION", default_value_t = 1)]
    transaction_version: i16,
    /// A learner agent whose registration lapsed this long ago is removed from the metadata
    /// quorum (it rejoins when it starts again).
    #[arg(long, env = "FLOE_REMOVE_DEPARTED_AGENTS_AFTER", value_parser = humantime::parse_duration, default_value = "60s")]
    remove_departed_agents_after: Duration,
    /// Metadata log entries between snapshots.
    #[arg(long, env = "FLOE_SNAPSHOT_EVERY", default_value_t = 10_000)]
    snapshot_every: u64,
    /// Broker ids this agent is shown as (its lanes): clients open a connection per id, so a
    /// topic's partitions travel over that many connections, each with its own requests in
    /// flight (a single producer is not held to one connection's five). Every lane beyond
    /// the first has a port of its own on each listener's interface, advertised with the
    /// listener's host. Set the same on every agent; listeners × lanes may be at most 16.
    #[arg(long, env = "FLOE_BROKER_IDS_PER_AGENT", default_value_t = 1)]
    broker_ids_per_agent: u16,
    /// The lanes' ports, from this one up (lane 1 of the first listener first); unset, the
    /// system picks free ports. Fix them where clients reach agents through a firewall.
    #[arg(long, env = "FLOE_LANE_PORT_BASE")]
    lane_port_base: Option<u16>,
    /// On SIGTERM (or `POST /v1/drain`) the agent drains: /readyz turns 503, it leaves the
    /// registry, stops accepting, answers what it read and seals what waits; it exits when
    /// nothing is left or after this long. Keep it below the orchestrator's grace period.
    #[arg(long, env = "FLOE_DRAIN_TIMEOUT", value_parser = humantime::parse_duration, default_value = "25s")]
    drain_timeout: Duration,
    /// Client connections at once (Kafka's max.connections); beyond it none is accepted
    /// until one closes.
    #[arg(long, env = "FLOE_CONNECTIONS_MAX", default_value_t = 10_000)]
    connections_max: usize,
    /// Client connections at once from one address (Kafka's max.connections.per.ip).
    #[arg(long, env = "FLOE_CONNECTIONS_PER_IP_MAX", default_value_t = 10_000)]
    connections_per_ip_max: usize,
    /// A connection without a request for this long is closed (Kafka's connections.max.idle.ms).
    #[arg(long, env = "FLOE_CONNECTIONS_MAX_IDLE", value_parser = humantime::parse_duration, default_value = "10m")]
    connections_max_idle: Duration,
}

/// Parses `1=host:port,2=host:port`.
fn parse_meta_peers(text: &str) -> anyhow::Result<std::collections::BTreeMap<NodeId, String>> {
    let mut peers = std::collections::BTreeMap::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (id, addr) = part
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--meta-peers entry {part:?} is not id=host:port"))?;
        let id: u64 = id
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("--meta-peers entry {part:?}: {id:?} is not a node id"))?;
        if !addr.contains(':') {
            anyhow::bail!("--meta-peers entry {part:?}: {addr:?} is not host:port");
        }
        if peers.insert(NodeId(id), addr.trim().to_string()).is_some() {
            anyhow::bail!("--meta-peers names node {id} twice");
        }
    }
    Ok(peers)
}

/// Parses `meta,agent` or `agent` into "votes in the quorum".
fn parse_roles(text: &str) -> anyhow::Result<bool> {
    let roles: Vec<&str> = text.split(',').map(str::trim).collect();
    if let Some(bad) = roles.iter().find(|r| !matches!(**r, "meta" | "agent")) {
        anyhow::bail!("unknown role {bad:?}: roles are meta and agent");
    }
    if !roles.contains(&"agent") {
        anyhow::bail!("--roles must include agent: every node serves Kafka");
    }
    Ok(roles.contains(&"meta"))
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
        CommandLine::Cluster { admin, command } => {
            cli::run_admin(admin, cli::Admin::Cluster(command))
        }
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = Config::local(args.data_dir);
    config.kafka_addr = args.kafka_addr;
    config.advertised_addr = args.advertised_addr;
    config.admin_addr = (args.admin_addr != "off").then_some(args.admin_addr);
    config.security.admin_token = match &args.admin_token_file {
        Some(path) => Some(
            floe::security::Secret::from_file(path)
                .with_context(|| format!("reading the admin token file {}", path.display()))?,
        ),
        None => None,
    };
    config.security.admin_metrics_open = args.admin_metrics_open;
    if !args.listeners.is_empty() {
        let listeners = floe::security::listeners::parse(
            &args.listeners,
            &args.advertised_listeners,
            &args.listener_security_protocol_map,
        )?;
        if let Some(primary) = listeners.first() {
            config.kafka_addr = primary.bind.clone();
            config.advertised_addr = primary.advertised.clone().unwrap_or_default();
        }
        config.security.listeners = listeners;
    } else if !args.advertised_listeners.is_empty() {
        anyhow::bail!("--advertised-listeners needs --listeners");
    }
    let client_auth = floe::security::tls::ClientAuth::parse(&args.ssl_client_auth)
        .context("--ssl-client-auth must be none, requested or required")?;
    config.security.tls = match (args.ssl_certificate_file, args.ssl_key_file) {
        (Some(certificate_chain), Some(private_key)) => Some(floe::security::tls::TlsSettings {
            certificate_chain,
            private_key,
            client_ca: args.ssl_truststore_file,
            client_auth,
            reload_interval: args.ssl_reload_interval,
        }),
        (None, None) => None,
        _ => anyhow::bail!("--ssl-certificate-file and --ssl-key-file go together"),
    };
    config.security.sasl_mechanisms = args
        .sasl_enabled_mechanisms
        .split(',')
        .map(|m| m.trim().to_ascii_uppercase())
        .filter(|m| !m.is_empty())
        .collect();
    config.security.plain_users_file = args.sasl_plain_users_file;
    config.security.oauth_jwks_file = args.sasl_oauthbearer_jwks_file;
    config.security.oauth_expected_issuer = args.sasl_oauthbearer_expected_issuer;
    config.security.oauth_expected_audience = args
        .sasl_oauthbearer_expected_audience
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect();
    config.security.reauth_max =
        (!args.connections_max_reauth.is_zero()).then_some(args.connections_max_reauth);
    config.security.acl_authorizer = match args.authorizer.as_str() {
        "none" => false,
        "acl" => true,
        other => anyhow::bail!("--authorizer must be none or acl, not '{other}'"),
    };
    config.security.super_users = args
        .super_users
        .split(';')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(String::from)
        .collect();
    config.security.allow_everyone_if_no_acl_found = args.allow_everyone_if_no_acl_found;
    config.security.ready_probe_interval = args.ready_probe_interval;
    config.object_store = ObjectStoreConfig {
        url: args.object_store,
        s3_endpoint: args.s3_endpoint,
        s3_region: args.s3_region,
        s3_profile: args.s3_profile,
        s3_path_style: args.s3_path_style,
        s3_allow_http: args.s3_allow_http,
        create_bucket: args.create_bucket,
        latency: floe::store::latency_model_file::parse_model(&args.object_store_latency)
            .map_err(anyhow::Error::msg)?,
        faults: FaultPlan::parse(&args.object_store_faults).map_err(anyhow::Error::msg)?,
        retry: RetryPolicy {
            attempts_max: args.object_store_attempts.max(1),
            backoff_base: args.object_store_backoff,
            deadline: args.object_store_deadline,
            request_timeout: args.object_store_request_timeout,
            ..RetryPolicy::default()
        },
        chaos_seed: args.object_store_seed,
    };
    // The local filesystem answers in about a millisecond and costs nothing per request, so a
    // short interval costs nothing there; remote stores bill per PUT, so they default to 250 ms.
    let remote = config.object_store.is_remote() || config.object_store.latency.is_some();
    config.flush_interval = args.flush_interval.unwrap_or(if remote {
        Duration::from_millis(250)
    } else {
        Config::LOCAL_FLUSH_INTERVAL
    });
    config.object_bytes_max = args.object_bytes_max;
    config.auto_create_topics = args.auto_create_topics;
    config.default_partitions = args.default_partitions;
    config.produce_buffer_bytes_max = args.produce_buffer_bytes_max;
    config.batch_bytes_max = args.batch_bytes_max;
    config.read = floe::config::ReadConfig {
        block_bytes: args.read_block_bytes,
        block_cache_bytes_max: args.block_cache_bytes_max,
        hot_tier_bytes_max: args.hot_tier_bytes_max.unwrap_or(if remote {
            1024 * 1024 * 1024
        } else {
            0
        }),
        hot_tier_dir: args.hot_tier_dir,
        read_ahead: args.read_ahead,
    };
    config.lifecycle = floe::config::LifecycleConfig {
        jobs: args.jobs,
        segment_bytes: args.segment_bytes,
        compaction_lag: args.compaction_lag,
        compaction_interval: args.compaction_interval,
        collection_interval: args.collection_interval,
        dead_object_grace: args.dead_object_grace,
        orphan_sweep_interval: args.orphan_sweep_interval,
        orphan_grace: args.orphan_grace,
        index_cache_bytes_max: args.index_cache_bytes_max,
    };
    config.zone = args.zone;
    config.group_initial_rebalance_delay = args.group_initial_rebalance_delay;
    config.group_consumer_heartbeat_interval = args.group_consumer_heartbeat_interval;
    config.group_consumer_session_timeout = args.group_consumer_session_timeout;
    config.transaction_version = args.transaction_version;
    config.transaction_max_timeout_ms =
        i64::try_from(args.transaction_max_timeout.as_millis()).unwrap_or(i64::MAX);
    config.remove_departed_agents_after = args.remove_departed_agents_after;
    config.drain_timeout = args.drain_timeout;
    config.connections_max = args.connections_max;
    config.connections_per_ip_max = args.connections_per_ip_max;
    config.connection_idle_timeout = args.connections_max_idle;
    config.broker_ids_per_agent = args.broker_ids_per_agent;
    config.lane_port_base = args.lane_port_base;
    config.quorum = floe::metadata::quorum::QuorumConfig {
        voters: parse_meta_peers(&args.meta_peers)?,
        raft_addr: args.raft_addr,
        voter: parse_roles(&args.roles)?,
        snapshot_every: args.snapshot_every,
        cluster_secret: match &args.cluster_secret_file {
            Some(path) => Some(floe::security::cluster_auth::ClusterSecret::from_file(
                path,
            )?),
            None => None,
        },
        ..floe::metadata::quorum::QuorumConfig::single(NodeId(args.node_id))
    };

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
