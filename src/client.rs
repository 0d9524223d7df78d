//! floe's own minimal Kafka client over its codec: one connection, pipelined requests,
//! responses matched in order. The load generator (`bench`), the `floe` admin commands
//! (`cli`) and the tests speak Kafka through it.

use crate::protocol::frame::{encode_request, split_frame};
use crate::protocol::messages::{RequestBody, RequestHeader, ResponseBody, ResponseHeader};
use crate::protocol::{ApiKey, Message};
use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("the broker closed the connection")]
    Closed,
    #[error("protocol: {0}")]
    Protocol(String),
}

/// The sending half: writes requests, numbering them.
pub struct Sender {
    write: OwnedWriteHalf,
    next_correlation: i32,
    client_id: &'static str,
}

/// The receiving half: reads responses in the order their requests were sent.
pub struct Receiver {
    read: OwnedReadHalf,
    buf: BytesMut,
}

pub async fn connect(addr: &str) -> Result<(Sender, Receiver), ClientError> {
    connect_as(addr, "floe-bench").await
}

/// `connect`, naming the client `client_id` in every request.
pub async fn connect_as(
    addr: &str,
    client_id: &'static str,
) -> Result<(Sender, Receiver), ClientError> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (read, write) = stream.into_split();
    Ok((
        Sender {
            write,
            next_correlation: 0,
            client_id,
        },
        Receiver {
            read,
            buf: BytesMut::with_capacity(1 << 20),
        },
    ))
}

impl Sender {
    /// Sends a request; returns its correlation id.
    pub async fn send(&mut self, version: i16, body: &RequestBody) -> Result<i32, ClientError> {
        self.next_correlation = self.next_correlation.wrapping_add(1);
        let header = RequestHeader {
            request_api_key: body.api_key() as i16,
            request_api_version: version,
            correlation_id: self.next_correlation,
            client_id: Some(self.client_id.into()),
            ..Default::default()
        };
        let frame =
            encode_request(&header, body).map_err(|e| ClientError::Protocol(e.to_string()))?;
        self.write.write_all(&frame).await?;
        Ok(self.next_correlation)
    }
}

impl Receiver {
    /// Reads the next response, which answers the request sent as `api` at `version`.
    pub async fn receive(
        &mut self,
        api: ApiKey,
        version: i16,
    ) -> Result<(i32, ResponseBody), ClientError> {
        loop {
            if let Some(mut frame) = split_frame(&mut self.buf, 1 << 30)
                .map_err(|e| ClientError::Protocol(e.to_string()))?
            {
                let header =
                    ResponseHeader::decode(&mut frame, api.response_header_version(version))
                        .map_err(|e| ClientError::Protocol(e.to_string()))?;
                let body = ResponseBody::decode(api, &mut frame, version)
                    .map_err(|e| ClientError::Protocol(e.to_string()))?;
                return Ok((header.correlation_id, body));
            }
            if self.read.read_buf(&mut self.buf).await? == 0 {
                return Err(ClientError::Closed);
            }
        }
    }
}

/// One request and its response on a fresh exchange (set-up calls).
pub async fn call(
    sender: &mut Sender,
    receiver: &mut Receiver,
    version: i16,
    body: RequestBody,
) -> Result<ResponseBody, ClientError> {
    let api = body.api_key();
    sender.send(version, &body).await?;
    Ok(receiver.receive(api, version).await?.1)
}
