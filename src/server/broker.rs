//! `Broker`: what every handler shares (config, metadata, produce pipeline, object store).

use crate::clock::{Clock, Instant};
use crate::config::Config;
use crate::metadata::MetadataStore;
use crate::metadata::state::Agent;
use crate::metadata::state::CreateTopic;
use crate::placement::{self, Shown};
use crate::produce::ProducePipeline;
use crate::protocol::ErrorCode;
use crate::random::Rng;
use crate::server::error_codes::{self, Role};
use crate::store::ObjectClient;
use crate::telemetry::BrokerMetrics;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Leader epoch reported and written into fetched batches; there are no leader elections.
pub const LEADER_EPOCH: i32 = 0;

pub struct Broker {
    pub config: Config,
    pub metadata: MetadataStore,
    pub pipeline: ProducePipeline,
    pub store: Arc<ObjectClient>,
    /// The read path's tiers (memory, local disk) in front of the object store.
    pub read_cache: crate::read_cache::ReadCache,
    /// Batch headers read for ListOffsets by timestamp (`fetch::by_time`).
    pub run_batches: crate::fetch::by_time::RunBatchesCache,
    /// The background jobs' own client of the object store (their requests counted apart).
    pub jobs_store: Arc<crate::store::ObjectClient>,
    pub job_metrics: Arc<crate::jobs::metrics::JobMetrics>,
    /// Segment footers read so far: the local index cache fetches go through.
    pub segment_indexes: crate::fetch::runs::SegmentIndexCache,
    /// This node's own cluster id, proposed to the quorum; the first proposal applied names
    /// the cluster for every node.
    pub local_cluster_id: String,
    /// The SASL mechanisms and what they check against (SASL listeners).
    pub sasl: crate::security::sasl::SaslSettings,
    /// The ACL authorizer's settings; `None`: ACLs are not enforced (`--authorizer none`).
    pub authorizer: Option<crate::security::acl::AuthorizerSettings>,
    /// What each of this agent's Kafka listeners advertises, the primary first.
    pub endpoints: Vec<crate::metadata::state::security::Endpoint>,
    /// Request bytes in flight (`Config::request_bytes_in_flight_max`).
    pub request_budget: Arc<crate::server::byte_pool::BytePool>,
    /// Bytes fetches read and hold (`Config::fetch_bytes_in_flight_max`).
    pub fetch_budget: Arc<crate::server::byte_pool::BytePool>,
    pub metrics: Arc<BrokerMetrics>,
    /// What ApiVersions advertises: every registered API (`handlers::supported`).
    pub advertised_apis: Vec<crate::protocol::api_versions::ApiRange>,
    pub started: Instant,
    /// The consumer groups this agent coordinates.
    pub groups: crate::groups::Coordinator,
    /// Share consumers' sessions on this agent (KIP-932).
    pub share_sessions: crate::server::share_sessions::ShareSessions,
    /// What each account has used on this agent against its client quotas.
    pub quota_meter: crate::quotas::meter::Meter,
    /// Raised when the agent starts leaving the cluster (`drain`).
    pub drain: crate::drain_signal::DrainSignal,
    /// When this agent sent the last renewal of its registration that the quorum applied
    /// (`Clock::monotonic_ms`; `i64::MIN`: none yet). See `registered`.
    pub renewal_sent_ms: std::sync::atomic::AtomicI64,
    /// This node's clock and random generator (see `clock` and `random`).
    pub clock: Clock,
    pub rng: Rng,
}

impl Broker {
    /// This node's Kafka broker id (its quorum node id).
    pub fn node_id(&self) -> i32 {
        self.config.node_id()
    }

    pub fn advertised(&self) -> (String, i32) {
        let addr = if self.config.advertised_addr.is_empty() {
            &self.config.kafka_addr
        } else {
            &self.config.advertised_addr
        };
        match addr.rsplit_once(':') {
            Some((host, port)) => (
                host.trim_matches(['[', ']']).to_string(),
                port.parse().unwrap_or(9092),
            ),
            None => (addr.clone(), 9092),
        }
    }

    pub fn cluster_id(&self) -> String {
        self.metadata
            .read(|s| s.cluster_id().map(str::to_string))
            .unwrap_or_else(|| self.local_cluster_id.clone())
    }

