//! `Quorum`: this node's Raft member — a voter (role `meta`) or a learner that follows the log
//! (a stateless agent) — and the write path to whichever node leads.
//!
//! ```text
//! write(commands) ─► local Raft leader? ── yes ─► append, replicate, commit, apply ─► Applied
//!                                     └─ no ──► POST leader/raft/write (retry until deadline)
//! ```
//! Every member applies the committed log to its own `MetadataState`, so reads are local. A
//! read that must not lag the quorum first learns the leader's read index (`read_index`, the
//! same route to the leader, nothing logged) and waits until this node has applied it.

use super::log_store::LogStore;
use super::network::{Peers, PostError};
use super::service::{self, LearnerJoinRequest, ReadIndexRequest, WriteRefused};
use super::state_machine::{Shared, StateMachine};
use super::types::{Applied, Commands, NodeId, Raft};
use crate::clock::Clock;
use crate::metadata::state::Command;
use crate::security::cluster_auth::{ClusterAuth, ClusterSecret};
use openraft::error::{CheckIsLeaderError, ClientWriteError, Fatal, InitializeError, RaftError};
use openraft::{BasicNode, ServerState, SnapshotPolicy};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The largest Raft entry (a write's commands, serialized). A larger write is refused before
/// it reaches the log. It stays well under what the log store reads back
/// (`log_store::RECORD_BYTES_MAX`) and what one RPC may carry (`service::BODY_BYTES_MAX`),
/// so every entry that is in a log can be stored, read and replicated.
pub const ENTRY_BYTES_MAX: usize = 16 * 1024 * 1024;

/// Marks a Raft directory as a voter's (a learner's is a scratch copy, wiped at every start).
const VOTER_MARK: &str = "voter";

#[derive(Debug, Clone)]
pub struct QuorumConfig {
    pub node_id: NodeId,
    /// The voters and their Raft addresses. Empty: a quorum of this node alone.
    pub voters: BTreeMap<NodeId, String>,
    /// This node's Raft address (listened on, and given to peers). A voter's defaults to its
    /// entry in `voters`; a single-voter quorum needs none.
    pub raft_addr: Option<String>,
    /// Whether this node votes (role `meta`); otherwise it follows the log as a learner.
    pub voter: bool,
    /// Log entries between snapshots.
    pub snapshot_every: u64,
    /// How long a write may wait for a leader before failing (retriably).
    pub write_timeout: Duration,
    pub heartbeat_interval: Duration,
    pub election_timeout: Duration,
    /// The secret every internal request is signed with (`security::cluster_auth`); none on
    /// a loopback-only internal listener.
    pub cluster_secret: Option<ClusterSecret>,
}

impl QuorumConfig {
    pub fn single(node_id: NodeId) -> QuorumConfig {
        QuorumConfig {
            node_id,
            voters: BTreeMap::new(),
            raft_addr: None,
            voter: true,
            snapshot_every: 10_000,
            write_timeout: Duration::from_secs(10),
            heartbeat_interval: Duration::from_millis(100),
            election_timeout: Duration::from_millis(500),
            cluster_secret: None,
        }
    }

    /// The address this node serves Raft on, if it needs one.
    pub fn own_addr(&self) -> Option<String> {
        self.raft_addr
            .clone()
            .or_else(|| self.voters.get(&self.node_id).cloned())
    }

    /// The internal listener's address: this node's Raft address, unless it is a quorum of
    /// one (which talks to nobody).
    pub fn listen_addr(&self) -> Option<String> {
        (!self.voters.is_empty()).then(|| self.own_addr()).flatten()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum QuorumError {
    #[error("invalid quorum configuration: {0}")]
    Config(String),
    #[error("metadata storage at {path}")]
    Storage {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen for Raft on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Raft failed to start")]
    Start(#[source] Box<Fatal<NodeId>>),
    #[error("Raft refused its initial membership")]
    Initialize(#[source] Box<RaftError<NodeId, InitializeError<NodeId, BasicNode>>>),
}

/// What one try on this node's Raft gave (`Quorum::through_leader`).
enum Attempt<T> {
    Done(T),
    /// This node does not lead: the leader's address, if one is known.
    Forward(Option<String>),
    /// Worth another try before the deadline.
    Retry(NoLeader),
    Failed(WriteError),
}

/// Why a write reached no leader.
#[derive(Debug, thiserror::Error)]
pub enum NoLeader {
    #[error("no leader is elected")]
    NotElected,
    #[error("the leader refused the write")]
    Refused(#[source] WriteRefused),
    #[error("the leader could not be reached")]
    Unreachable(#[source] PostError),
    #[error("this node's Raft did not answer in time")]
    TimedOut,
    #[error("an election began while the leader had not answered")]
    Deposed,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// No leader accepted the write in time (an election, or the quorum is unreachable):
    /// retriable.
    #[error("the metadata quorum accepted no write within {waited:?}")]
    Unavailable {
        waited: Duration,
        #[source]
        last: NoLeader,
    },
    /// The write was committed elsewhere but this node has not applied it yet: retriable.
    #[error("this node has not applied log index {index} within {waited:?}")]
    NotApplied { index: u64, waited: Duration },
    /// Raft itself failed (storage, shutdown): not retriable on this node.
    #[error("the metadata write failed")]
    Failed(#[source] RaftError<NodeId, ClientWriteError<NodeId, BasicNode>>),
    /// The commands are larger than one entry may be: refused, nothing written.
    #[error("a metadata write of {bytes} bytes exceeds the {max}-byte entry limit")]
    TooLarge { bytes: usize, max: usize },
    /// The leader runs a version without the route (a rolling upgrade): not retried.
    #[error("the leader does not serve this request")]
    NotServed(#[source] PostError),
}

pub struct Quorum {
    id: NodeId,
    raft: Raft,
    shared: Arc<Shared>,
    peers: Peers,
    auth: Arc<ClusterAuth>,
    config: QuorumConfig,
    clock: Clock,
}

impl Quorum {
    /// Opens the log and state machine under `dir/raft`, starts Raft, and joins the quorum
    /// (voters initialise it; learners ask the leader to be added). Its RPCs are `routes()`,
    /// which the caller serves on `QuorumConfig::listen_addr` (see `service::listen`).
    pub async fn start(
        dir: &Path,
        config: QuorumConfig,
        clock: Clock,
    ) -> Result<Quorum, QuorumError> {
        if !config.voters.is_empty() && config.voter && !config.voters.contains_key(&config.node_id)
        {
            return Err(QuorumError::Config(format!(
                "node {} has role meta but is not in the meta peers {:?}",
                config.node_id, config.voters
            )));
        }
        if config.voters.is_empty() && !config.voter {
            return Err(QuorumError::Config(
                "an agent without the meta role needs --meta-peers".into(),
            ));
        }
        let own_addr = config.own_addr();
        if !config.voters.is_empty() && own_addr.is_none() {
            return Err(QuorumError::Config(format!(
                "node {} needs --raft-addr: the leader sends it the log there",
                config.node_id
            )));
        }
        let dir = dir.join("raft");
        let storage = |source| QuorumError::Storage {
            path: dir.display().to_string(),
            source,
        };
        if !config.voter {
            // A learner keeps nothing across restarts: it is rebuilt from a snapshot. Only a
            // learner's own scratch log is wiped; a voter's is refused, since wiping it would
            // throw away entries a majority may depend on.
            if dir.join(VOTER_MARK).exists() {
                return Err(QuorumError::Config(format!(
                    "{} holds a voter's Raft log: start this node with the meta role, or \
                     remove the directory to turn the node into an agent",
                    dir.display()
                )));
            }
            match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(storage(e)),
                _ => {}
            }
        }
        let log = LogStore::open(&dir).map_err(storage)?;
        if config.voter {
            write_mark(&dir.join(VOTER_MARK)).map_err(storage)?;
        }
        let machine = StateMachine::open(&dir, clock.clone()).map_err(storage)?;
        let shared = machine.shared();
        let raft_config = openraft::Config {
            cluster_name: "floe".into(),
            heartbeat_interval: config.heartbeat_interval.as_millis() as u64,
            election_timeout_min: config.election_timeout.as_millis() as u64,
            election_timeout_max: 2 * config.election_timeout.as_millis() as u64,
            install_snapshot_timeout: 10_000,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(config.snapshot_every.max(1)),
            max_in_snapshot_log_to_keep: 1000.min(config.snapshot_every),
            ..Default::default()
        }
        .validate()
        .map_err(|e| QuorumError::Config(e.to_string()))?;
        let known = shared.clone();
        let mut auth = ClusterAuth::new(
            config.cluster_secret.clone(),
            Box::new(move || known.read(|m| m.state.cluster_id().map(str::to_string))),
            clock.clone(),
        );
        auth.body_bytes_max = service::BODY_BYTES_MAX;
        let auth = Arc::new(auth);
        let peers = Peers::new(auth.clone());
        let raft = Raft::new(
            config.node_id,
            Arc::new(raft_config),
            peers.clone(),
            log,
            machine,
        )
        .await
        .map_err(|e| QuorumError::Start(Box::new(e)))?;
        let quorum = Quorum {
            id: config.node_id,
            raft,
            shared,
            peers,
            auth,
            config,
            clock,
        };
        if quorum.config.voter {
            quorum.initialize(own_addr.unwrap_or_default()).await?;
        } else if let Some(addr) = own_addr {
            tokio::spawn(join_as_learner(
                quorum.clock.clone(),
                quorum.peers.clone(),
                quorum.config.voters.clone(),
                LearnerJoinRequest {
                    id: quorum.id,
                    addr,
                },
            ));
        }
        Ok(quorum)
    }

    /// Writes the initial membership once; every voter does it with the same voters, and
    /// Raft refuses it harmlessly where a log already exists.
    async fn initialize(&self, own_addr: String) -> Result<(), QuorumError> {
        let initialized = self
            .raft
            .is_initialized()
            .await
            .map_err(|e| QuorumError::Start(Box::new(e)))?;
        if initialized {
            return Ok(());
        }
        let members: BTreeMap<NodeId, BasicNode> = if self.config.voters.is_empty() {
            BTreeMap::from([(self.id, BasicNode::new(own_addr))])
        } else {
            self.config
                .voters
                .iter()
                .map(|(id, addr)| (*id, BasicNode::new(addr)))
                .collect()
        };
        match self.raft.initialize(members).await {
            Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => Ok(()),
            Err(e) => Err(QuorumError::Initialize(Box::new(e))),
        }
    }

    /// This node's internal listener address (Raft and forwarding), when it has one (not in
    /// a one-voter quorum).
    pub fn listen_addr(&self) -> Option<String> {
        self.config.listen_addr()
    }

    /// The Raft RPCs peers send this node (append, vote, snapshot, write, join). Serve them
    /// through `guard`.
    pub fn routes(&self) -> axum::Router {
        service::router(self.raft.clone())
    }

    /// `routes` with the gate in front that refuses what is not signed by a member of this
    /// cluster (`security::cluster_auth`). Serve with `into_make_service_with_connect_info`.
    pub fn guard(&self, routes: axum::Router) -> axum::Router {
        routes.layer(axum::middleware::from_fn_with_state(
            self.auth.clone(),
            crate::security::cluster_auth::gate,
        ))
    }

    /// Internal requests refused by the gate.
    pub fn refused_total(&self) -> u64 {
        self.auth.refused_total()
    }

    /// Serves `routes()` alone on the listen address: a quorum member without an agent, as in
    /// the quorum's own tests and benchmarks (a node serves them beside its other routes).
    pub async fn listen_alone(&self) -> Result<Option<tokio::task::JoinHandle<()>>, QuorumError> {
        let Some(addr) = self.listen_addr() else {
            return Ok(None);
        };
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|source| QuorumError::Listen { addr, source })?;
        let routes = self
            .guard(self.routes())
            .into_make_service_with_connect_info::<std::net::SocketAddr>();
        Ok(Some(tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, routes).await {
                tracing::error!(error = %e, "the Raft listener stopped");
            }
        })))
    }

    /// The HTTP client for agent-to-agent requests (pooled connections per peer).
    pub fn peers(&self) -> &Peers {
        &self.peers
    }

    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Whether a leader is known (writes can be accepted).
    pub fn has_leader(&self) -> bool {
        self.raft.metrics().borrow().current_leader.is_some()
    }

    pub fn is_leader(&self) -> bool {
        self.raft.metrics().borrow().state == ServerState::Leader
    }

    /// Commits `commands` as one log entry through the leader and returns their outcomes.
    ///
    /// A write that fails ambiguously (the leader died after appending it) is retried; every
    /// command is safe to apply twice in the way the broker uses them (an object commit
    /// remembers its outcome; topic creation reports "exists").
    pub async fn write(&self, commands: Vec<Command>) -> Result<Applied, WriteError> {
        let commands = Commands(commands);
        let bytes = postcard::experimental::serialized_size(&commands).unwrap_or(usize::MAX);
        if bytes > ENTRY_BYTES_MAX {
            return Err(WriteError::TooLarge {
                bytes,
                max: ENTRY_BYTES_MAX,
            });
        }
        let raft = &self.raft;
        self.through_leader("write", &commands, || async {
            match raft.client_write(commands.clone()).await {
                Ok(response) => Attempt::Done(response.data),
                Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => {
                    Attempt::Forward(f.leader_node.map(|n| n.addr))
                }
                Err(e) => Attempt::Failed(WriteError::Failed(e)),
            }
        })
        .await
    }

    /// The log index a linearizable read must see: the leader's commit index once a quorum has
    /// confirmed it still leads (Raft's read index, §8), asked of the leader when this node
    /// is not it. Nothing is written to the log. A node that has applied up to the index
    /// reflects every write acknowledged before the call.
    pub async fn read_index(&self) -> Result<u64, WriteError> {
        let raft = &self.raft;
        let request = ReadIndexRequest { from: self.id };
        self.through_leader("read_index", &request, || async {
            match raft.get_read_log_id().await {
                Ok((read, _applied)) => Attempt::Done(read.map_or(0, |id| id.index)),
                Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f))) => {
                    Attempt::Forward(f.leader_node.map(|n| n.addr))
                }
                // The leader could not hear from a quorum in time: as if none led.
                Err(RaftError::APIError(e)) => {
                    Attempt::Retry(NoLeader::Refused(WriteRefused::Failed(e.to_string())))
                }
                Err(RaftError::Fatal(f)) => {
                    Attempt::Failed(WriteError::Failed(RaftError::Fatal(f)))
                }
            }
        })
        .await
    }

    /// Runs `local` on this node's Raft; when it is not the leader, posts `request` to the
    /// leader's `route` instead, retrying (an election, an unreachable leader) until
    /// `write_timeout`.
    async fn through_leader<T, Req, F, Fut>(
        &self,
        route: &str,
        request: &Req,
        local: F,
    ) -> Result<T, WriteError>
    where
        T: serde::de::DeserializeOwned,
        Req: serde::Serialize,
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Attempt<T>>,
    {
        let started = self.clock.now();
        let deadline = started + self.config.write_timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            // Bounded: a Raft that stopped answering must not hold the committer (and every
            // object after this one) forever. A write that timed out may still commit; every
            // command is safe to apply twice (see `write`).
            let left = deadline.saturating_duration_since(self.clock.now());
            let why = match self.clock.timeout(left.max(backoff), local()).await {
                Err(_elapsed) => NoLeader::TimedOut,
                Ok(Attempt::Done(value)) => return Ok(value),
                Ok(Attempt::Failed(e)) => return Err(e),
                Ok(Attempt::Retry(why)) => why,
                Ok(Attempt::Forward(None)) => NoLeader::NotElected,
                Ok(Attempt::Forward(Some(leader))) => 'forward: {
                    // The term in which `leader` leads, from the view that names it: a view
                    // that has moved on since `local` looked (an election in between) sends
                    // the write round again instead.
                    let Some(term) = self.term_led_by(&leader) else {
                        break 'forward NoLeader::Deposed;
                    };
                    let left = deadline.saturating_duration_since(self.clock.now());
                    let post = self.peers.post(&leader, route, request, left.max(backoff));
                    // A leader that stopped without closing its connections (a paused process,
                    // a stalled machine) answers nothing until it resumes, while the others
                    // elect a new one within an election timeout. Waiting for the old one
                    // would stall every write from this node for the whole stall, and let the
                    // agents' leases lapse for want of a renewal; so the post is given up as
                    // soon as this node sees an election, and the write goes to the new leader.
                    let reply: Option<Result<Result<T, WriteRefused>, _>> = tokio::select! {
                        reply = post => Some(reply),
                        () = self.election_after(term) => None,
                    };
                    match reply {
                        Some(Ok(Ok(value))) => return Ok(value),
                        Some(Ok(Err(refused))) => NoLeader::Refused(refused),
                        Some(Err(e @ PostError::NotServed { .. })) => {
                            return Err(WriteError::NotServed(e));
                        }
                        Some(Err(e)) => NoLeader::Unreachable(e),
                        None => NoLeader::Deposed,
                    }
                }
            };
            tracing::debug!(route, why = %why, "retrying through the leader");
            if self.clock.now() + backoff > deadline {
                return Err(WriteError::Unavailable {
                    waited: self.clock.now() - started,
                    last: why,
                });
            }
            self.clock.sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(200));
        }
    }

    /// The current term, if this node's Raft sees the node at `addr` leading it.
    fn term_led_by(&self, addr: &str) -> Option<u64> {
        let metrics = self.raft.metrics();
        let metrics = metrics.borrow();
        let leader = metrics.current_leader?;
        let node = metrics.membership_config.membership().get_node(&leader)?;
        (node.addr == addr).then_some(metrics.current_term)
    }

    /// Resolves when this node's Raft has seen a term after `term`: an election began.
    async fn election_after(&self, term: u64) {
        let mut metrics = self.raft.metrics();
        if metrics.wait_for(|m| m.current_term > term).await.is_err() {
            // Raft stopped: the post's own timeout decides.
            std::future::pending::<()>().await;
        }
    }

    /// Waits until this node has applied the log up to `index` (read-your-writes).
    pub async fn wait_applied(&self, index: u64) -> Result<(), WriteError> {
        let mut applied = self.shared.applied.subscribe();
        let waited = self.config.write_timeout;
        match self
            .clock
            .timeout(waited, applied.wait_for(|i| *i >= index))
            .await
        {
            Ok(Ok(_)) => Ok(()),
            _ => Err(WriteError::NotApplied { index, waited }),
        }
    }

    /// Adds a learner (it receives the log but does not vote). Leader only.
    pub async fn add_learner(&self, id: NodeId, addr: String) -> Result<(), WriteRefused> {
        self.raft
            .add_learner(id, BasicNode::new(addr), true)
            .await
            .map(|_| ())
            .map_err(|e| WriteRefused::Failed(e.to_string()))
    }

    /// Makes `voters` the voting members; other members stay as learners. Leader only.
    pub async fn change_voters(
        &self,
        voters: std::collections::BTreeSet<NodeId>,
    ) -> Result<(), WriteRefused> {
        self.raft
            .change_membership(voters, true)
            .await
            .map(|_| ())
            .map_err(|e| WriteRefused::Failed(e.to_string()))
    }

    /// Stops Raft (the listener serving `routes()` belongs to the caller: `node::Running`
    /// closes it when dropped).
    pub async fn shutdown(&self) {
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!(error = %e, "Raft shutdown");
        }
    }
}

