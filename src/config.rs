//! One validated configuration: every limit has a name and a default.

use crate::metadata::quorum::QuorumConfig;
use crate::store::open::ObjectStoreConfig;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Config {
    pub kafka_addr: String,
    /// Admin HTTP address (health, metrics, JSON views); `None` disables it.
    pub admin_addr: Option<String>,
    /// host:port that clients are told to connect to (Metadata, FindCoordinator).
    pub advertised_addr: String,
    pub data_dir: PathBuf,
    pub object_store: ObjectStoreConfig,
    pub flush_interval: Duration,
    pub object_bytes_max: usize,
    pub auto_create_topics: bool,
    pub default_partitions: i32,
    /// Largest frame a client may send (Kafka's socket.request.max.bytes).
    pub frame_bytes_max: usize,
    /// Largest record batch accepted (Kafka's max.message.bytes).
    pub batch_bytes_max: usize,
    /// Produce bytes accepted but not yet committed, across all connections. Beyond it,
    /// produce requests wait (and their connections stop being read).
    pub produce_buffer_bytes_max: usize,
    /// Objects being uploaded at once.
    pub uploads_in_flight_max: usize,
    /// Requests read from one connection before its responses are written.
    pub connection_requests_in_flight_max: usize,
    /// Request bytes read but not yet answered, across all connections. Beyond it no
    /// connection reads another request until some are answered.
    pub request_bytes_in_flight_max: usize,
    /// Most bytes one Fetch response carries, whatever the client asks (Kafka's
    /// `fetch.max.bytes`, 55 MiB); the first batch may exceed it, as in Kafka.
    pub fetch_bytes_max: usize,
    /// Bytes that Fetch requests read and hold at once, across all connections: a fetch
    /// reserves what it plans to read before it reads, and waits while they are taken.
    pub fetch_bytes_in_flight_max: usize,
    /// Client connections at once (Kafka's `max.connections`); beyond it no connection is
    /// accepted until one closes.
    pub connections_max: usize,
    /// Client connections at once from one address (Kafka's `max.connections.per.ip`); a
    /// connection beyond it is closed at once. Behind a load balancer every connection comes
    /// from the balancer's address.
    pub connections_per_ip_max: usize,
    /// A connection with no request for this long is closed (Kafka's
    /// `connections.max.idle.ms`).
    pub connection_idle_timeout: Duration,
    /// How long a refused login waits for its answer (Kafka's
    /// `connection.failed.authentication.delay.ms`): guessing passwords costs time.
    pub failed_authentication_delay: Duration,
    /// The read path's tiers.
    pub read: ReadConfig,
    /// This node's place in the metadata quorum (its id is also its Kafka broker id).
    pub quorum: QuorumConfig,
    /// Who may use the admin HTTP and the Kafka listeners, and how they prove it.
    pub security: SecurityConfig,
    /// The availability zone this agent serves (clients in it are routed to it).
    pub zone: Option<String>,
    /// Broker ids each agent is shown as, all at its address (see `placement`): a client opens
    /// a connection per id, so its partitions spread over that many connections.
    pub broker_ids_per_agent: u16,
    /// The first port of the lanes' own ports (lane 1 of the first listener, then up); `None`:
    /// ports the system picks.
    pub lane_port_base: Option<u16>,
    /// How long an agent stays in Metadata answers without renewing its registration.
    pub agent_lease: Duration,
    /// How long a drain (SIGTERM, `POST /v1/drain`) may take before the process exits with
    /// what is left unanswered.
    pub drain_timeout: Duration,
    /// How long a new group waits for more members before its first generation
    /// (Kafka's group.initial.rebalance.delay.ms).
    pub group_initial_rebalance_delay: Duration,
    /// How often members of consumer (KIP-848) groups heartbeat
    /// (Kafka's group.consumer.heartbeat.interval.ms).
    pub group_consumer_heartbeat_interval: Duration,
    /// How long a consumer group member may stay silent before it is removed
    /// (Kafka's group.consumer.session.timeout.ms).
    pub group_consumer_session_timeout: Duration,
    /// Largest consumer group (Kafka's group.consumer.max.size); bounds coordinator memory.
    pub group_consumer_max_size: usize,
    /// Share groups (KIP-932), Kafka's group.share.* broker configs.
    pub share: ShareConfig,
    /// An agent whose registration lapsed this long ago leaves the Raft membership.
    pub remove_departed_agents_after: Duration,
    /// Seed of the node's random generator (topic ids, object keys, member ids, retry
    /// jitter); `None`, as in production, seeds it from the operating system. For tests and
    /// simulations only: ids drawn from it must be unique across the cluster and its history,
    /// so every start of every node needs a seed no other start used (the node id is mixed in).
    pub seed: Option<u64>,
    /// Background jobs: compaction, retention, garbage collection.
    pub lifecycle: LifecycleConfig,
    /// The longest `transaction.timeout.ms` a producer may ask for (Kafka's
    /// `transaction.max.timeout.ms`); at most the state's own cap, 15 minutes.
    pub transaction_max_timeout_ms: i64,
    /// The `transaction.version` feature ApiVersions finalizes: 2 makes Kafka 4 clients use
    /// transaction version 2 (KIP-890 part 2); 1 keeps them on version 1.
    pub transaction_version: i16,
}

