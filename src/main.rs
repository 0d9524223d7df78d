//! The `floe` command line: parse flags, build a Config, run.

use anyhow::Context;
use clap::{Parser, Subcommand};
use floe::bench::experiment::{self, EmbeddedBroker};
use floe::bench::load::LoadSpec;
use floe::bench::sweep::SweepSpec;
use floe::config::Config;
use floe::cost::PriceProfile;
use floe::ids::NodeId;
use floe::object::chaos::FaultPlan;
use floe::object::retry::RetryPolicy;
use floe::object::store::ObjectStoreConfig;
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
}

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
struct BenchArgs {
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
    /// az://container[/prefix] (default: <data-dir>/objects).
    #[arg(long, env = "FLOE_OBJECT_STORE", default_value = "")]
    object_store: String,
    /// S3 endpoint for S3-compatible stores, e.g. http://127.0.0.1:9000 (MinIO).
    #[arg(long, env = "FLOE_S3_ENDPOINT")]
    s3_endpoint: Option<String>,
    /// S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, then us-east-1).
    #[arg(long, env = "FLOE_S3_REGION")]
    s3_region: Option<String>,
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
    /// listener's host. Set the same on every agent.
    #[arg(long, env = "FLOE_BROKER_IDS_PER_AGENT", default_value_t = 1)]
    broker_ids_per_agent: u16,
    /// The lanes' ports, from this one up (lane 1 of the first listener first); unset, the
    /// system picks free ports. Fix them where clients reach agents through a firewall.
    #[arg(long, env = "FLOE_LANE_PORT_BASE")]
    lane_port_base: Option<u16>,
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
        s3_path_style: args.s3_path_style,
        s3_allow_http: args.s3_allow_http,
        create_bucket: args.create_bucket,
        latency: floe::object::latency_model_file::parse_model(&args.object_store_latency)
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
    // The local filesystem answers in microseconds and costs nothing per request, so a short
    // interval costs nothing there; remote stores bill per PUT, so they default to 250 ms.
    let remote = config.object_store.is_remote() || config.object_store.latency.is_some();
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
        tokio::select! {
            _ = shutdown_signal() => tracing::info!("shutting down"),
            result = &mut running.task => {
                if let Err(e) = result {
                    anyhow::bail!("the listener stopped: {e}");
                }
            }
        }
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

fn bench(args: BenchArgs) -> anyhow::Result<()> {
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
        floe::object::store::open(&config, &scratch, floe::clock::Clock::system(), rng).await;
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

/// SIGINT (Ctrl-C) or SIGTERM (containers, service managers).
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
