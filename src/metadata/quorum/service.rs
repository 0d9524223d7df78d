//! The Raft routes of the internal listener: peer RPCs (`append`, `vote`, `snapshot`), writes
//! and read-index requests forwarded by nodes that are not the leader (`write`,
//! `read_index`), and agents asking to follow the log (`join`).
//!
//! Bodies are postcard; every reply is a postcard `Result`, so a peer can tell a refusal (not
//! the leader) from a transport failure.

use super::types::{Applied, Commands, NodeId, Raft};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use openraft::BasicNode;
use openraft::error::{CheckIsLeaderError, ClientWriteError, RaftError};
use serde::{Deserialize, Serialize};

/// Raft messages carry whole snapshot chunks and batches of entries.
pub const BODY_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Why a forwarded write was not applied by the node it reached.
#[derive(Debug, Clone, Serialize, Deserialize, thiserror::Error)]
pub enum WriteRefused {
    #[error("node {node} is not the leader (leader: {leader:?})")]
    NotLeader {
        node: NodeId,
        leader: Option<String>,
    },
    #[error("{0}")]
    Failed(String),
}

/// A node asking the leader for its read index. (A body that is never empty: every internal
/// request declares its length, which an empty one would not.)
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadIndexRequest {
    pub from: NodeId,
}

/// An agent that wants to follow the log as a learner.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LearnerJoinRequest {
    pub id: NodeId,
    pub addr: String,
}

pub fn router(raft: Raft) -> Router {
    Router::new()
        .route("/raft/append", post(append))
        .route("/raft/vote", post(vote))
        .route("/raft/snapshot", post(snapshot))
        .route("/raft/write", post(write))
        .route("/raft/read_index", post(read_index))
        .route("/raft/join", post(join))
        .layer(DefaultBodyLimit::max(BODY_BYTES_MAX))
        .with_state(raft)
}

fn reply<T: Serialize>(value: &T) -> Response {
    match postcard::to_stdvec(value) {
        Ok(bytes) => bytes.into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// Decodes the request, runs `f`, and encodes its reply; a body that does not decode is a 400.
async fn rpc<Req, Resp, Fut>(body: Bytes, f: impl FnOnce(Req) -> Fut) -> Response
where
    Req: serde::de::DeserializeOwned,
    Resp: Serialize,
    Fut: std::future::Future<Output = Resp>,
{
    match postcard::from_bytes::<Req>(&body) {
        Ok(request) => reply(&f(request).await),
        Err(e) => (StatusCode::BAD_REQUEST, format!("bad body: {e}")).into_response(),
    }
}

async fn append(State(raft): State<Raft>, body: Bytes) -> Response {
    rpc(body, |r| async move { raft.append_entries(r).await }).await
}

async fn vote(State(raft): State<Raft>, body: Bytes) -> Response {
    rpc(body, |r| async move { raft.vote(r).await }).await
}

async fn snapshot(State(raft): State<Raft>, body: Bytes) -> Response {
    rpc(body, |r| async move { raft.install_snapshot(r).await }).await
}

async fn write(State(raft): State<Raft>, body: Bytes) -> Response {
    rpc(body, |commands: Commands| async move {
        let result: Result<Applied, WriteRefused> = raft
            .client_write(commands)
            .await
            .map(|r| r.data)
            .map_err(|e| refusal(&raft, e));
        result
    })
    .await
}

/// The leader's read index (`Quorum::read_index`) for a node that is not the leader.
async fn read_index(State(raft): State<Raft>, body: Bytes) -> Response {
    rpc(body, |_: ReadIndexRequest| async move {
        let result: Result<u64, WriteRefused> = match raft.get_read_log_id().await {
            Ok((read, _applied)) => Ok(read.map_or(0, |id| id.index)),
            Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f))) => {
                Err(WriteRefused::NotLeader {
                    node: raft.metrics().borrow().id,
                    leader: f.leader_node.map(|n| n.addr),
                })
            }
            Err(other) => Err(WriteRefused::Failed(other.to_string())),
        };
        result
    })
    .await
}

async fn join(State(raft): State<Raft>, body: Bytes) -> Response {
    rpc(body, |request: LearnerJoinRequest| async move {
        let result: Result<(), WriteRefused> = raft
            .add_learner(request.id, BasicNode::new(&request.addr), false)
            .await
            .map(|_| ())
            .map_err(|e| refusal(&raft, e));
        result
    })
    .await
}

fn refusal(raft: &Raft, e: RaftError<NodeId, ClientWriteError<NodeId, BasicNode>>) -> WriteRefused {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => WriteRefused::NotLeader {
            node: raft.metrics().borrow().id,
            leader: f.leader_node.map(|n| n.addr),
        },
        other => WriteRefused::Failed(other.to_string()),
    }
}
