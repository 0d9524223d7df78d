//! `floe serve`'s flags, in groups, each applied to the `Config` beside its definition.
//!
//! A flag is written once: its field (name, environment variable, help) here, its default in
//! `Config` (read back for the help text through `defaults()`), its row in the README (a test
//! checks the README against `floe serve --help`). Defaults that depend on where the objects
//! live (local files or a remote store) are `Config`'s too (`Config::for_remote_store`).

use anyhow::Context;
use floe::config::Config;
use floe::ids::NodeId;
use floe::store::chaos::FaultPlan;
use floe::store::latency_model_file::parse_model;
use std::path::PathBuf;
use std::sync::LazyLock;

/// The defaults the help text shows: the embedded default's `Config`.
fn defaults() -> &'static Config {
    static DEFAULTS: LazyLock<Config> =
        LazyLock::new(|| Config::local(PathBuf::from(Config::DATA_DIR)));
    &DEFAULTS
}

/// A duration as flags read and show it (`250ms`, `10m`).
type Span = humantime::Duration;

fn span(duration: std::time::Duration) -> Span {
    duration.into()
}

#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    node: NodeArgs,
    #[command(flatten)]
    listeners: ListenerArgs,
    #[command(flatten)]
    tls: TlsArgs,
    #[command(flatten)]
    sasl: SaslArgs,
    #[command(flatten)]
    acls: AclArgs,
    #[command(flatten)]
    admin: AdminApiArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    produce: ProduceArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    lifecycle: LifecycleArgs,
    #[command(flatten)]
    groups: GroupArgs,
}

impl ServeArgs {
    /// The configuration these flags describe.
    pub fn config(self) -> anyhow::Result<Config> {
        let mut config = Config::local(self.node.data_dir.clone());
        self.node.apply(&mut config)?;
        self.listeners.apply(&mut config)?;
        self.tls.apply(&mut config)?;
        self.sasl.apply(&mut config);
        self.acls.apply(&mut config)?;
        self.admin.apply(&mut config)?;
        self.store.apply(&mut config)?;
        // Where the objects live decides the defaults below it; flags given still win.
        if config.object_store.is_remote() || config.object_store.latency.is_some() {
            config.for_remote_store();
        }
        self.produce.apply(&mut config);
        self.read.apply(&mut config);
        self.lifecycle.apply(&mut config);
        self.groups.apply(&mut config);
        Ok(config)
    }
}

/// This node: its data, its place in the metadata quorum, its zone, how it leaves.
#[derive(clap::Args)]
struct NodeArgs {
    /// Directory for the metadata log and, by default, the objects.
    #[arg(long, env = "FLOE_DATA_DIR", default_value = Config::DATA_DIR)]
    data_dir: PathBuf,
    /// This node's id: its member id in the metadata quorum and its Kafka broker id.
    #[arg(long, env = "FLOE_NODE_ID", default_value_t = defaults().quorum.node_id.0)]
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
    cluster_secret_file: Option<PathBuf>,
    /// Metadata log entries between snapshots.
    #[arg(long, env = "FLOE_SNAPSHOT_EVERY", default_value_t = defaults().quorum.snapshot_every)]
    snapshot_every: u64,
    /// A learner agent whose registration lapsed this long ago is removed from the metadata
    /// quorum (it rejoins when it starts again).
    #[arg(long, env = "FLOE_REMOVE_DEPARTED_AGENTS_AFTER", default_value_t = span(defaults().remove_departed_agents_after))]
    remove_departed_agents_after: Span,
    /// Availability zone of this agent: clients of the zone (client.id containing
    /// floe_az=<zone>) are routed to its agents.
    #[arg(long, env = "FLOE_ZONE")]
    zone: Option<String>,
    /// On SIGTERM (or `POST /v1/drain`) the agent drains: /readyz turns 503, it leaves the
    /// registry, stops accepting, answers what it read and seals what waits; it exits when
    /// nothing is left or after this long. Keep it below the orchestrator's grace period.
    #[arg(long, env = "FLOE_DRAIN_TIMEOUT", default_value_t = span(defaults().drain_timeout))]
    drain_timeout: Span,
}

