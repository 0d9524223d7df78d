//! The process root: builds every part of a node, then starts its listeners and chores.
//!
//! ```text
//! start(config)
//!   1. object store (ObjectClient: probe at start)    ┐
//!   2. internal listener bound (Raft + forwarding)    │ built in this order, each handed
//!   3. metadata quorum member (MetadataStore)         │ what it needs: nothing is bound late
//!   4. Broker { pipeline, cache, groups, clock, rng } ┘
//!   5. listeners: Kafka (server::serve) · admin HTTP (admin::serve)
//!                 · internal (quorum RPCs + server::forwarded, the requests other agents forward)
//!   6. chores: agent registration (registration), learner upkeep on voters (quorum::learners)
//! ```
//! The clock and the random generator are made here, once, and handed to every part.

pub mod drain;
pub mod registration;

use crate::clock::Clock;
use crate::config::Config;
use crate::metadata::MetadataStore;
use crate::metadata::quorum::QuorumError;
use crate::metadata::state::security::{ENDPOINTS_PER_AGENT_MAX, Endpoint};
use crate::produce::ProducePipeline;
use crate::produce::pipeline::PipelineConfig;
use crate::random::Rng;
use crate::security::listeners::ListenerConfig;
use crate::server::broker::Broker;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("cannot start the metadata quorum member")]
    Metadata(#[from] QuorumError),
    #[error(transparent)]
    ObjectStore(#[from] crate::store::open::OpenError),
    #[error("cannot set up TLS")]
    Tls(#[from] crate::security::tls::TlsError),
    #[error("cannot listen on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("data directory {path}")]
    DataDir {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A started node: its bound addresses, the broker, and the task accepting Kafka connections.
/// Dropping it stops the node's listeners and chores.
pub struct Running {
    /// The primary (first) Kafka listener's bound address.
    pub local_addr: SocketAddr,
    /// Every Kafka listener's name and bound address, and each of its lanes' (`NAME#n`).
    pub listeners: Vec<(String, SocketAddr)>,
    pub admin_addr: Option<SocketAddr>,
    pub broker: Arc<Broker>,
    pub task: JoinHandle<()>,
    /// Keeps the agent registered; finishes when the agent drains, with whether it left the
    /// registry.
    registration: JoinHandle<bool>,
    /// What `registration` finished with, once a drain has read it.
    deregistered: Option<bool>,
    /// The internal and admin listeners, learner upkeep, jobs.
    others: Vec<JoinHandle<()>>,
}

impl Running {
    /// Stops the node: its listeners and chores, then its Raft member (dropping a `Running`
    /// only does the former; Raft then notices its handle is gone and complains).
    pub async fn stop(self) {
        self.task.abort();
        self.registration.abort();
        for task in &self.others {
            task.abort();
        }
        self.broker.metadata.quorum().shutdown().await;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
        self.registration.abort();
        for task in &self.others {
            task.abort();
        }
    }
}

/// Builds the node's parts and serves until the returned tasks are dropped with the runtime.
pub async fn start(config: Config) -> Result<Running, StartError> {
    config.validate().map_err(StartError::Config)?;
    let clock = Clock::system();
    let rng = match config.seed {
        Some(seed) => Rng::seeded_for(seed, config.quorum.node_id),
        None => Rng::from_entropy(),
    };
    let data_dir = config.data_dir.clone();
    std::fs::create_dir_all(&data_dir).map_err(|source| StartError::DataDir {
        path: data_dir.display().to_string(),
        source,
    })?;
    let store = Arc::new(
        crate::store::open::open(&config.object_store, &data_dir, clock.clone(), rng.clone())
            .await?,
    );
    tracing::info!(store = store.description(), "object store ready");

    // Bound before the quorum starts, so peers that reach this node early queue instead of
    // being refused; served once the broker exists (step 5).
    let internal = match config.quorum.listen_addr() {
        Some(addr) => Some(bind(&addr).await?),
        None => None,
    };
    let metadata =
        MetadataStore::open(&data_dir.join("meta"), config.quorum.clone(), clock.clone()).await?;
    let id_path = data_dir.join("cluster-id");
    let local_cluster_id =
        registration::local_cluster_id(&id_path, &rng).map_err(|source| StartError::DataDir {
            path: id_path.display().to_string(),
            source,
        })?;
    let listener_configs = config
        .security
        .listeners(&config.kafka_addr, &config.advertised_addr);
    let tls = match &config.security.tls {
        Some(settings) if listener_configs.iter().any(|l| l.protocol.tls()) => Some(Arc::new(
            crate::security::tls::ReloadingTls::open(settings.clone())?,
        )),
        _ => None,
    };
    let mut kafka_listeners = Vec::new();
    for listener in &listener_configs {
        let tcp = bind(&listener.bind).await?;
        let addr = tcp.local_addr().map_err(|source| StartError::Listen {
            addr: listener.bind.clone(),
            source,
        })?;
        kafka_listeners.push((listener.clone(), 0u16, tcp, addr));
    }
    let local_addr = kafka_listeners
        .first()
        .map(|(_, _, _, addr)| *addr)
        .ok_or_else(|| StartError::Config("no Kafka listener".into()))?;
    kafka_listeners.extend(bind_lanes(&config, &kafka_listeners).await?);
    // What each listener advertises: its configured address, or the one it is bound to; a
    // lane, its listener's advertised host at the lane's own port.
    let endpoints: Vec<Endpoint> = kafka_listeners
        .iter()
        .map(|(listener, lane, _, addr)| {
            let advertised = listener
                .advertised
                .clone()
                .unwrap_or_else(|| addr.to_string());
            let (host, port) = crate::security::listeners::host_port(&advertised);
            let port = if *lane == 0 {
                port
            } else {
                i32::from(addr.port())
            };
            Endpoint {
                listener: crate::placement::lane_endpoint(&listener.name, *lane),
                host,
                port,
            }
        })
        .collect();
    // `Config::validate` bounded listeners × lanes by the endpoints an agent may register.
    debug_assert!(endpoints.len() <= ENDPOINTS_PER_AGENT_MAX);
    let mut config = config;
    if let Some(primary) = endpoints.first() {
        config.advertised_addr = format!("{}:{}", primary.host, primary.port);
    }
    let settings = config.read.tier_settings(&data_dir);
    let read_cache =
        crate::read_cache::ReadCache::open(store.clone(), &settings).map_err(|source| {
            StartError::DataDir {
                path: settings
                    .disk
                    .as_ref()
                    .map_or_else(String::new, |(dir, _)| dir.display().to_string()),
                source,
            }
        })?;
    let sasl = sasl_settings(&config.security)?;
    let broker = Arc::new(build_broker(
        config,
        sasl,
        endpoints,
        metadata,
        store,
        read_cache,
        local_cluster_id,
        clock,
        rng,
    ));

    let mut others = Vec::new();
    if let Some(listener) = internal {
        let quorum = broker.metadata.quorum();
        let routes = quorum
            .guard(
                quorum
                    .routes()
                    .merge(crate::server::forwarded::routes(broker.clone()))
                    .merge(crate::server::quota_sharing::routes(broker.clone())),
            )
            .into_make_service_with_connect_info::<SocketAddr>();
        others.push(tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, routes).await {
                tracing::error!(error = %e, "the internal listener stopped");
            }
        }));
    }
    let admin_addr = match &broker.config.admin_addr {
        None => None,
        Some(addr) => {
            let listener = bind(addr).await?;
            let bound = listener.local_addr().ok();
            others.push(tokio::spawn(crate::admin::serve(listener, broker.clone())));
            bound
        }
    };
    let registration = tokio::spawn(registration::keep_registered(broker.clone()));
    others.push(tokio::spawn(crate::server::quota_sharing::share(
        broker.clone(),
    )));
    if broker.config.quorum.voter {
        others.push(tokio::spawn(crate::metadata::ticks::tick_while_leading(
            broker.metadata.clone(),
            broker.clock.clone(),
        )));
    }
    if broker.config.quorum.voter && !broker.config.quorum.voters.is_empty() {
        others.push(tokio::spawn(
            crate::metadata::quorum::learners::follow_registry(
                broker.metadata.quorum().clone(),
                broker.config.remove_departed_agents_after,
                broker.clock.clone(),
            ),
        ));
    }
    if broker.config.lifecycle.jobs {
        others.push(tokio::spawn(crate::jobs::run(crate::jobs::JobContext {
            metadata: broker.metadata.clone(),
            store: broker.jobs_store.clone(),
            read_cache: broker.read_cache.clone(),
            clock: broker.clock.clone(),
            rng: broker.rng.clone(),
            config: broker.config.lifecycle.clone(),
            node_id: broker.config.node_id(),
            metrics: broker.job_metrics.clone(),
        })));
    }
    if let Some(tls) = &tls {
        others.push(tokio::spawn(
            tls.clone().keep_reloading(broker.clock.clone()),
        ));
    }
    let mut listeners = Vec::new();
    let mut tasks = Vec::new();
    let slots = crate::server::ConnectionSlots::new(broker.config.connections_max);
    for (listener, lane, tcp, addr) in kafka_listeners {
        listeners.push((crate::placement::lane_endpoint(&listener.name, lane), addr));
        let info = Arc::new(crate::server::Listener {
            name: listener.name,
            lane,
            protocol: listener.protocol,
            tls: listener.protocol.tls().then(|| tls.clone()).flatten(),
        });
        tasks.push(tokio::spawn(crate::server::serve(
            tcp,
            broker.clone(),
            info,
            slots.clone(),
        )));
    }
    // The primary listener's task is the node's; the others stop with the node's chores.
    let mut tasks = tasks.into_iter();
    let task = tasks
        .next()
        .ok_or_else(|| StartError::Config("no Kafka listener".into()))?;
    others.extend(tasks);
    Ok(Running {
        local_addr,
        listeners,
        admin_addr,
        broker,
        task,
        registration,
        deregistered: None,
        others,
    })
}

#[allow(clippy::too_many_arguments)]
fn build_broker(
    config: Config,
    sasl: crate::security::sasl::SaslSettings,
    endpoints: Vec<Endpoint>,
    metadata: MetadataStore,
    store: Arc<crate::store::ObjectClient>,
    read_cache: crate::read_cache::ReadCache,
    local_cluster_id: String,
    clock: Clock,
    rng: Rng,
) -> Broker {
    let drain = crate::drain_signal::DrainSignal::default();
    let pipeline = ProducePipeline::start(
        PipelineConfig {
            flush_interval: config.flush_interval,
            object_bytes_max: config.object_bytes_max,
            buffer_bytes_max: config.produce_buffer_bytes_max,
            uploads_in_flight_max: config.uploads_in_flight_max,
        },
        store.clone(),
        read_cache.clone(),
        metadata.clone(),
        drain.clone(),
        clock.clone(),
        rng.clone(),
    );
    let groups = crate::groups::Coordinator::start(
        crate::groups::coordinator::CoordinatorSettings {
            initial_delay: config.group_initial_rebalance_delay,
            consumer: crate::groups::consumer::ConsumerGroupSettings {
                heartbeat_interval_ms: config.group_consumer_heartbeat_interval.as_millis() as i32,
                session_timeout_ms: config.group_consumer_session_timeout.as_millis() as i64,
                max_size: config.group_consumer_max_size,
            },
        },
        clock.clone(),
        rng.clone(),
    );
    let segment_indexes =
        crate::fetch::runs::SegmentIndexCache::new(config.lifecycle.index_cache_bytes_max);
    let authorizer =
        config
            .security
            .acl_authorizer
            .then(|| crate::security::acl::AuthorizerSettings {
                super_users: config.security.super_users.iter().cloned().collect(),
                allow_everyone_if_no_acl_found: config.security.allow_everyone_if_no_acl_found,
            });
    let jobs_store = Arc::new(store.with_own_metrics(config.object_store.chaos_seed ^ JOBS_SEED));
    Broker {
        request_budget: crate::server::byte_pool::BytePool::new(config.request_bytes_in_flight_max),
        fetch_budget: crate::server::byte_pool::BytePool::new(config.fetch_bytes_in_flight_max),
        metrics: Arc::new(crate::telemetry::BrokerMetrics::default()),
        advertised_apis: crate::server::handlers::supported(),
        started: clock.now(),
        groups,
        drain,
        renewal_sent_ms: std::sync::atomic::AtomicI64::new(i64::MIN),
        share_sessions: Default::default(),
        quota_meter: Default::default(),
        config,
        metadata,
        pipeline,
        store,
        read_cache,
        run_batches: crate::fetch::by_time::RunBatchesCache::new(RUN_BATCHES_BYTES_MAX),
        segment_indexes,
        jobs_store,
        job_metrics: Default::default(),
        local_cluster_id,
        authorizer,
        sasl,
        endpoints,
        clock,
        rng,
    }
}

/// The SASL settings, with the PLAIN users and the JWKS read from their files.
fn sasl_settings(
    security: &crate::config::SecurityConfig,
) -> Result<crate::security::sasl::SaslSettings, StartError> {
    use crate::security::{oauthbearer, sasl};
    let plain_users = match &security.plain_users_file {
        Some(path) => Some(Arc::new(
            sasl::PlainUsers::from_file(path).map_err(|e| StartError::Config(e.to_string()))?,
        )),
        None => None,
    };
    let oauth = match &security.oauth_jwks_file {
        Some(path) => {
            let settings = oauthbearer::JwtValidatorSettings {
                expected_issuer: security.oauth_expected_issuer.clone(),
                expected_audience: security.oauth_expected_audience.clone(),
                ..Default::default()
            };
            Some(Arc::new(
                oauthbearer::JwtValidator::from_jwks_file(path, settings)
                    .map_err(|e| StartError::Config(e.to_string()))?,
            ))
        }
        None => None,
    };
    Ok(sasl::SaslSettings {
        enabled: security.sasl_mechanisms.clone(),
        plain_users,
        oauth,
        reauth_max_ms: security
            .reauth_max
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
    })
}

/// Mixed into the injected-fault seed of the jobs' object client, so its faults differ from
/// the serving client's.
const JOBS_SEED: u64 = 0x6a6f_6273;

/// Memory for batch headers read by ListOffsets lookups (40 bytes a batch).
const RUN_BATCHES_BYTES_MAX: u64 = 16 << 20;

/// A listener's socket: its configuration, the lane it serves (0: the agent itself), the
/// socket and the address it is bound to.
type BoundListener = (ListenerConfig, u16, TcpListener, SocketAddr);

/// A port for every lane beyond the first of every listener (`--broker-ids-per-agent`), on the
/// listener's interface: `--lane-port-base` and up, in listener order, or ports the system
/// picks.
async fn bind_lanes(
    config: &Config,
    listeners: &[BoundListener],
) -> Result<Vec<BoundListener>, StartError> {
    let mut lanes = Vec::new();
    for (listener, _, _, addr) in listeners {
        for lane in 1..config.broker_ids_per_agent {
            // `Config::validate` keeps a fixed range within 1..=65535.
            let port = config
                .lane_port_base
                .map_or(0, |base| base + lanes.len() as u16);
            let wanted = SocketAddr::new(addr.ip(), port).to_string();
            let tcp = bind(&wanted).await?;
            let bound = tcp.local_addr().map_err(|source| StartError::Listen {
                addr: wanted,
                source,
            })?;
            lanes.push((listener.clone(), lane, tcp, bound));
        }
    }
    Ok(lanes)
}

async fn bind(addr: &str) -> Result<TcpListener, StartError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| StartError::Listen {
            addr: addr.to_string(),
            source,
        })
}
