//! Routes a request frame to its handler and encodes the response.
//!
//! Only the APIs in `SUPPORTED` are advertised and served. ApiVersions at an unknown version
//! gets the KIP-511 answer; any other unsupported API or version, and any body that fails to
//! decode, closes the connection (what Kafka does: the client cannot have negotiated it).

use super::broker::Broker;
use super::handlers::{self, Caller, Client};
use super::supported::SUPPORTED;
use crate::protocol::frame::{Frame, RequestFrame, encode_response};
use crate::protocol::messages::{RequestBody, ResponseBody};
use crate::protocol::wire::Message;
use crate::protocol::{ApiKey, DecodeError, EncodeError};
use crate::telemetry::ErrorChain;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error("{api:?} v{version} is not supported")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("cannot encode the response: {0}")]
    Encode(#[from] EncodeError),
}

/// Where a request came from: a client connection, or another agent forwarding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Client,
    Forwarded,
}

/// The group a request is about, for the requests a group's coordinator must handle. A
/// request naming several groups goes where its first group is coordinated; the others get
/// NOT_COORDINATOR there if they are coordinated elsewhere.
fn group_of(body: &RequestBody) -> Option<&str> {
    match body {
        RequestBody::JoinGroup(r) => Some(&r.group_id),
        RequestBody::SyncGroup(r) => Some(&r.group_id),
        RequestBody::Heartbeat(r) => Some(&r.group_id),
        RequestBody::LeaveGroup(r) => Some(&r.group_id),
        RequestBody::OffsetCommit(r) => Some(&r.group_id),
        RequestBody::OffsetFetch(r) if !r.groups.is_empty() => Some(&r.groups[0].group_id),
        RequestBody::OffsetFetch(r) => Some(&r.group_id),
        RequestBody::OffsetDelete(r) => Some(&r.group_id),
        RequestBody::ConsumerGroupHeartbeat(r) => Some(&r.group_id),
        RequestBody::DescribeGroups(r) => r.groups.first().map(String::as_str),
        RequestBody::ConsumerGroupDescribe(r) => r.group_ids.first().map(String::as_str),
        RequestBody::DeleteGroups(r) => r.groups_names.first().map(String::as_str),
        RequestBody::TxnOffsetCommit(r) => Some(&r.group_id),
        _ => None,
    }
}

/// The rest of a request's handling, run concurrently with later requests; resolves to the
/// encoded response, or `None` when no response is due (acks=0 produce).
pub type PendingResponse = Pin<Box<dyn Future<Output = Result<Option<Frame>, RouteError>> + Send>>;