impl NodeArgs {
    fn apply(self, config: &mut Config) -> anyhow::Result<()> {
        config.quorum = floe::metadata::quorum::QuorumConfig {
            voters: parse_meta_peers(&self.meta_peers)?,
            raft_addr: self.raft_addr,
            voter: parse_roles(&self.roles)?,
            snapshot_every: self.snapshot_every,
            cluster_secret: match &self.cluster_secret_file {
                Some(path) => Some(floe::security::cluster_auth::ClusterSecret::from_file(
                    path,
                )?),
                None => None,
            },
            ..floe::metadata::quorum::QuorumConfig::single(NodeId(self.node_id))
        };
        config.remove_departed_agents_after = self.remove_departed_agents_after.into();
        config.zone = self.zone;
        config.drain_timeout = self.drain_timeout.into();
        Ok(())
    }
}

/// Where clients connect, as what, and how many of them.
#[derive(clap::Args)]
struct ListenerArgs {
    /// Address the Kafka listener binds.
    #[arg(long, env = "FLOE_KAFKA_ADDR", default_value_t = defaults().kafka_addr.clone())]
    kafka_addr: String,
    /// host:port clients are told to connect to (defaults to the bound address).
    #[arg(long, env = "FLOE_ADVERTISED_ADDR", default_value = "")]
    advertised_addr: String,
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
    /// Broker ids this agent is shown as (its lanes): clients open a connection per id, so a
    /// topic's partitions travel over that many connections, each with its own requests in
    /// flight (a single producer is not held to one connection's five). Every lane beyond
    /// the first has a port of its own on each listener's interface, advertised with the
    /// listener's host. Set the same on every agent; listeners × lanes may be at most 16.
    #[arg(long, env = "FLOE_BROKER_IDS_PER_AGENT", default_value_t = defaults().broker_ids_per_agent)]
    broker_ids_per_agent: u16,
    /// The lanes' ports, from this one up (lane 1 of the first listener first); unset, the
    /// system picks free ports. Fix them where clients reach agents through a firewall.
    #[arg(long, env = "FLOE_LANE_PORT_BASE")]
    lane_port_base: Option<u16>,
    /// Client connections at once (Kafka's max.connections); beyond it none is accepted
    /// until one closes.
    #[arg(long, env = "FLOE_CONNECTIONS_MAX", default_value_t = defaults().connections_max)]
    connections_max: usize,
    /// Client connections at once from one address (Kafka's max.connections.per.ip).
    #[arg(long, env = "FLOE_CONNECTIONS_PER_IP_MAX", default_value_t = defaults().connections_per_ip_max)]
    connections_per_ip_max: usize,
    /// A connection without a request for this long is closed (Kafka's connections.max.idle.ms).
    #[arg(long, env = "FLOE_CONNECTIONS_MAX_IDLE", default_value_t = span(defaults().connection_idle_timeout))]
    connections_max_idle: Span,
    /// How long a refused login waits for its answer before its connection closes (Kafka's
    /// connection.failed.authentication.delay.ms).
    #[arg(long, env = "FLOE_FAILED_AUTHENTICATION_DELAY", default_value_t = span(defaults().failed_authentication_delay))]
    failed_authentication_delay: Span,
}

impl ListenerArgs {
    fn apply(self, config: &mut Config) -> anyhow::Result<()> {
        config.kafka_addr = self.kafka_addr;
        config.advertised_addr = self.advertised_addr;
        if !self.listeners.is_empty() {
            let listeners = floe::security::listeners::parse(
                &self.listeners,
                &self.advertised_listeners,
                &self.listener_security_protocol_map,
            )?;
            if let Some(primary) = listeners.first() {
                config.kafka_addr = primary.bind.clone();
                config.advertised_addr = primary.advertised.clone().unwrap_or_default();
            }
            config.security.listeners = listeners;
        } else if !self.advertised_listeners.is_empty() {
            anyhow::bail!("--advertised-listeners needs --listeners");
        }
        config.broker_ids_per_agent = self.broker_ids_per_agent;
        config.lane_port_base = self.lane_port_base;
        config.connections_max = self.connections_max;
        config.connections_per_ip_max = self.connections_per_ip_max;
        config.connection_idle_timeout = self.connections_max_idle.into();
        config.failed_authentication_delay = self.failed_authentication_delay.into();
        Ok(())
    }
}