/// The read path's tiers (`tiers`): blocks of objects in memory and on local disk.
#[derive(Debug, Clone)]
pub struct ReadConfig {
    /// The unit of caching and of the read path's GETs.
    pub block_bytes: u64,
    /// Memory for blocks: this agent's uploads and what fetches read (0 keeps none).
    pub block_cache_bytes_max: u64,
    /// Local disk for blocks (the hot tier); 0 runs without one.
    pub hot_tier_bytes_max: u64,
    /// The hot tier's directory; `None` is `hot` under the data directory.
    pub hot_tier_dir: Option<PathBuf>,
    /// Fetch the next block ahead of a reader that reached the second half of one.
    pub read_ahead: bool,
}

impl Default for ReadConfig {
    fn default() -> ReadConfig {
        ReadConfig {
            block_bytes: 4 * 1024 * 1024,
            block_cache_bytes_max: 256 * 1024 * 1024,
            hot_tier_bytes_max: 0,
            hot_tier_dir: None,
            read_ahead: true,
        }
    }
}

impl ReadConfig {
    pub fn tier_settings(&self, data_dir: &std::path::Path) -> crate::read_cache::TierSettings {
        let dir = self
            .hot_tier_dir
            .clone()
            .unwrap_or_else(|| data_dir.join("hot"));
        crate::read_cache::TierSettings {
            block_bytes: self.block_bytes,
            memory_bytes_max: self.block_cache_bytes_max,
            disk: (self.hot_tier_bytes_max > 0).then_some((dir, self.hot_tier_bytes_max)),
            read_ahead: self.read_ahead,
        }
    }
}

/// The storage lifecycle's settings (`jobs`).
#[derive(Debug, Clone)]
pub struct LifecycleConfig {
    /// Whether this agent takes job leases (the `jobs` role). Leases keep agents from doing
    /// the same job, so every agent may have it.
    pub jobs: bool,
    /// A segment's target size (Kafka's `segment.bytes`; a topic's own value wins).
    pub segment_bytes: u64,
    /// Runs younger than this are left in their produce objects: it bounds the uncompacted
    /// tail of each partition's index.
    pub compaction_lag: Duration,
    /// How often a compactor looks at its shards' partitions.
    pub compaction_interval: Duration,
    /// How often retention is applied and dead objects are deleted (Kafka's
    /// `log.retention.check.interval.ms`).
    pub collection_interval: Duration,
    /// How long an object stays in the store after its last reference went, so that reads
    /// planned before finish.
    pub dead_object_grace: Duration,
    /// How often the store is listed for orphans, and how old an unknown object must be to be
    /// one (an upload whose commit never happened; commits come within seconds of uploads).
    pub orphan_sweep_interval: Duration,
    pub orphan_grace: Duration,
    /// Memory for segment footers (the local index cache fetches go through).
    pub index_cache_bytes_max: u64,
    /// The most memory a cleaning pass's key map takes, about 27 bytes a key (Kafka's
    /// `log.cleaner.dedupe.buffer.size`): a dirty section with more keys is cleaned in parts.
    pub cleaner_dedupe_buffer_bytes: u64,
}