    /// Whether this agent's copy of the state names the cluster and holds a live registration
    /// of this agent: until then its Metadata answers are its own, not the cluster's; and
    /// whether it renewed that registration within a lease, by its own monotonic clock: an
    /// agent that cannot renew (cut off from the quorum: its writes would time out) is better
    /// out of the load balancer, though its copy, which stopped with it, still lists it. A
    /// quorum stalled for longer than a lease takes every agent out alike (nothing can be
    /// written then; reads of what is committed stop too).
    pub fn registered(&self) -> bool {
        let me = self.node_id();
        self.renewal_sent().is_some()
            && !self.registration_lapsed()
            && self
                .metadata
                .read(|s| s.cluster_id().is_some() && s.live_agents().any(|agent| agent.id == me))
    }

    /// This agent's registry entry, as it renews it (the state sets its lease's end).
    pub fn agent(&self, lease_expires_ms: i64) -> Agent {
        let (host, port) = self.advertised();
        Agent {
            id: self.node_id(),
            host,
            port,
            zone: self.config.zone.clone(),
            internal_addr: self.metadata.quorum().listen_addr(),
            lease_expires_ms,
        }
    }

    /// The brokers clients see: the live agents of the registry, and this one even before its
    /// first registration is applied; agents sharing an address as one broker under an id
    /// that lasts (`placement::with_lasting_ids`).
    pub fn shown_brokers(&self) -> Vec<Shown> {
        let live = placement::brokers(&self.live_agents());
        self.metadata
            .read(|s| placement::with_lasting_ids(live, s.registered_agents()))
    }

    /// `shown` as a client of `listener` must be told: each broker at its address on that
    /// listener, a lane at its lane's port (the listener's own address when the agent
    /// registered no port for the lane; the primary address when it advertises no such
    /// listener).
    pub fn on_listener(&self, shown: Vec<Shown>, listener: &str) -> Vec<Shown> {
        let me = self.node_id();
        self.metadata.read(|state| {
            shown
                .into_iter()
                .map(|s| {
                    let (agent, lane) = self.agent_and_lane(s.id);
                    let endpoints = if agent == me {
                        &self.endpoints[..]
                    } else {
                        state.security().endpoints(agent)
                    };
                    let lane = placement::lane_endpoint(listener, lane);
                    let endpoint = endpoints
                        .iter()
                        .find(|e| e.listener == lane)
                        .or_else(|| endpoints.iter().find(|e| e.listener == listener));
                    match endpoint {
                        Some(e) => Shown {
                            host: e.host.clone(),
                            port: e.port,
                            ..s
                        },
                        None => s,
                    }
                })
                .collect()
        })
    }

    /// The agent and lane a shown broker id stands for. Ids are lanes only while lanes are
    /// on: without them any node id, however large, is its own agent's.
    pub fn agent_and_lane(&self, broker_id: i32) -> (i32, u16) {
        if self.config.broker_ids_per_agent > 1 {
            (
                placement::agent_of(broker_id),
                placement::lane_of(broker_id),
            )
        } else {
            (broker_id, 0)
        }
    }

    /// `shown` with the lanes of each broker (`--broker-ids-per-agent`), as broker lists in
    /// answers carry them.
    pub fn with_lanes(&self, shown: Vec<Shown>) -> Vec<Shown> {
        placement::with_lanes(shown, self.config.broker_ids_per_agent)
    }

    /// The id clients know this agent by: its own, or that of the agent it is collapsed into
    /// when both advertise one load-balanced address.
    pub fn shown_id(&self) -> i32 {
        self.shown_id_in(&self.shown_brokers())
    }

    /// `shown_id` against brokers the caller already listed.
    pub fn shown_id_in(&self, shown: &[Shown]) -> i32 {
        let (host, port) = self.advertised();
        shown
            .iter()
            .find(|s| s.host == host && s.port == port)
            .map_or(self.node_id(), |s| s.id)
    }

    /// The live agents, this one as it is now: before its first registration is applied the
    /// registry may still hold its previous life's entry, whose lease has not run out but
    /// whose address (a restart on another port) no longer answers. A draining agent leaves
    /// itself out (unless it is the last one), so its answers send clients, partitions and
    /// groups to the agents that stay.
    ///
    /// Leases are judged by the state's time, never by this node's wall clock: every agent
    /// that has applied the same entries lists the same agents, so partitions and groups have
    /// one place whatever the clocks say (a node whose clock ran ahead once saw every other
    /// lease lapsed, listed itself alone and took every group over).
    pub fn live_agents(&self) -> Vec<Agent> {
        let me = self.node_id();
        let mut agents: Vec<Agent> = self
            .metadata
            .read(|s| s.live_agents().filter(|a| a.id != me).cloned().collect());
        if agents.is_empty() || !self.drain.is_draining() {
            agents.push(self.agent(i64::MAX));
        }
        agents
    }

