//! Raft RPCs between nodes: HTTP/1 POSTs with postcard bodies to `http://<peer>/raft/<rpc>`
//! (served by `service`). The same transport forwards writes to the leader.

use super::service::BODY_BYTES_MAX;
use super::types::{NodeId, TypeConfig};
use crate::security::cluster_auth::ClusterAuth;
use openraft::error::{
    InstallSnapshotError, NetworkError, PayloadTooLarge, RPCError, RaftError, RemoteError,
    Unreachable,
};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, RaftNetwork, RaftNetworkFactory};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;

/// Why a POST to a peer produced no decoded answer.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The peer could not be reached (refused, reset, timed out): try later or elsewhere.
    #[error("{addr} is unreachable: {source}")]
    Unreachable {
        addr: String,
        source: reqwest::Error,
    },
    /// The peer answered something that is not a valid reply.
    #[error("{addr} answered badly: {reason}")]
    BadReply { addr: String, reason: String },
    /// The peer refused the body as too large (HTTP 413).
    #[error("{addr} refused a {bytes}-byte body as too large")]
    TooLarge { addr: String, bytes: usize },
    /// The peer refused this node's credentials (HTTP 401): not a member of its cluster.
    #[error("{addr} refused this node's cluster credentials: {reason}")]
    Unauthorized { addr: String, reason: String },
    /// The peer has no such route (HTTP 404): it runs an older version.
    #[error("{addr} does not serve {path} (an older version)")]
    NotServed { addr: String, path: String },
}

/// One HTTP client for all peers (connections are pooled per peer); every request is signed
/// (`security::cluster_auth`).
#[derive(Clone)]
pub struct Peers {
    client: reqwest::Client,
    auth: Arc<ClusterAuth>,
}

impl Peers {
    pub fn new(auth: Arc<ClusterAuth>) -> Peers {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(1))
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        Peers { client, auth }
    }

    /// POSTs `request` to `http://{addr}/raft/{rpc}` and decodes the reply.
    pub async fn post<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        addr: &str,
        rpc: &str,
        request: &Req,
        timeout: Duration,
    ) -> Result<Resp, PostError> {
        let bad = |reason: String| PostError::BadReply {
            addr: addr.to_string(),
            reason,
        };
        let body = postcard::to_stdvec(request).map_err(|e| bad(e.to_string()))?;
        let bytes = self
            .post_bytes(addr, &format!("/raft/{rpc}"), body.into(), timeout)
            .await?;
        postcard::from_bytes(&bytes).map_err(|e| bad(e.to_string()))
    }

    /// POSTs `body` to `http://{addr}{path}`; a reply other than 200 is `BadReply`.
    pub async fn post_bytes(
        &self,
        addr: &str,
        path: &str,
        body: bytes::Bytes,
        timeout: Duration,
    ) -> Result<bytes::Bytes, PostError> {
        let unreachable = |source| PostError::Unreachable {
            addr: addr.to_string(),
            source,
        };
        let sent = body.len();
        let mut request = self
            .client
            .post(format!("http://{addr}{path}"))
            .timeout(timeout);
        for (name, value) in self.auth.headers(path, &body) {
            request = request.header(name, value);
        }
        let response = request.body(body).send().await.map_err(unreachable)?;
        let status = response.status();
        if status == reqwest::StatusCode::PAYLOAD_TOO_LARGE {
            return Err(PostError::TooLarge {
                addr: addr.to_string(),
                bytes: sent,
            });
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(PostError::NotServed {
                addr: addr.to_string(),
                path: path.to_string(),
            });
        }
        let bytes = response.bytes().await.map_err(unreachable)?;
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(PostError::Unauthorized {
                addr: addr.to_string(),
                reason: String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                    .trim()
                    .to_string(),
            });
        }
        if status != reqwest::StatusCode::OK {
            return Err(PostError::BadReply {
                addr: addr.to_string(),
                reason: format!(
                    "HTTP {status}: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                ),
            });
        }
        Ok(bytes)
    }
}

/// Creates a `PeerClient` per target node.
impl RaftNetworkFactory<TypeConfig> for Peers {
    type Network = PeerClient;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> PeerClient {
        PeerClient {
            peers: self.clone(),
            target,
            addr: node.addr.clone(),
        }
    }
}

pub struct PeerClient {
    peers: Peers,
    target: NodeId,
    addr: String,
}

type RpcResult<T, E = openraft::error::Infallible> =
    Result<T, RPCError<NodeId, BasicNode, RaftError<NodeId, E>>>;

impl PeerClient {
    async fn call<Req, Resp, E>(
        &self,
        rpc: &str,
        request: &Req,
        option: &RPCOption,
        shrink_to: Option<u64>,
    ) -> RpcResult<Resp, E>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
        E: std::error::Error + DeserializeOwned,
    {
        let reply: Result<Resp, RaftError<NodeId, E>> = self
            .peers
            .post(&self.addr, rpc, request, option.hard_ttl())
            .await
            .map_err(|e| match e {
                PostError::Unreachable { .. } => RPCError::Unreachable(Unreachable::new(&e)),
                // A peer with a smaller body limit: fewer entries per request, if that helps.
                PostError::TooLarge { .. } if shrink_to.is_some() => RPCError::PayloadTooLarge(
                    PayloadTooLarge::new_entries_hint(shrink_to.unwrap_or(1).max(1)),
                ),
                PostError::BadReply { .. }
                | PostError::TooLarge { .. }
                | PostError::Unauthorized { .. }
                | PostError::NotServed { .. } => RPCError::Network(NetworkError::new(&e)),
            })?;
        reply.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for PeerClient {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> RpcResult<AppendEntriesResponse<NodeId>> {
        // Too many entries for one body: openraft sends fewer when told so, instead of
        // retrying the same batch forever.
        let entries = rpc.entries.len() as u64;
        let bytes = postcard::experimental::serialized_size(&rpc).unwrap_or(usize::MAX);
        if entries > 1 && bytes > BODY_BYTES_MAX {
            let fit = entries * BODY_BYTES_MAX as u64 / bytes as u64;
            return Err(PayloadTooLarge::new_entries_hint(fit.clamp(1, entries - 1)).into());
        }
        let hint = (entries > 1).then_some(entries / 2);
        self.call("append", &rpc, &option, hint).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> RpcResult<InstallSnapshotResponse<NodeId>, InstallSnapshotError> {
        self.call("snapshot", &rpc, &option, None).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> RpcResult<VoteResponse<NodeId>> {
        self.call("vote", &rpc, &option, None).await
    }
}