impl Default for LifecycleConfig {
    fn default() -> LifecycleConfig {
        LifecycleConfig {
            jobs: true,
            segment_bytes: 64 * 1024 * 1024,
            compaction_lag: Duration::from_secs(600),
            compaction_interval: Duration::from_secs(10),
            collection_interval: Duration::from_secs(300),
            dead_object_grace: Duration::from_secs(300),
            orphan_sweep_interval: Duration::from_secs(600),
            orphan_grace: Duration::from_secs(3600),
            index_cache_bytes_max: 64 * 1024 * 1024,
            cleaner_dedupe_buffer_bytes: 128 * 1024 * 1024,
        }
    }
}

/// Security settings (`security`, `admin`).
#[derive(Debug, Clone)]
pub struct SecurityConfig {
    /// The bearer token the admin API's mutations and cluster views require. Without one
    /// they are open on a loopback admin address and refused on any other.
    pub admin_token: Option<crate::security::Secret>,
    /// Whether `/metrics` stays open when the admin API requires a token (`/healthz` and
    /// `/readyz` always do).
    pub admin_metrics_open: bool,
    /// `/readyz` probes the object store at most this often; between probes it answers the
    /// last result.
    pub ready_probe_interval: Duration,
    /// The Kafka listeners, the first one primary (its advertised address is the agent's
    /// registry address). Empty: one `PLAINTEXT` listener on `kafka_addr`.
    pub listeners: Vec<crate::security::listeners::ListenerConfig>,
    /// The TLS settings every `SSL` and `SASL_SSL` listener uses.
    pub tls: Option<crate::security::tls::TlsSettings>,
    /// The SASL mechanisms offered (Kafka's `sasl.enabled.mechanisms`).
    pub sasl_mechanisms: Vec<String>,
    /// `name:password` lines for SASL/PLAIN; users not in it are checked against their
    /// SCRAM credentials.
    pub plain_users_file: Option<PathBuf>,
    /// OAUTHBEARER: the JWKS file tokens are verified against, and what they must say.
    pub oauth_jwks_file: Option<PathBuf>,
    pub oauth_expected_issuer: Option<String>,
    pub oauth_expected_audience: Vec<String>,
    /// Kafka's `connections.max.reauth.ms`: a SASL session lasts at most this long without
    /// re-authenticating. `None`: sessions never expire.
    pub reauth_max: Option<Duration>,
    /// Whether ACLs are enforced (Kafka's `authorizer.class.name` set to the standard one).
    pub acl_authorizer: bool,
    /// Principals that may do everything (`super.users`, `User:alice`).
    pub super_users: Vec<String>,
    /// Kafka's `allow.everyone.if.no.acl.found`.
    pub allow_everyone_if_no_acl_found: bool,
}

impl Default for SecurityConfig {
    fn default() -> SecurityConfig {
        SecurityConfig {
            admin_token: None,
            admin_metrics_open: true,
            ready_probe_interval: Duration::from_secs(5),
            listeners: Vec::new(),
            tls: None,
            sasl_mechanisms: vec![
                "PLAIN".into(),
                "SCRAM-SHA-256".into(),
                "SCRAM-SHA-512".into(),
                "OAUTHBEARER".into(),
            ],
            plain_users_file: None,
            oauth_jwks_file: None,
            oauth_expected_issuer: None,
            oauth_expected_audience: Vec::new(),
            reauth_max: None,
            acl_authorizer: false,
            super_users: Vec::new(),
            allow_everyone_if_no_acl_found: false,
        }
    }
}

impl SecurityConfig {
    /// How often the TLS files are checked for changes (changed files load without a restart).
    pub const TLS_RELOAD_INTERVAL: Duration = Duration::from_secs(30);