/// Starts handling one request. What must happen in request order is done before this
/// returns: decoding, queueing a produce request's batches, and every request other than
/// Produce and Fetch in full. The rest (waiting for commits, long polls) is the returned `PendingResponse`.
pub async fn route(
    broker: Arc<Broker>,
    frame: RequestFrame,
    origin: Origin,
    caller: &Caller,
) -> Result<PendingResponse, RouteError> {
    let api = frame.api_key;
    let version = frame.api_version();
    let correlation_id = frame.correlation_id();
    if api == ApiKey::ApiVersions {
        let (body, body_version) =
            handlers::api_versions::handle(version, broker.config.transaction_version);
        let encoded = encode_response(api, version, correlation_id, |buf| {
            body.encode(buf, body_version)
        });
        return Ok(Box::pin(async move { Ok(Some(encoded?)) }));
    }
    if !SUPPORTED
        .iter()
        .any(|r| r.api_key == api && r.contains(version))
    {
        return Err(RouteError::UnsupportedVersion { api, version });
    }
    let body = frame.decode_body()?;
    if origin == Origin::Client
        && let Some(group) = group_of(&body)
        && let Some(target) = broker.forward_target(group)
    {
        // Behind a load balancer: the group's coordinator is another agent; it answers.
        tracing::debug!(group, ?api, %target, "forwarding to the group's coordinator");
        broker
            .metrics
            .forwarded_requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let request = crate::protocol::frame::encode_request(&frame.header, &body)
            .map_err(RouteError::Encode)?;
        let timeout = super::forward::FORWARD_TIMEOUT;
        match super::forward::send(&broker, &target, request, caller, timeout).await {
            Ok(response) => return Ok(Box::pin(async move { Ok(Some(response.into())) })),
            // The coordinator is unreachable (it may have died, its lease not yet lapsed).
            // Handled here instead, the request gets NOT_COORDINATOR in its own shape (this
            // agent does not coordinate the group) and the client looks for the coordinator
            // again; committed offsets are read from this agent's copy.
            Err(e) => {
                tracing::warn!(%target, error = %ErrorChain(&e), "forwarding failed; answering here")
            }
        }
    }
    let client_id = frame.header.client_id.clone();
    let started = broker.clock.now();
    let mut body = body;
    let asking = Client {
        id: client_id.as_deref(),
        host: &caller.host,
        principal: &caller.principal,
        listener: &caller.listener,
        lane: caller.lane,
        forwarded: origin == Origin::Forwarded,
    };
    if let RequestBody::Produce(mut request) = body {
        let denied = super::authorize::produce(&broker, &asking, &mut request);
        let enqueued = handlers::produce::enqueue(&broker, request, version).await;
        return Ok(Box::pin(async move {
            let response =
                handlers::produce::complete(&broker, enqueued)
                    .await
                    .map(|mut response| {
                        super::authorize::restore_produce(denied, &mut response);
                        response
                    });
            broker
                .metrics
                .produce_latency
                .observe(started.elapsed().as_secs_f64());
            match response {
                Some(response) => Ok(Some(encode_response(
                    api,
                    version,
                    correlation_id,
                    |buf| response.encode(buf, version),
                )?)),
                None => Ok(None),
            }
        }));
    }
    let denied = match super::authorize::check(&broker, &asking, &mut body) {
        super::authorize::Check::Run(denied) => denied,
        super::authorize::Check::Answer(response) => {
            let encoded = encode_response(api, version, correlation_id, |buf| {
                response.encode(buf, version)
            })?;
            return Ok(Box::pin(async move { Ok(Some(encoded)) }));
        }
    };
    if matches!(body, RequestBody::Fetch(_)) {
        // Fetches may long-poll, so they run concurrently with later requests.
        let caller = caller.clone();
        return Ok(Box::pin(async move {
            let client = Client {
                id: None,
                host: &caller.host,
                principal: &caller.principal,
                listener: &caller.listener,
                lane: caller.lane,
                forwarded: origin == Origin::Forwarded,
            };
            let mut response = respond(&broker, body, version, client).await?;
            super::authorize::restore(&broker, &client, denied, &mut response);
            broker
                .metrics
                .fetch_latency
                .observe(started.elapsed().as_secs_f64());
            let encoded = encode_response(api, version, correlation_id, |buf| {
                response.encode(buf, version)
            })?;
            Ok(Some(encoded))
        }));
    }
    // Everything else completes before the connection's next request is taken, as in Kafka:
    // a CreateTopics pipelined ahead of a Produce has created the topic when the Produce runs.
    let client = Client {
        id: client_id.as_deref(),
        host: &caller.host,
        principal: &caller.principal,
        listener: &caller.listener,
        lane: caller.lane,
        forwarded: origin == Origin::Forwarded,
    };
    let mut response = respond(&broker, body, version, client).await?;
    super::authorize::restore(&broker, &client, denied, &mut response);
    let encoded = encode_response(api, version, correlation_id, |buf| {
        response.encode(buf, version)
    })?;
    Ok(Box::pin(async move { Ok(Some(encoded)) }))
}

