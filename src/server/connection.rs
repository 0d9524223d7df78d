//! One client connection: read frames, handle them concurrently, answer in order.
//!
//! Each request's in-order part runs before the next frame is taken: decoding, queueing a
//! produce request's batches (so one connection's batches reach the pipeline in the order
//! sent), and all of any request other than Produce and Fetch. Waiting for commits and
//! fetches (which may long-poll) run concurrently.
//!
//! Up to `connection_requests_in_flight_max` requests run at once; their responses are written
//! strictly in request order (Kafka clients depend on it). When the limit is reached the socket
//! is not read: backpressure reaches the client through TCP. A malformed or oversized frame,
//! or a request that cannot be decoded, closes this connection only. When the agent drains,
//! the connection stops reading, answers every request it read, and closes.

use super::broker::Broker;
use super::byte_pool::Reservation;
use super::caller::Caller;
use super::caller::Origin;
use super::router::route;
use crate::protocol::frame::{Frame, declared_frame_size, parse_request, split_frame};
use crate::telemetry::ErrorChain;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use futures::stream::FuturesOrdered;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A request being answered: its encoded response, `None` when none is due, or why the
/// connection must close.
type InFlight = Pin<Box<dyn Future<Output = Result<Option<Frame>, RequestFailed>> + Send>>;