/// Creates an empty marker file, durably.
fn write_mark(path: &Path) -> std::io::Result<()> {
    if !path.exists() {
        std::fs::File::create(path)?.sync_all()?;
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
    }
    Ok(())
}

/// Asks the voters, in turn, to add this agent as a learner until one leader accepts.
async fn join_as_learner(
    clock: Clock,
    peers: Peers,
    voters: BTreeMap<NodeId, String>,
    request: LearnerJoinRequest,
) {
    let mut backoff = Duration::from_millis(50);
    let mut warned = false;
    loop {
        for addr in voters.values() {
            let reply: Result<Result<(), WriteRefused>, _> = peers
                .post(addr, "join", &request, Duration::from_secs(5))
                .await;
            match reply {
                Ok(Ok(())) => {
                    tracing::info!(leader = %addr, "joined the metadata quorum as a learner");
                    return;
                }
                Ok(Err(refused)) => tracing::debug!(%refused, "join refused"),
                // A voter that will not hear this node (another cluster's secret, or none).
                Err(e @ PostError::Unauthorized { .. }) if !warned => {
                    warned = true;
                    tracing::error!(error = %e, "a voter refused this node's credentials; check --cluster-secret-file");
                }
                Err(e) => tracing::debug!(error = %e, "join failed"),
            }
        }
        clock.sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}
