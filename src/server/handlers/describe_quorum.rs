//! DescribeQuorum (key 55): the metadata quorum, as Kafka describes its KRaft quorum (KIP-595,
//! KIP-853): the leader, its epoch (the Raft term), the high watermark (the last committed log
//! index), the voters, and the observers (floe's learner agents), each with the log index it
//! has replicated. Kafka's `Admin.describeMetadataQuorum` and the tools built on it read it.
//!
//! Only the leader knows how far each follower has replicated, so another node forwards the
//! request to the leader, as a Kafka broker forwards it to the active controller. Without a
//! leader (an election under way) the partition answers NOT_LEADER_OR_FOLLOWER, which clients
//! retry. Timestamps floe does not track are -1 ("unknown" in Kafka's answer). Needs Cluster
//! DESCRIBE.

use crate::ids::NodeId;
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::frame::{encode_request, split_frame};
use crate::protocol::messages::describe_quorum_response::{
    Listener, Node, PartitionData, ReplicaState, TopicData,
};
use crate::protocol::messages::{
    DescribeQuorumRequest, DescribeQuorumResponse, RequestBody, RequestHeader, ResponseHeader,
};
use crate::protocol::wire::Message;
use crate::protocol::{ApiKey, ErrorCode};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Caller;
use crate::telemetry::ErrorChain;
use bytes::BytesMut;
use std::time::Duration;

/// The one topic-partition a DescribeQuorum names: Kafka's metadata log.
pub const METADATA_TOPIC: &str = "__cluster_metadata";

/// How long a forwarded DescribeQuorum may take: the leader answers from memory.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(10);

pub struct DescribeQuorum;

impl Api for DescribeQuorum {
    type Request = DescribeQuorumRequest;
    type Response = DescribeQuorumResponse;
    const KEY: ApiKey = ApiKey::DescribeQuorum;
    const VERSIONS: (i16, i16) = (0, 2);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE]);

    fn coordinator(_: &DescribeQuorumRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeQuorumRequest,
        version: i16,
    ) -> Authorized<DescribeQuorumResponse> {
        let allowed = gate.on_cluster(Operation::Describe);
        let error = ErrorCode::ClusterAuthorizationFailed;
        Authorized::run_or_refuse(allowed, request, version, error)
    }

    async fn handle(ctx: Ctx<'_>, request: DescribeQuorumRequest) -> Reply<DescribeQuorumResponse> {
        let version = ctx.version;
        let names_the_metadata_log = matches!(
            &request.topics[..],
            [topic] if topic.topic_name == METADATA_TOPIC
                && matches!(&topic.partitions[..], [p] if p.partition_index == 0)
        );
        if !names_the_metadata_log {
            return Reply::Now(request.error_response(version, ErrorCode::UnknownTopicOrPartition));
        }
        let broker = ctx.broker;
        let answer = match leader(broker) {
            Leader::Here => described(broker, version),
            // A forwarded request is never forwarded again (the leader just changed).
            Leader::At(addr) if !ctx.client.forwarded => {
                let caller = Caller {
                    host: ctx.client.host.to_string(),
                    principal: ctx.client.principal.to_string(),
                    listener: ctx.client.listener.to_string(),
                    lane: ctx.client.lane,
                };
                match forwarded(broker, &addr, &request, version, &caller).await {
                    Ok(answer) => answer,
                    Err(e) => {
                        tracing::warn!(%addr, error = %e, "DescribeQuorum: the leader did not answer");
                        not_leader()
                    }
                }
            }
            Leader::At(_) | Leader::Unknown => not_leader(),
        };
        Reply::Now(answer)
    }
}

enum Leader {
    Here,
    /// Another node's internal address.
    At(String),
    Unknown,
}

fn leader(broker: &Broker) -> Leader {
    let quorum = broker.metadata.quorum();
    if quorum.is_leader() {
        return Leader::Here;
    }
    let metrics = quorum.raft().metrics().borrow().clone();
    let membership = metrics.membership_config.membership();
    match metrics
        .current_leader
        .and_then(|id| membership.get_node(&id))
    {
        Some(node) => Leader::At(node.addr.clone()),
        None => Leader::Unknown,
    }
}