/// TLS on the SSL and SASL_SSL listeners.
#[derive(clap::Args)]
struct TlsArgs {
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
    #[arg(long, env = "FLOE_SSL_RELOAD_INTERVAL", default_value_t = span(floe::config::SecurityConfig::TLS_RELOAD_INTERVAL))]
    ssl_reload_interval: Span,
}

impl TlsArgs {
    fn apply(self, config: &mut Config) -> anyhow::Result<()> {
        let client_auth = floe::security::tls::ClientAuth::parse(&self.ssl_client_auth)
            .context("--ssl-client-auth must be none, requested or required")?;
        config.security.tls = match (self.ssl_certificate_file, self.ssl_key_file) {
            (Some(certificate_chain), Some(private_key)) => {
                Some(floe::security::tls::TlsSettings {
                    certificate_chain,
                    private_key,
                    client_ca: self.ssl_truststore_file,
                    client_auth,
                    reload_interval: self.ssl_reload_interval.into(),
                })
            }
            (None, None) => None,
            _ => anyhow::bail!("--ssl-certificate-file and --ssl-key-file go together"),
        };
        Ok(())
    }
}

/// SASL on the SASL_PLAINTEXT and SASL_SSL listeners.
#[derive(clap::Args)]
struct SaslArgs {
    /// SASL mechanisms offered (Kafka's `sasl.enabled.mechanisms`).
    #[arg(long, env = "FLOE_SASL_ENABLED_MECHANISMS", default_value_t = defaults().security.sasl_mechanisms.join(","))]
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
    #[arg(long, env = "FLOE_CONNECTIONS_MAX_REAUTH", default_value = "0s")]
    connections_max_reauth: Span,
}

impl SaslArgs {
    fn apply(self, config: &mut Config) {
        config.security.sasl_mechanisms = self
            .sasl_enabled_mechanisms
            .split(',')
            .map(|m| m.trim().to_ascii_uppercase())
            .filter(|m| !m.is_empty())
            .collect();
        config.security.plain_users_file = self.sasl_plain_users_file;
        config.security.oauth_jwks_file = self.sasl_oauthbearer_jwks_file;
        config.security.oauth_expected_issuer = self.sasl_oauthbearer_expected_issuer;
        config.security.oauth_expected_audience = self
            .sasl_oauthbearer_expected_audience
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect();
        let reauth: std::time::Duration = self.connections_max_reauth.into();
        config.security.reauth_max = (!reauth.is_zero()).then_some(reauth);
    }
}

/// Kafka's ACL authorizer.
#[derive(clap::Args)]
struct AclArgs {
    /// none, or acl: enforce Kafka ACLs (Kafka's `authorizer.class.name` set to
    /// StandardAuthorizer).
    #[arg(long, env = "FLOE_AUTHORIZER", default_value = "none")]
    authorizer: String,
    /// Principals allowed everything, separated by ';' (Kafka's `super.users`).
    #[arg(long, env = "FLOE_SUPER_USERS", default_value = "")]
    super_users: String,
    /// Allow an operation on a resource no ACL names (Kafka's
    /// `allow.everyone.if.no.acl.found`).
    #[arg(long, env = "FLOE_ALLOW_EVERYONE_IF_NO_ACL_FOUND", default_value_t = defaults().security.allow_everyone_if_no_acl_found, action = clap::ArgAction::Set)]
    allow_everyone_if_no_acl_found: bool,
}

impl AclArgs {
    fn apply(self, config: &mut Config) -> anyhow::Result<()> {
        config.security.acl_authorizer = match self.authorizer.as_str() {
            "none" => false,
            "acl" => true,
            other => anyhow::bail!("--authorizer must be none or acl, not '{other}'"),
        };
        config.security.super_users = self
            .super_users
            .split(';')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(String::from)
            .collect();
        config.security.allow_everyone_if_no_acl_found = self.allow_everyone_if_no_acl_found;
        Ok(())
    }
}

