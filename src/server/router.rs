//! Routes a request frame to its handler and encodes the response.
//!
//! Only the APIs in `SUPPORTED` are advertised and served. ApiVersions at an unknown version
//! gets the KIP-511 answer; any other unsupported API or version, and any body that fails to
//! decode, closes the connection (what Kafka does: the client cannot have negotiated it).

use super::broker::Broker;
use super::handlers;
use crate::protocol::api_versions::ApiRange;
use crate::protocol::frame::{RequestFrame, encode_response};
use crate::protocol::messages::RequestBody;
use crate::protocol::{ApiKey, DecodeError, EncodeError};
use bytes::Bytes;
use std::sync::Arc;

const fn range(api_key: ApiKey, min: i16, max: i16) -> ApiRange {
    ApiRange { api_key, min, max }
}

/// The APIs and versions floe serves (never beyond what the handlers implement).
pub const SUPPORTED: &[ApiRange] = &[
    range(ApiKey::Produce, 3, 11),
    range(ApiKey::Fetch, 4, 12),
    range(ApiKey::ListOffsets, 1, 7),
    range(ApiKey::Metadata, 0, 12),
    range(ApiKey::OffsetCommit, 2, 8),
    range(ApiKey::OffsetFetch, 1, 7),
    range(ApiKey::FindCoordinator, 0, 4),
    range(ApiKey::ApiVersions, 0, 4),
    range(ApiKey::CreateTopics, 2, 7),
    range(ApiKey::DeleteTopics, 1, 6),
    range(ApiKey::InitProducerId, 0, 4),
    range(ApiKey::DescribeConfigs, 1, 4),
    range(ApiKey::CreatePartitions, 0, 3),
    range(ApiKey::IncrementalAlterConfigs, 0, 1),
    range(ApiKey::DescribeCluster, 0, 1),
];

#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error("{api:?} v{version} is not supported")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("cannot encode the response: {0}")]
    Encode(#[from] EncodeError),
}

/// Handles one request; `None` when no response is due (acks=0 produce).
pub async fn route(broker: Arc<Broker>, frame: RequestFrame) -> Result<Option<Bytes>, RouteError> {
    let api = frame.api_key;
    let version = frame.api_version();
    let correlation_id = frame.correlation_id();
    let supported = SUPPORTED
        .iter()
        .any(|r| r.api_key == api && r.contains(version));
    if api == ApiKey::ApiVersions {
        let (body, body_version) = handlers::api_versions::handle(version);
        return Ok(Some(encode_response(
            api,
            version,
            correlation_id,
            &body,
            body_version,
        )?));
    }
    if !supported {
        return Err(RouteError::UnsupportedVersion { api, version });
    }
    macro_rules! respond {
        ($response:expr) => {
            Ok(Some(encode_response(
                api,
                version,
                correlation_id,
                &$response,
                version,
            )?))
        };
    }
    match frame.decode_body()? {
        RequestBody::Produce(request) => {
            match handlers::produce::handle(&broker, request, version).await {
                Some(response) => respond!(response),
                None => Ok(None),
            }
        }
        RequestBody::Fetch(request) => {
            respond!(handlers::fetch::handle(&broker, request, version).await)
        }
        RequestBody::ListOffsets(request) => {
            respond!(handlers::list_offsets::handle(&broker, request, version))
        }
        RequestBody::Metadata(request) => {
            respond!(handlers::metadata::handle(&broker, request, version).await)
        }
        RequestBody::OffsetCommit(request) => {
            respond!(handlers::offset_commit::handle(&broker, request).await)
        }
        RequestBody::OffsetFetch(request) => {
            respond!(handlers::offset_fetch::handle(&broker, request))
        }
        RequestBody::FindCoordinator(request) => {
            respond!(handlers::find_coordinator::handle(&broker, request))
        }
        RequestBody::CreateTopics(request) => {
            respond!(handlers::create_topics::handle(&broker, request).await)
        }
        RequestBody::DeleteTopics(request) => {
            respond!(handlers::delete_topics::handle(&broker, request).await)
        }
        RequestBody::InitProducerId(request) => {
            respond!(handlers::init_producer_id::handle(&broker, request).await)
        }
        RequestBody::DescribeConfigs(request) => {
            respond!(handlers::configs::describe(&broker, request))
        }
        RequestBody::IncrementalAlterConfigs(request) => {
            respond!(handlers::configs::incremental_alter(&broker, request).await)
        }
        RequestBody::CreatePartitions(request) => {
            respond!(handlers::create_partitions::handle(&broker, request).await)
        }
        RequestBody::DescribeCluster(request) => {
            respond!(handlers::describe_cluster::handle(&broker, request))
        }
        other => Err(RouteError::UnsupportedVersion {
            api: other.api_key(),
            version,
        }),
    }
}
