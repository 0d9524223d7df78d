//! The Kafka front door: listener, connections (in-order responses), router, one handler per API.
//!
//! ```text
//! TcpListener ─► connection (frames, ≤ N in flight, ordered replies) ─► router ─► handlers/<api>
//! ```

pub mod broker;
pub mod connection;
pub mod forward;
pub mod handlers;
pub mod membership;
pub mod router;
pub mod routing;

use crate::config::Config;
use crate::metadata::MetadataStore;
use crate::produce::ProducePipeline;
use crate::produce::pipeline::PipelineConfig;
use broker::Broker;
use std::sync::Arc;
use tokio::net::TcpListener;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("cannot start the metadata quorum member: {0}")]
    Metadata(#[from] crate::quorum::QuorumError),
    #[error(transparent)]
    ObjectStore(#[from] crate::object::store::OpenError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
}

/// A started broker: its bound address and the task serving it.
pub struct Running {
    pub local_addr: std::net::SocketAddr,
    pub admin_addr: Option<std::net::SocketAddr>,
    pub broker: Arc<Broker>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Opens metadata and the object store, binds the listener, and serves until dropped.
pub async fn start(config: Config) -> Result<Running, StartError> {
    config.validate().map_err(StartError::Config)?;
    let data_dir = config.data_dir.clone();
    std::fs::create_dir_all(&data_dir).map_err(|source| StartError::DataDir {
        path: data_dir.display().to_string(),
        source,
    })?;
    let store = Arc::new(crate::object::store::open(&config.object_store, &data_dir).await?);
    tracing::info!(store = store.description(), "object store ready");
    let broker_slot: forward::BrokerSlot = Arc::default();
    let metadata = MetadataStore::open(
        &data_dir.join("meta"),
        config.quorum.clone(),
        forward::routes(broker_slot.clone()),
    )
    .await?;
    let cluster_id = cluster_id(&data_dir)?;
    let listener = TcpListener::bind(&config.kafka_addr)
        .await
        .map_err(|source| StartError::Listen {
            addr: config.kafka_addr.clone(),
            source,
        })?;
    let local_addr = listener.local_addr().map_err(|source| StartError::Listen {
        addr: config.kafka_addr.clone(),
        source,
    })?;
    let mut config = config;
    if config.advertised_addr.is_empty() {
        config.advertised_addr = local_addr.to_string();
    }
    let metrics = Arc::new(crate::telemetry::BrokerMetrics::default());
    let cache = Arc::new(crate::fetch::cache::ObjectCache::new(
        config.object_cache_bytes_max,
    ));
    let pipeline = ProducePipeline::start(
        PipelineConfig {
            flush_interval: config.flush_interval,
            object_bytes_max: config.object_bytes_max,
            buffer_bytes_max: config.produce_buffer_bytes_max,
            uploads_in_flight_max: config.uploads_in_flight_max,
        },
        store.clone(),
        cache.clone(),
        metadata.clone(),
        metrics.clone(),
    );
    let request_budget = Arc::new(tokio::sync::Semaphore::new(
        config.request_bytes_in_flight_max,
    ));
    let groups = crate::groups::Coordinator::start(crate::groups::coordinator::Settings {
        initial_delay: config.group_initial_rebalance_delay,
        consumer: crate::groups::consumer::Settings {
            heartbeat_interval_ms: config.group_consumer_heartbeat_interval.as_millis() as i32,
            session_timeout_ms: config.group_consumer_session_timeout.as_millis() as i64,
            max_size: config.group_consumer_max_size,
        },
    });
    let broker = Arc::new(Broker {
        groups,
        config,
        request_budget,
        metrics,
        started: std::time::Instant::now(),
        metadata,
        pipeline,
        store,
        cache,
        local_cluster_id: cluster_id,
    });
    let _ = broker_slot.set(Arc::downgrade(&broker));
    let admin_addr = match &broker.config.admin_addr {
        None => None,
        Some(addr) => {
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|source| StartError::Listen {
                    addr: addr.clone(),
                    source,
                })?;
            let bound = listener.local_addr().ok();
            tokio::spawn(crate::admin::serve(listener, broker.clone()));
            bound
        }
    };
    tokio::spawn(register_agent(broker.clone()));
    if broker.config.quorum.voter && !broker.config.quorum.voters.is_empty() {
        tokio::spawn(membership::follow_registry(broker.clone()));
    }
    let serving = broker.clone();
    let task = tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    tokio::spawn(connection::serve_connection(serving.clone(), stream, peer));
                }
                Err(e) => {
                    // Typically out of file descriptors: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    });
    Ok(Running {
        local_addr,
        admin_addr,
        broker,
        task,
    })
}

/// Keeps this agent in the registry: a heartbeat every third of the lease. A missed heartbeat
/// (no leader for a moment) is retried at the next tick; only a lease that runs out drops the
/// agent from Metadata answers.
async fn register_agent(broker: Arc<Broker>) {
    let lease = broker.config.agent_lease;
    let mut failing = false;
    let mut named = false;
    loop {
        if !named && broker.metadata.read(|s| s.cluster_id().is_none()) {
            let id = broker.local_cluster_id.clone();
            named = broker
                .metadata
                .apply_one(crate::metadata::Command::InitCluster { id })
                .await
                .is_ok();
        }
        let expires = crate::clock::now_ms() + lease.as_millis() as i64;
        let agent = broker.agent(expires);
        match broker
            .metadata
            .apply_one(crate::metadata::Command::AgentHeartbeat { agent })
            .await
        {
            Ok(_) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "agent registration failed; retrying");
            }
            Err(_) => {}
        }
        tokio::time::sleep(lease / 3).await;
    }
}

/// A stable cluster id, created with the data directory.
fn cluster_id(data_dir: &std::path::Path) -> Result<String, StartError> {
    let path = data_dir.join("cluster-id");
    let io = |source| StartError::DataDir {
        path: path.display().to_string(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(id) => Ok(id.trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let id = uuid::Uuid::new_v4().simple().to_string();
            std::fs::write(&path, &id).map_err(io)?;
            Ok(id)
        }
        Err(e) => Err(io(e)),
    }
}