/// The admin HTTP API.
#[derive(clap::Args)]
struct AdminApiArgs {
    /// Admin HTTP address (/healthz, /readyz, /metrics, /v1/...); "off" disables it.
    #[arg(long, env = "FLOE_ADMIN_ADDR", default_value_t = defaults().admin_addr.clone().unwrap_or_else(|| "off".into()))]
    admin_addr: String,
    /// A file holding the bearer token the admin API's views and mutations require
    /// (`Authorization: Bearer <token>`). Without one they are served only on a loopback
    /// admin address.
    #[arg(long, env = "FLOE_ADMIN_TOKEN_FILE")]
    admin_token_file: Option<PathBuf>,
    /// Whether /metrics stays open when the admin API requires a token.
    #[arg(long, env = "FLOE_ADMIN_METRICS_OPEN", default_value_t = defaults().security.admin_metrics_open, action = clap::ArgAction::Set)]
    admin_metrics_open: bool,
    /// /readyz probes the object store at most this often and answers the last result in
    /// between.
    #[arg(long, env = "FLOE_READY_PROBE_INTERVAL", default_value_t = span(defaults().security.ready_probe_interval))]
    ready_probe_interval: Span,
}

impl AdminApiArgs {
    fn apply(self, config: &mut Config) -> anyhow::Result<()> {
        config.admin_addr = (self.admin_addr != "off").then_some(self.admin_addr);
        config.security.admin_token = match &self.admin_token_file {
            Some(path) => Some(
                floe::security::Secret::from_file(path)
                    .with_context(|| format!("reading the admin token file {}", path.display()))?,
            ),
            None => None,
        };
        config.security.admin_metrics_open = self.admin_metrics_open;
        config.security.ready_probe_interval = self.ready_probe_interval.into();
        Ok(())
    }
}

/// The object store, and what is injected between floe and it.
#[derive(clap::Args)]
struct StoreArgs {
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
    #[arg(long, env = "FLOE_OBJECT_STORE_SEED", default_value_t = defaults().object_store.chaos_seed)]
    object_store_seed: u64,
    /// Attempts per object-store request, the first included.
    #[arg(long, env = "FLOE_OBJECT_STORE_ATTEMPTS", default_value_t = defaults().object_store.retry.attempts_max)]
    object_store_attempts: u32,
    /// First retry backoff (doubles per attempt, with jitter, up to 2s).
    #[arg(long, env = "FLOE_OBJECT_STORE_BACKOFF", default_value_t = span(defaults().object_store.retry.backoff_base))]
    object_store_backoff: Span,
    /// No retry starts after this long since a request's first attempt.
    #[arg(long, env = "FLOE_OBJECT_STORE_DEADLINE", default_value_t = span(defaults().object_store.retry.deadline))]
    object_store_deadline: Span,
    /// One attempt's time limit.
    #[arg(long, env = "FLOE_OBJECT_STORE_REQUEST_TIMEOUT", default_value_t = span(defaults().object_store.retry.request_timeout))]
    object_store_request_timeout: Span,
}

impl StoreArgs {
    fn apply(self, config: &mut Config) -> anyhow::Result<()> {
        let store = &mut config.object_store;
        store.url = self.object_store;
        store.s3_endpoint = self.s3_endpoint;
        store.s3_region = self.s3_region;
        store.s3_profile = self.s3_profile;
        store.s3_path_style = self.s3_path_style;
        store.s3_allow_http = self.s3_allow_http;
        store.create_bucket = self.create_bucket;
        store.latency = parse_model(&self.object_store_latency).map_err(anyhow::Error::msg)?;
        store.faults = FaultPlan::parse(&self.object_store_faults).map_err(anyhow::Error::msg)?;
        store.retry.attempts_max = self.object_store_attempts.max(1);
        store.retry.backoff_base = self.object_store_backoff.into();
        store.retry.deadline = self.object_store_deadline.into();
        store.retry.request_timeout = self.object_store_request_timeout.into();
        store.chaos_seed = self.object_store_seed;
        Ok(())
    }
}