/// The answer of a node that cannot say: retried by clients.
fn not_leader() -> DescribeQuorumResponse {
    DescribeQuorumResponse {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                error_code: ErrorCode::NotLeaderOrFollower.code(),
                leader_id: -1,
                leader_epoch: -1,
                high_watermark: -1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// The leader's view: every voter and learner with the log index it has replicated.
fn described(broker: &Broker, version: i16) -> DescribeQuorumResponse {
    let raft = broker.metadata.quorum().raft();
    let metrics = raft.metrics().borrow().clone();
    let membership = metrics.membership_config.membership();
    let now_ms = broker.clock.now_ms();
    let me = metrics.id;
    let replicated = |id: &NodeId| -> i64 {
        if *id == me {
            return metrics.last_log_index.map_or(-1, log_offset);
        }
        let progress = metrics
            .replication
            .as_ref()
            .and_then(|r| r.get(id).copied());
        progress
            .flatten()
            .map_or(-1, |log_id| log_offset(log_id.index))
    };
    let replica = |id: &NodeId| ReplicaState {
        replica_id: id.broker_id(),
        log_end_offset: replicated(id),
        // Kafka reports "now" for the leader itself; floe tracks no other fetch times.
        last_fetch_timestamp: if *id == me { now_ms } else { -1 },
        last_caught_up_timestamp: if *id == me { now_ms } else { -1 },
        ..Default::default()
    };
    let voters: Vec<NodeId> = membership.voter_ids().collect();
    let observers: Vec<NodeId> = membership.learner_ids().collect();
    let nodes = if version >= 2 {
        voter_listeners(broker, &voters)
    } else {
        Vec::new()
    };
    DescribeQuorumResponse {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                leader_id: me.broker_id(),
                leader_epoch: i32::try_from(metrics.current_term).unwrap_or(i32::MAX),
                high_watermark: metrics
                    .last_applied
                    .map_or(-1, |log_id| log_offset(log_id.index)),
                current_voters: voters.iter().map(replica).collect(),
                observers: observers.iter().map(replica).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        nodes,
        ..Default::default()
    }
}

/// A Raft log index as Kafka's log end offset: the offset after the entry.
fn log_offset(index: u64) -> i64 {
    i64::try_from(index).map_or(i64::MAX, |i| i + 1)
}

/// Where each voter that is also an agent takes Kafka clients (v2's `Nodes`).
fn voter_listeners(broker: &Broker, voters: &[NodeId]) -> Vec<Node> {
    broker.metadata.read(|state| {
        voters
            .iter()
            .filter_map(|id| {
                let agent = state.live_agents().find(|a| a.id == id.broker_id())?;
                let endpoints = state.security().endpoints(agent.id);
                let listeners = if endpoints.is_empty() {
                    let port = u16::try_from(agent.port).ok()?;
                    vec![Listener {
                        name: "PLAINTEXT".into(),
                        host: agent.host.clone(),
                        port,
                        ..Default::default()
                    }]
                } else {
                    endpoints
                        .iter()
                        .filter_map(|e| {
                            Some(Listener {
                                name: e.listener.clone(),
                                host: e.host.clone(),
                                port: u16::try_from(e.port).ok()?,
                                ..Default::default()
                            })
                        })
                        .collect()
                };
                Some(Node {
                    node_id: agent.id,
                    listeners,
                    ..Default::default()
                })
            })
            .collect()
    })
}

#[derive(Debug, thiserror::Error)]
enum ForwardError {
    #[error(transparent)]
    Post(#[from] crate::metadata::quorum::network::PostError),
    #[error("the leader's answer does not parse: {0}")]
    Answer(String),
}

/// Asks the leader, as the client.
async fn forwarded(
    broker: &Broker,
    addr: &str,
    request: &DescribeQuorumRequest,
    version: i16,
    caller: &Caller,
) -> Result<DescribeQuorumResponse, ForwardError> {
    let header = RequestHeader {
        request_api_key: ApiKey::DescribeQuorum as i16,
        request_api_version: version,
        ..Default::default()
    };
    let body = RequestBody::DescribeQuorum(request.clone());
    let frame = encode_request(&header, &body)
        .map_err(|e| ForwardError::Answer(ErrorChain(&e).to_string()))?;
    let answer = crate::server::forward::send(broker, addr, frame, caller, FORWARD_TIMEOUT).await?;
    let mut buf = BytesMut::from(&answer[..]);
    let mut frame = split_frame(&mut buf, usize::MAX)
        .map_err(|e| ForwardError::Answer(e.to_string()))?
        .ok_or_else(|| ForwardError::Answer("a partial frame".into()))?;
    let header_version = ApiKey::DescribeQuorum.response_header_version(version);
    ResponseHeader::decode(&mut frame, header_version)
        .map_err(|e| ForwardError::Answer(e.to_string()))?;
    DescribeQuorumResponse::decode(&mut frame, version)
        .map_err(|e| ForwardError::Answer(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::describe_quorum_request;
    use crate::server::handlers::testing::TestNode;

    fn asking(topic: &str, partition: i32) -> DescribeQuorumRequest {
        DescribeQuorumRequest {
            topics: vec![describe_quorum_request::TopicData {
                topic_name: topic.into(),
                partitions: vec![describe_quorum_request::PartitionData {
                    partition_index: partition,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_leader_describes_itself_and_its_progress() {
        let node = TestNode::start().await;
        node.create_topic("grows-the-log", 1).await;
        let me = node.running.broker.node_id();
        for version in DescribeQuorum::VERSIONS.0..=DescribeQuorum::VERSIONS.1 {
            let answer = node
                .call::<DescribeQuorum>(&asking(METADATA_TOPIC, 0), version)
                .await;
            assert_eq!(answer.error_code, 0, "v{version}: {answer:?}");
            let topic = &answer.topics[0];
            assert_eq!(topic.topic_name, METADATA_TOPIC);
            let partition = &topic.partitions[0];
            assert_eq!((partition.error_code, partition.leader_id), (0, me));
            assert!(partition.leader_epoch >= 1, "{partition:?}");
            assert!(partition.high_watermark > 0, "{partition:?}");
            let voter = &partition.current_voters[..];
            assert_eq!(voter.len(), 1, "{partition:?}");
            assert_eq!(voter[0].replica_id, me);
            assert!(voter[0].log_end_offset >= partition.high_watermark);
            if version >= 2 {
                let port = node.running.local_addr.port();
                let ports: Vec<u16> = answer
                    .nodes
                    .iter()
                    .flat_map(|n| &n.listeners)
                    .map(|l| l.port)
                    .collect();
                assert_eq!(ports, [port], "{answer:?}");
            }
        }
        let other = node.call::<DescribeQuorum>(&asking("orders", 0), 2).await;
        assert_eq!(other.error_code, ErrorCode::UnknownTopicOrPartition.code());
        node.stop().await;
    }
}