    /// The listeners to bind: the configured ones, or one `PLAINTEXT` listener at
    /// `kafka_addr` advertising `advertised_addr`.
    pub fn listeners(
        &self,
        kafka_addr: &str,
        advertised_addr: &str,
    ) -> Vec<crate::security::listeners::ListenerConfig> {
        if !self.listeners.is_empty() {
            return self.listeners.clone();
        }
        vec![crate::security::listeners::ListenerConfig {
            name: "PLAINTEXT".into(),
            protocol: crate::security::listeners::SecurityProtocol::Plaintext,
            bind: kafka_addr.to_string(),
            advertised: (!advertised_addr.is_empty()).then(|| advertised_addr.to_string()),
        }]
    }
}

impl Config {
    /// The flush interval of stores that do not bill per request (local files, memory): a
    /// PUT into the embedded store's packs costs about a millisecond and shares one
    /// `fdatasync` with the PUTs beside it, so sealing sooner costs nothing and answers the
    /// producer sooner. 2 ms moved 20–30% more than 5 ms with one default producer, at less
    /// CPU per GB (`scripts/produce_bench.py`).
    pub const LOCAL_FLUSH_INTERVAL: Duration = Duration::from_millis(2);

    /// The flush interval of stores that bill per request (S3, GCS, Azure): a PUT costs money,
    /// so objects are sealed at most four times a second (the knob of the cost-versus-latency
    /// experiment).
    pub const REMOTE_FLUSH_INTERVAL: Duration = Duration::from_millis(250);

    /// Local disk for blocks of objects with a remote store (with local files the objects are
    /// already on this disk, so the default is none).
    pub const REMOTE_HOT_TIER_BYTES_MAX: u64 = 1024 * 1024 * 1024;

    /// Where `floe serve` keeps its data unless told otherwise.
    pub const DATA_DIR: &'static str = "./floe-data";

    /// The defaults that differ when objects live in a remote store (or one made to look
    /// remote with injected latency): sealed less often, read through a disk tier.
    pub fn for_remote_store(&mut self) {
        self.flush_interval = Config::REMOTE_FLUSH_INTERVAL;
        self.read.hot_tier_bytes_max = Config::REMOTE_HOT_TIER_BYTES_MAX;
    }

