//! One Kafka API as floe serves it ([`Api`]), and the serving every API shares.
//!
//! Each served API is a type in its own file under `handlers/` that declares, in one place:
//! its key and versions, what it needs from the authorizer (as data, [`Needs`]), which
//! group's coordinator must answer it, how the parts a client may not touch are refused
//! ([`Api::authorize`]), and its handler. `handlers::REGISTRY` lists them. What ApiVersions
//! advertises, what the router accepts and how it dispatches, and the authorization every
//! request passes all derive from that list: an API cannot be served without its
//! declarations, since none of them has a default.
//!
//! ```text
//! frame ─► find(key, version) ─► decode ─► coordinator elsewhere? forward
//!                                   └─► authorize (Answer: refused whole)
//!                                          └─► handle ─► Now / Later ─► restore the refused ─► encode
//! ```

use super::authorize::{Authorized, Gate, Needs};
use super::broker::Broker;
use super::busy::Busy;
use super::caller::{Caller, Client, Origin};
use super::throttling::{self, Throttle};
use crate::protocol::error_response::ErrorResponse;
use crate::protocol::frame::{Frame, RequestFrame};
use crate::protocol::frame::{encode_response, reframe_request};
use crate::protocol::wire::Message;
use crate::protocol::{ApiKey, DecodeError, EncodeError};
use crate::quotas::meter::{QuotaKind, Who};
use crate::telemetry::ErrorChain;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error("{api:?} v{version} is not supported")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("cannot encode the response: {0}")]
    Encode(#[from] EncodeError),
}

/// The rest of a request's handling, run concurrently with later requests; resolves to the
/// encoded response, or `None` when no response is due (acks=0 produce).
pub type PendingResponse = Pin<Box<dyn Future<Output = Result<Option<Frame>, RouteError>> + Send>>;

/// One Kafka API: its declarations and its handler.
pub trait Api: 'static {
    /// The request; the generated `ErrorResponse` is its refusal in Kafka's shape.
    type Request: ErrorResponse<Response = Self::Response> + Send + 'static;
    type Response: Message + Send + 'static;
    const KEY: ApiKey;
    /// The versions served (never beyond what `handle` implements).
    const VERSIONS: (i16, i16);
    /// What the API needs from the authorizer: the ACLs `authorize` (or the handler) may
    /// check. A check of an ACL not declared here is denied.
    const NEEDS: Needs;
    /// The group whose coordinator must answer the request (behind a load balancer the
    /// request is forwarded there); `None` for requests any agent answers.
    fn coordinator(request: &Self::Request) -> Option<&str>;
    /// Runs before the handler when ACLs are enforced: takes out of `request` what the client
    /// may not touch (and says how to put it back into the response with its error), or
    /// answers the whole request with the refusal in its own shape.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut Self::Request,
        version: i16,
    ) -> Authorized<Self::Response>;
    /// Handles what authorization left of the request.
    fn handle(
        ctx: Ctx<'_>,
        request: Self::Request,
    ) -> impl Future<Output = Reply<Self::Response>> + Send;
}

/// What a handler is given: the broker, who asks, at which version.
pub struct Ctx<'a> {
    pub broker: &'a Arc<Broker>,
    pub client: Client<'a>,
    pub version: i16,
    /// When the request was taken (its latency is measured from here).
    pub started: Instant,
    /// The request's size in bytes (header and body).
    pub request_bytes: usize,
    /// The throttle time the handler answers, if a quota holds the client.
    pub throttle: Throttle,
    /// The time the request keeps the agent busy, charged to a `request_percentage` quota
    /// once the response is ready (a handler that must know the throttle before it answers,
    /// as a fetch does, charges it itself).
    pub busy: Busy,
}

/// A handler's answer.
pub enum Reply<T> {
    /// Complete before the connection takes its next request, as Kafka does: a CreateTopics
    /// pipelined ahead of a Produce has created the topic when the Produce runs.
    Now(T),
    /// The rest (waiting for a commit, a long poll) runs concurrently with later requests;
    /// `None`: no response is due (a produce with acks=0).
    Later(Pin<Box<dyn Future<Output = Option<T>> + Send>>),
}

/// A request as it reaches its API: the frame and who sent it.
pub struct Call<'a> {
    pub frame: RequestFrame,
    pub caller: &'a Caller,
    pub origin: Origin,
}

type Serve = for<'a> fn(
    &'a Arc<Broker>,
    Call<'a>,
) -> Pin<
    Box<dyn Future<Output = Result<PendingResponse, RouteError>> + Send + 'a>,
>;

/// One registered API, with its type erased so the registry can be a list.
pub struct Entry {
    pub key: ApiKey,
    pub versions: (i16, i16),
    pub needs: Needs,
    serve: Serve,
}

impl Entry {
    pub const fn of<A: Api>() -> Entry {
        Entry {
            key: A::KEY,
            versions: A::VERSIONS,
            needs: A::NEEDS,
            serve: |broker, call| Box::pin(serve::<A>(broker, call)),
        }
    }