/// Runs the handler of a (non-produce) request.
async fn respond(
    broker: &Broker,
    body: RequestBody,
    version: i16,
    client: Client<'_>,
) -> Result<ResponseBody, RouteError> {
    let b = broker;
    Ok(match body {
        // The lists a client gathers from every broker and merges: an agent's other lanes
        // list nothing, since the client asks each of them as a broker of its own.
        RequestBody::ListGroups(_) if client.lane > 0 => {
            ResponseBody::ListGroups(Default::default())
        }
        RequestBody::ListTransactions(_) if client.lane > 0 => {
            ResponseBody::ListTransactions(Default::default())
        }
        RequestBody::Fetch(r) => ResponseBody::Fetch(handlers::fetch::handle(b, r, version).await),
        RequestBody::ListOffsets(r) => {
            ResponseBody::ListOffsets(handlers::list_offsets::handle(b, r, version).await)
        }
        RequestBody::Metadata(r) => {
            ResponseBody::Metadata(handlers::metadata::handle(b, r, version, client).await)
        }
        RequestBody::OffsetCommit(r) => {
            ResponseBody::OffsetCommit(handlers::offset_commit::handle(b, r, version).await)
        }
        RequestBody::OffsetFetch(r) => {
            ResponseBody::OffsetFetch(handlers::offset_fetch::handle(b, r, version).await)
        }
        RequestBody::FindCoordinator(r) => {
            ResponseBody::FindCoordinator(handlers::find_coordinator::handle(b, r, version, client))
        }
        RequestBody::JoinGroup(r) => {
            ResponseBody::JoinGroup(handlers::join_group::handle(b, r, version, client).await)
        }
        RequestBody::SyncGroup(r) => {
            ResponseBody::SyncGroup(handlers::sync_group::handle(b, r).await)
        }
        RequestBody::Heartbeat(r) => ResponseBody::Heartbeat(handlers::heartbeat::handle(b, r)),
        RequestBody::LeaveGroup(r) => {
            ResponseBody::LeaveGroup(handlers::leave_group::handle(b, r, version))
        }
        RequestBody::DescribeGroups(r) => {
            ResponseBody::DescribeGroups(handlers::describe_groups::handle(b, r))
        }
        RequestBody::ListGroups(r) => {
            ResponseBody::ListGroups(handlers::list_groups::handle(b, r, version, client).await)
        }
        RequestBody::DeleteGroups(r) => {
            ResponseBody::DeleteGroups(handlers::delete_groups::handle(b, r).await)
        }
        RequestBody::OffsetDelete(r) => {
            ResponseBody::OffsetDelete(handlers::offset_delete::handle(b, r).await)
        }
        RequestBody::CreateTopics(r) => {
            ResponseBody::CreateTopics(handlers::create_topics::handle(b, r).await)
        }
        RequestBody::DeleteTopics(r) => {
            ResponseBody::DeleteTopics(handlers::delete_topics::handle(b, r).await)
        }
        RequestBody::InitProducerId(r) => {
            ResponseBody::InitProducerId(handlers::init_producer_id::handle(b, r, version).await)
        }
        RequestBody::DescribeConfigs(r) => {
            ResponseBody::DescribeConfigs(handlers::configs::describe(b, r))
        }
        RequestBody::AlterConfigs(r) => {
            ResponseBody::AlterConfigs(handlers::configs::alter(b, r).await)
        }
        RequestBody::IncrementalAlterConfigs(r) => {
            ResponseBody::IncrementalAlterConfigs(handlers::configs::incremental_alter(b, r).await)
        }
        RequestBody::CreatePartitions(r) => {
            ResponseBody::CreatePartitions(handlers::create_partitions::handle(b, r).await)
        }
        RequestBody::DescribeLogDirs(r) => {
            ResponseBody::DescribeLogDirs(handlers::describe_log_dirs::handle(b, r))
        }
        RequestBody::DeleteRecords(r) => {
            ResponseBody::DeleteRecords(handlers::delete_records::handle(b, r).await)
        }
        RequestBody::DescribeProducers(r) => {
            ResponseBody::DescribeProducers(handlers::describe_producers::handle(b, r))
        }
        RequestBody::DescribeTopicPartitions(r) => ResponseBody::DescribeTopicPartitions(
            handlers::describe_topic_partitions::handle(b, r, client.id),
        ),
        RequestBody::OffsetForLeaderEpoch(r) => ResponseBody::OffsetForLeaderEpoch(
            handlers::offset_for_leader_epoch::handle(b, r).await,
        ),
        RequestBody::DescribeCluster(r) => {
            ResponseBody::DescribeCluster(handlers::describe_cluster::handle(b, r, client))
        }
        RequestBody::ConsumerGroupHeartbeat(r) => ResponseBody::ConsumerGroupHeartbeat(
            handlers::consumer_group_heartbeat::handle(b, r, version, client),
        ),
        RequestBody::ConsumerGroupDescribe(r) => ResponseBody::ConsumerGroupDescribe(
            handlers::consumer_group_describe::handle(b, r, version),
        ),
        RequestBody::DescribeTransactions(r) => {
            ResponseBody::DescribeTransactions(handlers::describe_transactions::handle(b, r))
        }
        RequestBody::ListTransactions(r) => {
            ResponseBody::ListTransactions(handlers::list_transactions::handle(b, r))
        }
        RequestBody::AddPartitionsToTxn(r) => ResponseBody::AddPartitionsToTxn(
            handlers::add_partitions_to_txn::handle(b, r, version).await,
        ),
        RequestBody::AddOffsetsToTxn(r) => {
            ResponseBody::AddOffsetsToTxn(handlers::add_offsets_to_txn::handle(b, r, version).await)
        }
        RequestBody::EndTxn(r) => {
            ResponseBody::EndTxn(handlers::end_txn::handle(b, r, version).await)
        }
        RequestBody::TxnOffsetCommit(r) => {
            ResponseBody::TxnOffsetCommit(handlers::txn_offset_commit::handle(b, r, version).await)
        }
        RequestBody::CreateAcls(r) => {
            ResponseBody::CreateAcls(handlers::acls::create(b, r, client).await)
        }
        RequestBody::DescribeAcls(r) => {
            ResponseBody::DescribeAcls(handlers::acls::describe(b, r, client))
        }
        RequestBody::DeleteAcls(r) => {
            ResponseBody::DeleteAcls(handlers::acls::delete(b, r, client).await)
        }
        RequestBody::AlterUserScramCredentials(r) => ResponseBody::AlterUserScramCredentials(
            handlers::scram_credentials::alter(b, r, client).await,
        ),
        RequestBody::DescribeUserScramCredentials(r) => ResponseBody::DescribeUserScramCredentials(
            handlers::scram_credentials::describe(b, r, client),
        ),
        other => {
            return Err(RouteError::UnsupportedVersion {
                api: other.api_key(),
                version,
            });
        }
    })
}