    /// The broker shown as `partition`'s leader to a client in `zone` (see `placement`).
    pub fn partition_leader(
        &self,
        shown: &[Shown],
        zone: Option<&str>,
        topic: &uuid::Uuid,
        partition: i32,
    ) -> i32 {
        let lanes = self.config.broker_ids_per_agent;
        placement::leader(shown, zone, topic, partition, lanes).unwrap_or(self.node_id())
    }

    /// The agent that coordinates `group`.
    pub fn coordinator_agent(&self, group: &str) -> Agent {
        let agents = self.live_agents();
        let id = placement::coordinator(&agents, group).unwrap_or(self.node_id());
        agents
            .into_iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| self.agent(i64::MAX))
    }

    /// The broker clients are sent to for `group` (FindCoordinator's answer): the shown
    /// broker at the coordinating agent's address.
    pub fn coordinator_of(&self, group: &str) -> Shown {
        let agent = self.coordinator_agent(group);
        self.shown_brokers()
            .into_iter()
            .find(|s| s.host == agent.host && s.port == agent.port)
            .unwrap_or(Shown {
                id: agent.id,
                host: agent.host,
                port: agent.port,
                zone: agent.zone,
            })
    }

    /// Whether this agent coordinates `group`: it is the group's coordinator in its copy of
    /// the state, it has renewed its registration, and that registration has not lapsed.
    /// Before its first renewal the others do not count it yet (they coordinate the groups
    /// it would), and that renewal lets go of whatever it held (`node::registration`): a
    /// group joined meanwhile would be lost at once. An agent that could not renew for a
    /// lease (paused, or cut off from the quorum) may have been counted out by the others,
    /// who then coordinate its groups; it answers NOT_COORDINATOR until it renews (and then
    /// lets go of the groups it held). A draining agent coordinates only when it is the last
    /// one, until it exits.
    pub fn coordinates(&self, group: &str) -> bool {
        self.coordinator_agent(group).id == self.node_id()
            && self.renewal_sent().is_some()
            && (self.drain.is_draining() || !self.registration_lapsed())
    }

    /// Whether this agent is starting: it has not renewed its registration yet, so it
    /// coordinates no group (`coordinates`).
    pub fn starting(&self) -> bool {
        self.renewal_sent().is_none()
    }

    /// Whether this agent renewed its registration once but not within a lease since, by its
    /// own monotonic clock (before its first renewal it has not lapsed: it is starting).
    pub fn registration_lapsed(&self) -> bool {
        let lease_ms = i64::try_from(self.config.agent_lease.as_millis()).unwrap_or(i64::MAX);
        self.renewal_sent()
            .is_some_and(|sent| self.clock.monotonic_ms().saturating_sub(sent) >= lease_ms)
    }

    /// When this agent last sent a renewal of its registration, by its monotonic clock; `None`
    /// before its first.
    fn renewal_sent(&self) -> Option<i64> {
        let sent = self
            .renewal_sent_ms
            .load(std::sync::atomic::Ordering::Relaxed);
        (sent != i64::MIN).then_some(sent)
    }

    /// Where to forward a request for `group` that reached this agent: the coordinating agent's
    /// internal address, when it is another agent behind the same advertised address (a load
    /// balancer put the client here). `None`: handle it here (or answer NOT_COORDINATOR).
    pub fn forward_target(&self, group: &str) -> Option<String> {
        let agent = self.coordinator_agent(group);
        let (host, port) = self.advertised();
        (agent.id != self.node_id() && agent.host == host && agent.port == port)
            .then_some(agent.internal_addr)
            .flatten()
    }

    /// Creates a topic; `Ok` also when another request created it first.
    pub async fn create_topic(
        &self,
        name: &str,
        partitions: i32,
        configs: BTreeMap<String, String>,
    ) -> Result<(), ErrorCode> {
        validate_topic_name(name)?;
        let created = self
            .metadata
            .write(CreateTopic {
                name: name.to_string(),
                id: self.rng.uuid(),
                partitions,
                configs,
            })
            .await;
        match created {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(error_codes::topic_error(e)),
            Err(e) => Err(error_codes::failed_write(&e, Role::Controller)),
        }
    }
}

/// Kafka's topic name rules: 1–249 characters of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub fn validate_topic_name(name: &str) -> Result<(), ErrorCode> {
    if crate::metadata::state::limits::topic_name_is_legal(name) {
        Ok(())
    } else {
        Err(ErrorCode::InvalidTopicException)
    }
}