/// The produce path: when objects are sealed, what is accepted.
#[derive(clap::Args)]
struct ProduceArgs {
    /// The PUT budget: one PUT per interval (e.g. 5ms, 250ms), plus one per object-bytes-max
    /// accepted; an object is sealed as soon as the budget allows. Default: 2ms with local
    /// files, 250ms with a remote store.
    #[arg(long, env = "FLOE_FLUSH_INTERVAL")]
    flush_interval: Option<Span>,
    /// Seal an object once it holds this many bytes.
    #[arg(long, env = "FLOE_OBJECT_BYTES_MAX", default_value_t = defaults().object_bytes_max)]
    object_bytes_max: usize,
    /// Create unknown topics when a client's Metadata request allows it.
    #[arg(long, env = "FLOE_AUTO_CREATE_TOPICS", default_value_t = defaults().auto_create_topics, action = clap::ArgAction::Set)]
    auto_create_topics: bool,
    /// Partitions of auto-created topics and of CreateTopics requests that ask for -1.
    #[arg(long, env = "FLOE_DEFAULT_PARTITIONS", default_value_t = defaults().default_partitions)]
    default_partitions: i32,
    /// Produce bytes accepted but not yet committed; beyond it producers wait.
    #[arg(long, env = "FLOE_PRODUCE_BUFFER_BYTES_MAX", default_value_t = defaults().produce_buffer_bytes_max)]
    produce_buffer_bytes_max: usize,
    /// Largest record batch accepted (Kafka's message.max.bytes: the default of a topic's
    /// max.message.bytes).
    #[arg(long, env = "FLOE_BATCH_BYTES_MAX", default_value_t = defaults().batch_bytes_max)]
    batch_bytes_max: usize,
}

impl ProduceArgs {
    fn apply(self, config: &mut Config) {
        if let Some(interval) = self.flush_interval {
            config.flush_interval = interval.into();
        }
        config.object_bytes_max = self.object_bytes_max;
        config.auto_create_topics = self.auto_create_topics;
        config.default_partitions = self.default_partitions;
        config.produce_buffer_bytes_max = self.produce_buffer_bytes_max;
        config.batch_bytes_max = self.batch_bytes_max;
    }
}

/// The read path's cache of object bytes.
#[derive(clap::Args)]
struct ReadArgs {
    /// Memory for blocks of objects: this agent's uploads and what fetches read (0 keeps none).
    #[arg(long, alias = "object-cache-bytes-max", env = "FLOE_BLOCK_CACHE_BYTES_MAX", default_value_t = defaults().read.block_cache_bytes_max)]
    block_cache_bytes_max: u64,
    /// The unit of the read path's caching and GETs (4 KiB to 64 MiB).
    #[arg(long, env = "FLOE_READ_BLOCK_BYTES", default_value_t = defaults().read.block_bytes)]
    read_block_bytes: u64,
    /// Local disk for blocks of objects (the hot tier; 0 runs without one). Defaults to 1 GiB
    /// with a remote object store and 0 with local files (which are already on this disk).
    #[arg(long, env = "FLOE_HOT_TIER_BYTES_MAX")]
    hot_tier_bytes_max: Option<u64>,
    /// The hot tier's directory (default: `hot` under the data directory).
    #[arg(long, env = "FLOE_HOT_TIER_DIR")]
    hot_tier_dir: Option<PathBuf>,
    /// Fetch the next block ahead of a sequential reader.
    #[arg(long, env = "FLOE_READ_AHEAD", default_value_t = defaults().read.read_ahead, action = clap::ArgAction::Set)]
    read_ahead: bool,
}

impl ReadArgs {
    fn apply(self, config: &mut Config) {
        let read = &mut config.read;
        read.block_cache_bytes_max = self.block_cache_bytes_max;
        read.block_bytes = self.read_block_bytes;
        if let Some(bytes) = self.hot_tier_bytes_max {
            read.hot_tier_bytes_max = bytes;
        }
        read.hot_tier_dir = self.hot_tier_dir;
        read.read_ahead = self.read_ahead;
    }
}