    /// The embedded default: everything under `data_dir`, objects packed in local files.
    pub fn local(data_dir: PathBuf) -> Config {
        Config {
            kafka_addr: "127.0.0.1:9092".into(),
            admin_addr: Some("127.0.0.1:9644".into()),
            advertised_addr: String::new(),
            data_dir,
            object_store: ObjectStoreConfig {
                chaos_seed: 1,
                ..ObjectStoreConfig::default()
            },
            flush_interval: Config::LOCAL_FLUSH_INTERVAL,
            object_bytes_max: 8 * 1024 * 1024,
            auto_create_topics: true,
            default_partitions: 1,
            frame_bytes_max: crate::protocol::frame::DEFAULT_FRAME_BYTES_MAX,
            batch_bytes_max: 1024 * 1024 + 12,
            produce_buffer_bytes_max: 256 * 1024 * 1024,
            uploads_in_flight_max: 16,
            connection_requests_in_flight_max: 32,
            request_bytes_in_flight_max: 256 * 1024 * 1024,
            quorum: QuorumConfig::single(crate::ids::NodeId(0)),
            security: SecurityConfig::default(),
            zone: None,
            broker_ids_per_agent: 1,
            lane_port_base: None,
            agent_lease: Duration::from_secs(4),
            drain_timeout: Duration::from_secs(25),
            group_initial_rebalance_delay: Duration::from_secs(3),
            group_consumer_heartbeat_interval: Duration::from_secs(5),
            group_consumer_session_timeout: Duration::from_secs(45),
            group_consumer_max_size: 10_000,
            share: ShareConfig::default(),
            remove_departed_agents_after: Duration::from_secs(60),
            seed: None,
            fetch_bytes_max: 55 * 1024 * 1024,
            fetch_bytes_in_flight_max: 256 * 1024 * 1024,
            connections_max: 10_000,
            connections_per_ip_max: 10_000,
            connection_idle_timeout: Duration::from_secs(600),
            failed_authentication_delay: Duration::from_millis(100),
            read: ReadConfig::default(),
            lifecycle: LifecycleConfig::default(),
            transaction_max_timeout_ms:
                crate::metadata::state::transactions::TRANSACTION_MAX_TIMEOUT_MS,
            transaction_version: 1,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(4096..=64 * 1024 * 1024).contains(&self.read.block_bytes) {
            return Err("read block bytes must be between 4 KiB and 64 MiB".into());
        }
        if self.object_bytes_max > crate::metadata::quorum::node::ENTRY_BYTES_MAX {
            // An object's commit lists its batches: it must fit in one Raft entry.
            return Err(format!(
                "object bytes max must be at most {} bytes",
                crate::metadata::quorum::node::ENTRY_BYTES_MAX
            ));
        }
        if let Some(addr) = self.quorum.listen_addr()
            && self.quorum.cluster_secret.is_none()
            && !crate::security::is_loopback(&addr)
        {
            // Anyone who can reach the internal listener could otherwise write to the log.
            return Err(format!(
                "the Raft address {addr} is not a loopback address: give every node the \
                 cluster's secret with --cluster-secret-file"
            ));
        }
        if self.security.acl_authorizer
            && self.quorum.listen_addr().is_some()
            && self.quorum.cluster_secret.is_none()
        {
            // Forwarded requests name their client's principal: unsigned, anyone who can reach
            // the internal listener (any local process) could claim a super user's.
            return Err(
                "ACLs on a node with a Raft address need --cluster-secret-file: forwarded requests \
                 carry their client's principal, which only a signed request may claim"
                    .into(),
            );
        }
        let listeners = self
            .security
            .listeners(&self.kafka_addr, &self.advertised_addr);
        if listeners.iter().any(|l| l.protocol.tls()) && self.security.tls.is_none() {
            return Err(
                "an SSL or SASL_SSL listener needs --ssl-certificate-file and --ssl-key-file"
                    .into(),
            );
        }
        if !(1..=2).contains(&self.transaction_version) {
            return Err("the transaction version must be 1 or 2".into());
        }
        let txn_cap = crate::metadata::state::transactions::TRANSACTION_MAX_TIMEOUT_MS;
        if !(1..=txn_cap).contains(&self.transaction_max_timeout_ms) {
            return Err(format!(
                "the transaction max timeout must be between 1 ms and {txn_cap} ms"
            ));
        }
        let lanes = self.broker_ids_per_agent;
        if !(1..=crate::placement::LANES_MAX).contains(&lanes) {
            return Err(format!(
                "broker ids per agent must be between 1 and {}",
                crate::placement::LANES_MAX
            ));
        }
        if lanes > 1 && self.quorum.node_id.0 >= crate::placement::LANE_ID_STRIDE as u64 {
            return Err(format!(
                "with more than one broker id per agent, node ids must be below {}",
                crate::placement::LANE_ID_STRIDE
            ));
        }
        // Every listener's lanes are registered endpoints, and the state keeps a bounded few.
        let endpoints = listeners.len() * usize::from(lanes);
        let endpoints_max = crate::metadata::state::security::ENDPOINTS_PER_AGENT_MAX;
        if endpoints > endpoints_max {
            return Err(format!(
                "{} listeners with {lanes} broker ids per agent need {endpoints} endpoints; an agent may register at most {endpoints_max}",
                listeners.len()
            ));
        }
        if let Some(base) = self.lane_port_base {
            let ports = listeners.len() * usize::from(lanes - 1);
            if base == 0 || usize::from(base) + ports > usize::from(u16::MAX) + 1 {
                return Err(format!(
                    "--lane-port-base {base}: the {ports} lane ports from it must lie in 1..=65535"
                ));
            }
        }
        if self.default_partitions < 1 {
            return Err("default partitions must be at least 1".into());
        }
        if self.object_bytes_max < 1024 {
            return Err("object bytes max must be at least 1 KiB".into());
        }
        if self.batch_bytes_max > self.produce_buffer_bytes_max {
            return Err("the produce buffer must hold at least one largest batch".into());
        }
        if self.frame_bytes_max > self.request_bytes_in_flight_max {
            return Err("request bytes in flight must hold at least one largest frame".into());
        }
        if self.fetch_bytes_max > self.fetch_bytes_in_flight_max {
            return Err("fetch bytes in flight must hold at least one largest fetch".into());
        }
        if self.batch_bytes_max + 1024 > self.frame_bytes_max {
            return Err("the frame maximum must exceed the batch maximum".into());
        }
        if self.connections_max == 0
            || self.connections_per_ip_max == 0
            || self.connection_idle_timeout.is_zero()
        {
            return Err("connection limits and the idle timeout must be positive".into());
        }
        if self.uploads_in_flight_max == 0 || self.connection_requests_in_flight_max == 0 {
            return Err("in-flight limits must be at least 1".into());
        }
        let l = &self.lifecycle;
        if l.segment_bytes < 1024 || l.segment_bytes > u32::MAX as u64 {
            return Err("the segment size must be between 1 KiB and 4 GiB".into());
        }
        if l.compaction_interval.is_zero()
            || l.collection_interval.is_zero()
            || l.orphan_sweep_interval.is_zero()
        {
            return Err("job intervals must be above zero".into());
        }
        if l.orphan_grace < Duration::from_secs(1) {
            return Err("the orphan grace period must be at least 1s".into());
        }
        if self.quorum.node_id.0 > i32::MAX as u64 {
            return Err("the node id must fit a Kafka broker id (at most 2147483647)".into());
        }
        if self.group_consumer_heartbeat_interval.is_zero()
            || self.group_consumer_heartbeat_interval >= self.group_consumer_session_timeout
        {
            return Err(
                "the consumer group heartbeat interval must be above zero and below the session timeout"
                    .into(),
            );
        }
        Ok(())
    }

    /// This node's Kafka broker id.
    pub fn node_id(&self) -> i32 {
        self.quorum.node_id.broker_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_lanes(lanes: u16, port_base: Option<u16>) -> Result<(), String> {
        let mut config = Config::local(std::path::PathBuf::from("data"));
        config.broker_ids_per_agent = lanes;
        config.lane_port_base = port_base;
        config.validate()
    }

    #[test]
    fn lanes_fit_the_endpoints_an_agent_registers_and_their_ports_fit_u16() {
        assert!(with_lanes(1, None).is_ok());
        assert!(with_lanes(16, None).is_ok(), "one listener, 16 endpoints");
        assert!(with_lanes(17, None).is_err());
        assert!(with_lanes(4, Some(9093)).is_ok());
        assert!(with_lanes(4, Some(0)).is_err(), "port 0 is no fixed port");
        assert!(
            with_lanes(4, Some(65_533)).is_ok(),
            "lanes 1..3 at 65533..=65535"
        );
        assert!(with_lanes(4, Some(65_534)).is_err());
    }
}

/// Share groups' broker settings, with Kafka's defaults (a group's own configs override the
/// lock duration, heartbeat interval and session timeout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareConfig {
    /// group.share.heartbeat.interval.ms
    pub heartbeat_interval: Duration,
    /// group.share.session.timeout.ms
    pub session_timeout: Duration,
    /// group.share.record.lock.duration.ms: how long a member holds records it acquired.
    pub record_lock_duration: Duration,
    /// group.share.min.record.lock.duration.ms: the shortest a group's
    /// share.record.lock.duration.ms may be.
    pub min_record_lock_duration: Duration,
    /// group.share.delivery.count.limit: a record released this many deliveries in is archived.
    pub delivery_count_limit: u16,
    /// group.share.partition.max.record.locks: the widest window of records in flight.
    pub partition_max_record_locks: u32,
    /// group.share.max.size
    pub max_size: usize,
}

impl Default for ShareConfig {
    fn default() -> ShareConfig {
        ShareConfig {
            heartbeat_interval: Duration::from_secs(5),
            session_timeout: Duration::from_secs(45),
            record_lock_duration: Duration::from_secs(30),
            min_record_lock_duration: Duration::from_secs(15),
            delivery_count_limit: 5,
            partition_max_record_locks: 2_000,
            max_size: 200,
        }
    }
}