    pub fn serves(&self, version: i16) -> bool {
        (self.versions.0..=self.versions.1).contains(&version)
    }

    pub async fn serve(
        &self,
        broker: &Arc<Broker>,
        call: Call<'_>,
    ) -> Result<PendingResponse, RouteError> {
        (self.serve)(broker, call).await
    }
}

/// What every API shares: decode, forward to the group's coordinator, authorize, handle,
/// restore what authorization took out, encode.
async fn serve<A: Api>(
    broker: &Arc<Broker>,
    call: Call<'_>,
) -> Result<PendingResponse, RouteError> {
    let Call {
        frame,
        caller,
        origin,
    } = call;
    let began = broker.clock.now();
    let version = frame.api_version();
    let correlation_id = frame.correlation_id();
    let mut request = A::Request::decode(&mut frame.body.clone(), version)?;
    if origin == Origin::Client
        && let Some(group) = A::coordinator(&request)
        && let Some(target) = broker.forward_target(group)
    {
        // Behind a load balancer: the group's coordinator is another agent; it answers.
        tracing::debug!(group, api = ?A::KEY, %target, "forwarding to the group's coordinator");
        broker
            .metrics
            .forwarded_requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let bytes = reframe_request(&frame).map_err(RouteError::Encode)?;
        let timeout = super::forward::FORWARD_TIMEOUT;
        match super::forward::send(broker, &target, bytes, caller, timeout).await {
            Ok(response) => return Ok(ready(Frame::from(response))),
            // The coordinator is unreachable (it may have died, its lease not yet lapsed).
            // Handled here instead, the request gets NOT_COORDINATOR in its own shape (this
            // agent does not coordinate the group) and the client looks for the coordinator
            // again; committed offsets are read from this agent's copy.
            Err(e) => {
                tracing::warn!(%target, error = %ErrorChain(&e), "forwarding failed; answering here")
            }
        }
    }
    let started = broker.clock.now();
    let client = Client {
        id: frame.header.client_id.as_deref(),
        host: &caller.host,
        principal: &caller.principal,
        listener: &caller.listener,
        lane: caller.lane,
        forwarded: origin == Origin::Forwarded,
    };
    let encode = move |response: A::Response| {
        encode_response(A::KEY, version, correlation_id, |buf| {
            response.encode(buf, version)
        })
    };
    let gate = Gate::new(broker, &client, A::NEEDS);
    let refused = if gate.enforced() {
        match A::authorize(&gate, &mut request, version) {
            Authorized::Run(refused) => refused,
            Authorized::Answer(response) => return Ok(ready(encode(response)?)),
        }
    } else {
        Default::default()
    };
    let throttle = Throttle::default();
    // Requests a sibling forwarded are charged where the client is connected, not here.
    let who = client.who();
    let timed = origin == Origin::Client && throttling::binds(broker, QuotaKind::Request, who);
    let busy = Busy::new(&broker.clock, timed);
    busy.add_since(began);
    let ctx = Ctx {
        broker,
        client,
        version,
        started,
        request_bytes: frame.size,
        throttle: throttle.clone(),
        busy: busy.clone(),
    };
    match busy.run(A::handle(ctx, request)).await {
        Reply::Now(mut response) => {
            refused.restore(&gate, &mut response);
            charge_request(broker, who, &busy, &throttle, &mut response);
            Ok(ready(encode(response)?.throttled(throttle.duration())))
        }
        Reply::Later(pending) => {
            let broker = Arc::clone(broker);
            let caller = caller.clone();
            let (user, client_id) = (who.user.to_string(), who.client_id.to_string());
            Ok(Box::pin(async move {
                let Some(mut response) = busy.run(pending).await else {
                    // No answer is due (acks=0), but a client over its quota is held all the
                    // same. (Kafka charges no request time to an acks=0 produce.)
                    let held = Frame::from(bytes::Bytes::new()).throttled(throttle.duration());
                    return Ok((throttle.ms() > 0).then_some(held));
                };
                let client = Client {
                    id: None,
                    ..caller.client(origin)
                };
                refused.restore(&Gate::new(&broker, &client, A::NEEDS), &mut response);
                let who = Who {
                    user: &user,
                    client_id: &client_id,
                };
                charge_request(&broker, who, &busy, &throttle, &mut response);
                Ok(Some(encode(response)?.throttled(throttle.duration())))
            }))
        }
    }
}

/// Charges the request's busy time to `who`'s `request_percentage` (if the handler has not),
/// and answers the throttle time the request has earned, of any quota, in the response.
fn charge_request<R: Message>(
    broker: &Broker,
    who: Who<'_>,
    busy: &Busy,
    throttle: &Throttle,
    response: &mut R,
) {
    throttle.at_least(throttling::charge_request(broker, who, busy));
    if throttle.ms() > 0 {
        response.set_throttle_time_ms(throttle.field());
    }
}

fn ready(frame: Frame) -> PendingResponse {
    Box::pin(async move { Ok(Some(frame)) })
}