/// The storage lifecycle's background jobs.
#[derive(clap::Args)]
struct LifecycleArgs {
    /// Run background jobs (compaction, retention, garbage collection) when holding their
    /// leases; every agent may.
    #[arg(long, env = "FLOE_JOBS", default_value_t = defaults().lifecycle.jobs, action = clap::ArgAction::Set)]
    jobs: bool,
    /// A segment's target size (Kafka's segment.bytes; a topic's own value wins).
    #[arg(long, env = "FLOE_SEGMENT_BYTES", default_value_t = defaults().lifecycle.segment_bytes)]
    segment_bytes: u64,
    /// Runs younger than this stay in their produce objects (bounds each partition's
    /// uncompacted tail).
    #[arg(long, env = "FLOE_COMPACTION_LAG", default_value_t = span(defaults().lifecycle.compaction_lag))]
    compaction_lag: Span,
    /// How often a compactor looks at its partitions.
    #[arg(long, env = "FLOE_COMPACTION_INTERVAL", default_value_t = span(defaults().lifecycle.compaction_interval))]
    compaction_interval: Span,
    /// How often retention is applied and dead objects are deleted (Kafka's
    /// log.retention.check.interval.ms); the first time one interval after start.
    #[arg(long, env = "FLOE_COLLECTION_INTERVAL", default_value_t = span(defaults().lifecycle.collection_interval))]
    collection_interval: Span,
    /// How long an unreferenced object stays before it is deleted (reads in flight finish).
    #[arg(long, env = "FLOE_DEAD_OBJECT_GRACE", default_value_t = span(defaults().lifecycle.dead_object_grace))]
    dead_object_grace: Span,
    /// How often the object store is listed for orphans (uploads never committed).
    #[arg(long, env = "FLOE_ORPHAN_SWEEP_INTERVAL", default_value_t = span(defaults().lifecycle.orphan_sweep_interval))]
    orphan_sweep_interval: Span,
    /// How old an unknown object must be to be deleted as an orphan.
    #[arg(long, env = "FLOE_ORPHAN_GRACE", default_value_t = span(defaults().lifecycle.orphan_grace))]
    orphan_grace: Span,
    /// Memory for segment footers (the local index cache).
    #[arg(long, env = "FLOE_INDEX_CACHE_BYTES_MAX", default_value_t = defaults().lifecycle.index_cache_bytes_max)]
    index_cache_bytes_max: u64,
    /// The most memory a compacted partition's cleaning pass takes for its key map, about 27
    /// bytes a key (Kafka's log.cleaner.dedupe.buffer.size); more keys are cleaned in parts.
    #[arg(long, env = "FLOE_CLEANER_DEDUPE_BUFFER_SIZE", default_value_t = defaults().lifecycle.cleaner_dedupe_buffer_bytes)]
    cleaner_dedupe_buffer_size: u64,
}

impl LifecycleArgs {
    fn apply(self, config: &mut Config) {
        config.lifecycle = floe::config::LifecycleConfig {
            jobs: self.jobs,
            segment_bytes: self.segment_bytes,
            compaction_lag: self.compaction_lag.into(),
            compaction_interval: self.compaction_interval.into(),
            collection_interval: self.collection_interval.into(),
            dead_object_grace: self.dead_object_grace.into(),
            orphan_sweep_interval: self.orphan_sweep_interval.into(),
            orphan_grace: self.orphan_grace.into(),
            index_cache_bytes_max: self.index_cache_bytes_max,
            cleaner_dedupe_buffer_bytes: self.cleaner_dedupe_buffer_size,
        };
    }
}