/// Why a request closes its connection (the client sent what it cannot have negotiated).
#[derive(Debug, thiserror::Error)]
enum RequestFailed {
    #[error("bad frame")]
    Frame(#[source] crate::protocol::frame::FrameError),
    #[error("undecodable request header")]
    Header(#[source] crate::protocol::frame::RequestError),
    #[error("{api:?} request: {why}")]
    Sasl {
        api: crate::protocol::ApiKey,
        why: &'static str,
    },
    #[error("{api:?} request")]
    Route {
        api: crate::protocol::ApiKey,
        #[source]
        source: super::api::RouteError,
    },
}

/// How long a client may take to send a frame once its size is announced.
const FRAME_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Serves one connection (plain TCP, or TLS once its handshake is done) for `caller`: who
/// the connection speaks for so far (a SASL login changes it).
pub async fn serve_connection<S>(
    broker: Arc<Broker>,
    stream: S,
    peer: SocketAddr,
    mut caller: Caller,
    sasl: bool,
) where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    broker.metrics.connections.fetch_add(1, Ordering::Relaxed);
    broker
        .metrics
        .connections_total
        .fetch_add(1, Ordering::Relaxed);
    let _open = OpenConnection(broker.clone());
    let (mut reader, mut writer) = tokio::io::split(stream);
    // On a SASL listener: the login's progress; it names the principal once it completes.
    let mut session = sasl.then(crate::security::sasl::Session::new);
    let frame_bytes_max = broker.config.frame_bytes_max;
    let in_flight_max = broker.config.connection_requests_in_flight_max;
    let budget_max = broker.config.request_bytes_in_flight_max;
    let idle_max = broker.config.connection_idle_timeout;
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let mut in_flight: FuturesOrdered<InFlight> = FuturesOrdered::new();
    let mut reading = true;
    // Request-budget permits for the frame at the front of `buf`, taken as soon as its size
    // header arrives and before its body is read: a 4-byte header cannot make the broker
    // buffer up to a frame's maximum without that memory being accounted for.
    let mut reserved: Option<Reservation> = None;
    let mut last_active = broker.clock.now();
    // When the frame holding `reserved` announced itself.
    let mut reserved_at = last_active;
    // Until when the client is held for a quota (the throttle time of a response sent): no
    // request is read or started meanwhile.
    let mut muted_until = None;
    loop {
        let muted = muted_until.is_some();
        // The next frame's permits are not available: stop reading until some are released.
        let mut waiting_for_budget = false;
        // Start every whole frame that the in-flight limit and the request budget allow.
        while !muted && in_flight.len() < in_flight_max {
            if reserved.is_none() {
                let size = match declared_frame_size(&buf, frame_bytes_max) {
                    Ok(Some(size)) => size,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(%peer, error = %ErrorChain(&e), "closing connection: bad frame");
                        in_flight.push_back(Box::pin(async move { Err(RequestFailed::Frame(e)) }));
                        reading = false;
                        buf.clear();
                        break;
                    }
                };
                // Held until the response is ready: bounds request memory across
                // connections. Waiting is only safe with nothing of our own in flight (those
                // replies release permits only when polled); otherwise stop reading until
                // some complete.
                let bytes = (size + 4).clamp(1, budget_max);
                let budget = &broker.request_budget;
                reserved = if in_flight.is_empty() {
                    Some(budget.reserve(bytes).await)
                } else {
                    match budget.try_reserve(bytes) {
                        Some(reservation) => Some(reservation),
                        None => {
                            waiting_for_budget = true;
                            break;
                        }
                    }
                };
                reserved_at = broker.clock.now();
            }
            let frame = match split_frame(&mut buf, frame_bytes_max) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                // `declared_frame_size` accepted this header.
                Err(_) => return,
            };
            let permit = reserved.take();
            let (reply, close) = start(broker.clone(), frame, &mut caller, session.as_mut()).await;
            if close {
                // Answer what was asked (a failed login's error), then close.
                reading = false;
                buf.clear();
            }
            // The rest of the request (a produce waiting for its commit, a fetch reading) runs
            // on a task of its own, so it finishes and gives back what it holds (its share of
            // the request budget, a fetch's share of the fetch budget) even while this loop is
            // not polling, say stuck writing an earlier response to a client that stopped
            // reading. Responses still go out in request order; dropping the handle (the
            // connection closing) cancels the task.
            let (task, handle) = futures::FutureExt::remote_handle(async move {
                let result = reply.await;
                drop(permit);
                result
            });
            tokio::spawn(task);
            in_flight.push_back(Box::pin(handle));
            if close {
                break;
            }
        }
        if !reading && in_flight.is_empty() {
            if broker.drain.is_draining() {
                close_after_drain(&mut reader, &mut writer, &broker.clock).await;
            }
            return;
        }
        let may_read = reading && !muted && !waiting_for_budget && in_flight.len() < in_flight_max;
        let idle_deadline = last_active + idle_max;
        let frame_deadline = reserved_at + FRAME_READ_TIMEOUT;
        tokio::select! {
            // Draining: what was read is answered, then the connection closes; the client
            // sends the rest again wherever the load balancer or Metadata now points it.
            _ = broker.drain.started(), if reading => reading = false,
            read = reader.read_buf(&mut buf), if may_read => match read {
                Ok(0) => reading = false,
                Ok(_) => last_active = broker.clock.now(),
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "connection read failed");
                    return;
                }
            },
            Some(reply) = in_flight.next(), if !in_flight.is_empty() => {
                last_active = broker.clock.now();
                match reply {
                    Ok(Some(frame)) => {
                        if let Err(e) = write_frame(&mut writer, &frame).await {
                            tracing::debug!(%peer, error = %e, "connection write failed");
                            return;
                        }
                        if !frame.throttle().is_zero() {
                            let until = broker.clock.now() + frame.throttle();
                            muted_until = muted_until.max(Some(until));
                            // A frame whose size has come in gives back its share of the
                            // request budget while its client is held (it is taken again
                            // from the size still at the front of `buf`).
                            reserved = None;
                        }
                    }
                    Ok(None) => {}
                    Err(failed @ RequestFailed::Sasl { .. }) => {
                        // Counted by the security metrics; not logged above debug, or a
                        // client could flood the log.
                        tracing::debug!(%peer, error = %failed, "closing connection");
                        return;
                    }
                    Err(failed) => {
                        broker.metrics.closed_for_bad_input.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(%peer, error = %ErrorChain(&failed), "closing connection");
                        return;
                    }
                }
            },
            // The quota's hold is over.
            _ = broker.clock.sleep_until(muted_until.unwrap_or(idle_deadline)), if muted => {
                muted_until = None;
                // Time spent held does not count against the client's deadlines.
                last_active = broker.clock.now();
                reserved_at = last_active;
            }
            // A frame announced but not sent holds its share of the request budget: it has a
            // deadline, or a few slow clients could hold all of it.
            _ = broker.clock.sleep_until(frame_deadline), if reserved.is_some() && !muted => {
                tracing::warn!(%peer, "closing connection: a frame was not sent in time");
                broker.metrics.closed_for_bad_input.fetch_add(1, Ordering::Relaxed);
                return;
            }
            // Kafka's connections.max.idle.ms: nothing read and nothing in flight.
            _ = broker.clock.sleep_until(idle_deadline), if in_flight.is_empty() && !muted => {
                tracing::debug!(%peer, "closing an idle connection");
                broker.metrics.closed_idle.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// Writes a frame's parts in order, several per system call, and flushes them.
async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, frame: &Frame) -> std::io::Result<()> {
    let mut parts = frame.parts();
    let mut sent = 0; // of parts[0]
    while !parts.is_empty() {
        let mut slices = [std::io::IoSlice::new(&[]); 64];
        let count = parts.len().min(slices.len());
        slices[0] = std::io::IoSlice::new(&parts[0][sent..]);
        for (slice, part) in slices[1..count].iter_mut().zip(&parts[1..count]) {
            *slice = std::io::IoSlice::new(part);
        }
        let mut written = writer.write_vectored(&slices[..count]).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while written > 0 {
            let left = parts[0].len() - sent;
            if written < left {
                sent += written;
                break;
            }
            written -= left;
            parts = &parts[1..];
            sent = 0;
        }
    }
    // A TLS stream may still hold the end of the frame as records it could not send yet.
    writer.flush().await
}

