//! Asking the other agents behind this agent's address (a load balancer) for their part of a
//! cluster-wide answer: ListGroups lists the groups of every agent, but a client behind a load
//! balancer sees one broker and asks it alone.
//!
//! The request goes to each sibling's internal listener as a forwarded request (never
//! forwarded again), concurrently and with a short deadline; a sibling that does not answer is
//! left out of the answer and logged.

use crate::metadata::state::Agent;
use crate::protocol::frame::encode_request;
use crate::protocol::messages::{RequestBody, RequestHeader, ResponseHeader};
use crate::protocol::wire::Message;
use crate::server::broker::Broker;
use crate::server::caller::Caller;
use crate::server::forward;
use crate::telemetry::ErrorChain;
use bytes::Bytes;
use std::time::Duration;

/// A sibling's part of a listing comes within this, or not at all.
const SIBLING_TIMEOUT: Duration = Duration::from_secs(5);

/// The live agents other than this one that clients reach at this agent's address.
pub fn siblings(broker: &Broker) -> Vec<Agent> {
    let (host, port) = broker.advertised();
    broker
        .live_agents()
        .into_iter()
        .filter(|a| a.id != broker.node_id() && a.host == host && a.port == port)
        .filter(|a| a.internal_addr.is_some())
        .collect()
}

/// Sends `body` at `version` to every sibling and decodes the responses that come back; each
/// sibling answers as it would answer `caller`.
pub async fn ask<R: Message>(
    broker: &Broker,
    body: RequestBody,
    version: i16,
    caller: &Caller,
) -> Vec<R> {
    let siblings = siblings(broker);
    if siblings.is_empty() {
        return Vec::new();
    }
    let api = body.api_key();
    let header = RequestHeader {
        request_api_key: api as i16,
        request_api_version: version,
        client_id: Some(format!("floe-agent-{}", broker.node_id())),
        ..Default::default()
    };
    let frame = match encode_request(&header, &body) {
        Ok(frame) => frame,
        Err(e) => {
            tracing::warn!(error = %ErrorChain(&e), ?api, "cannot encode a request for sibling agents");
            return Vec::new();
        }
    };
    let answers = futures::future::join_all(siblings.iter().map(|agent| {
        let frame = frame.clone();
        let addr = agent.internal_addr.clone().unwrap_or_default();
        async move {
            let sent = forward::send(broker, &addr, frame, caller, SIBLING_TIMEOUT).await;
            (agent.id, sent)
        }
    }))
    .await;
    answers
        .into_iter()
        .filter_map(|(id, sent)| {
            let decoded = sent
                .map_err(|e| e.to_string())
                .and_then(|bytes| decode_response::<R>(bytes, api, version));
            decoded
                .map_err(|e| tracing::warn!(agent = id, ?api, error = %e, "a sibling agent's answer is left out"))
                .ok()
        })
        .collect()
}

fn decode_response<R: Message>(
    frame: Bytes,
    api: crate::protocol::ApiKey,
    version: i16,
) -> Result<R, String> {
    let mut rest = frame
        .get(4..)
        .map(|b| frame.slice_ref(b))
        .unwrap_or_default();
    ResponseHeader::decode(&mut rest, api.response_header_version(version))
        .map_err(|e| e.to_string())?;
    R::decode(&mut rest, version).map_err(|e| e.to_string())
}