/// Consumer groups and transactions.
#[derive(clap::Args)]
struct GroupArgs {
    /// How long a new consumer group waits for more members before its first generation
    /// (Kafka's group.initial.rebalance.delay.ms).
    #[arg(long, env = "FLOE_GROUP_INITIAL_REBALANCE_DELAY", default_value_t = span(defaults().group_initial_rebalance_delay))]
    group_initial_rebalance_delay: Span,
    /// How often members of consumer groups using the KIP-848 protocol heartbeat
    /// (Kafka's group.consumer.heartbeat.interval.ms).
    #[arg(long, env = "FLOE_GROUP_CONSUMER_HEARTBEAT_INTERVAL", default_value_t = span(defaults().group_consumer_heartbeat_interval))]
    group_consumer_heartbeat_interval: Span,
    /// How long a KIP-848 group member may stay silent before it is removed
    /// (Kafka's group.consumer.session.timeout.ms).
    #[arg(long, env = "FLOE_GROUP_CONSUMER_SESSION_TIMEOUT", default_value_t = span(defaults().group_consumer_session_timeout))]
    group_consumer_session_timeout: Span,
    /// How often share group members heartbeat (Kafka's group.share.heartbeat.interval.ms).
    #[arg(long, env = "FLOE_GROUP_SHARE_HEARTBEAT_INTERVAL", default_value_t = span(defaults().share.heartbeat_interval))]
    group_share_heartbeat_interval: Span,
    /// How long a share group member may stay silent before it is removed
    /// (Kafka's group.share.session.timeout.ms).
    #[arg(long, env = "FLOE_GROUP_SHARE_SESSION_TIMEOUT", default_value_t = span(defaults().share.session_timeout))]
    group_share_session_timeout: Span,
    /// How long a share group member holds the records it acquired before they go back
    /// (Kafka's group.share.record.lock.duration.ms; a group's share.record.lock.duration.ms
    /// overrides it).
    #[arg(long, env = "FLOE_GROUP_SHARE_RECORD_LOCK_DURATION", default_value_t = span(defaults().share.record_lock_duration))]
    group_share_record_lock_duration: Span,
    /// The shortest share.record.lock.duration.ms a group may set, at least 1s
    /// (Kafka's group.share.min.record.lock.duration.ms).
    #[arg(long, env = "FLOE_GROUP_SHARE_MIN_RECORD_LOCK_DURATION", default_value_t = span(defaults().share.min_record_lock_duration))]
    group_share_min_record_lock_duration: Span,
    /// Deliveries of a record before a release archives it, 2 to 10
    /// (Kafka's group.share.delivery.count.limit).
    #[arg(long, env = "FLOE_GROUP_SHARE_DELIVERY_COUNT_LIMIT", default_value_t = defaults().share.delivery_count_limit, value_parser = clap::value_parser!(u16).range(2..=10))]
    group_share_delivery_count_limit: u16,
    /// Records a share group may have in flight per partition, 100 to 10000
    /// (Kafka's group.share.partition.max.record.locks).
    #[arg(long, env = "FLOE_GROUP_SHARE_PARTITION_MAX_RECORD_LOCKS", default_value_t = defaults().share.partition_max_record_locks, value_parser = clap::value_parser!(u32).range(100..=10_000))]
    group_share_partition_max_record_locks: u32,
    /// The longest transaction timeout a producer may ask for, at most 15m (Kafka's
    /// transaction.max.timeout.ms).
    #[arg(long, env = "FLOE_TRANSACTION_MAX_TIMEOUT", default_value_t = span(std::time::Duration::from_millis(defaults().transaction_max_timeout_ms.unsigned_abs())))]
    transaction_max_timeout: Span,
    /// The transaction version Kafka 4 clients are told to use: 1, or 2 (KIP-890 part 2: a
    /// new epoch per transaction, partitions joined by Produce itself).
    #[arg(long, env = "FLOE_TRANSACTION_VERSION", default_value_t = defaults().transaction_version)]
    transaction_version: i16,
}

impl GroupArgs {
    fn apply(self, config: &mut Config) {
        config.group_initial_rebalance_delay = self.group_initial_rebalance_delay.into();
        config.group_consumer_heartbeat_interval = self.group_consumer_heartbeat_interval.into();
        config.group_consumer_session_timeout = self.group_consumer_session_timeout.into();
        config.share.heartbeat_interval = self.group_share_heartbeat_interval.into();
        config.share.session_timeout = self.group_share_session_timeout.into();
        config.share.record_lock_duration = self.group_share_record_lock_duration.into();
        config.share.min_record_lock_duration =
            std::time::Duration::from(self.group_share_min_record_lock_duration)
                .max(std::time::Duration::from_secs(1));
        config.share.delivery_count_limit = self.group_share_delivery_count_limit;
        config.share.partition_max_record_locks = self.group_share_partition_max_record_locks;
        let timeout: std::time::Duration = self.transaction_max_timeout.into();
        config.transaction_max_timeout_ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        config.transaction_version = self.transaction_version;
    }
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