/// How long a drained connection waits for its client to close its side.
const DRAIN_LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// Ends a drained connection without a reset. A client that kept sending (requests it
/// pipelined after the last one read) leaves bytes unread, and closing over unread bytes makes
/// the kernel send a RST, which can discard answers the client has not read yet. So the write
/// side is shut first (a FIN after the last answer, TLS's close_notify), and what the client
/// still sends is read and dropped until it closes too, for a moment at most.
async fn close_after_drain<R, W>(reader: &mut R, writer: &mut W, clock: &crate::clock::Clock)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    if writer.shutdown().await.is_err() {
        return;
    }
    let mut sink = [0u8; 8192];
    let _ = clock
        .timeout(DRAIN_LINGER, async {
            while let Ok(read) = reader.read(&mut sink).await {
                if read == 0 {
                    break;
                }
            }
        })
        .await;
}

/// Counts the connection as closed however `serve_connection` returns.
struct OpenConnection(Arc<Broker>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.metrics.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs a request's in-order part now and returns the rest as a future, and whether the
/// connection closes once it is answered.
async fn start(
    broker: Arc<Broker>,
    frame: Bytes,
    caller: &mut Caller,
    session: Option<&mut crate::security::sasl::Session>,
) -> (InFlight, bool) {
    let request = match parse_request(frame) {
        Ok(request) => request,
        Err(e) => return (Box::pin(async move { Err(RequestFailed::Header(e)) }), true),
    };
    let api = request.api_key;
    let request = match super::sasl_exchange::step(&broker, request, session, caller) {
        Ok(super::sasl_exchange::Step::Route(request)) => request,
        Ok(super::sasl_exchange::Step::Answer { response, close }) => {
            return (
                Box::pin(async move {
                    // A refused login is answered after a pause (Kafka's
                    // connection.failed.authentication.delay.ms): guessing costs time.
                    if close {
                        broker
                            .clock
                            .sleep(broker.config.failed_authentication_delay)
                            .await;
                    }
                    Ok(Some(response))
                }),
                close,
            );
        }
        Ok(super::sasl_exchange::Step::Close(why)) => {
            return (
                Box::pin(async move { Err(RequestFailed::Sasl { api, why }) }),
                true,
            );
        }
        Err(source) => {
            return (
                Box::pin(async move { Err(RequestFailed::Route { api, source }) }),
                true,
            );
        }
    };
    match route(broker, request, Origin::Client, caller).await {
        Ok(pending) => (
            Box::pin(async move {
                pending
                    .await
                    .map_err(|source| RequestFailed::Route { api, source })
            }),
            false,
        ),
        Err(source) => (
            Box::pin(async move { Err(RequestFailed::Route { api, source }) }),
            true,
        ),
    }
}
