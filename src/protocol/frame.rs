//! Kafka framing: a 4-byte big-endian size, then the request or response.
//!
//! A frame's size comes from the network, so it is checked against a configured maximum
//! before any buffer grows to hold it; a bad size is the connection's fault and closes it.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::messages::{ApiKey, RequestBody, RequestHeader, ResponseHeader};
use super::spliced::{self, Records};
use super::wire::{self, DecodeError, EncodeError, Message};

/// The default largest request accepted (Kafka's `socket.request.max.bytes`).
pub const DEFAULT_FRAME_BYTES_MAX: usize = 100 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame size {size} is negative")]
    NegativeSize { size: i32 },
    #[error("frame of {size} bytes exceeds the maximum of {max}")]
    TooLarge { size: usize, max: usize },
}

/// The size the frame at the front of `buf` declares, once its 4-byte header has arrived.
pub fn declared_frame_size(
    buf: &[u8],
    frame_bytes_max: usize,
) -> Result<Option<usize>, FrameError> {
    let Some(header) = buf.get(..4) else {
        return Ok(None);
    };
    let size = i32::from_be_bytes([header[0], header[1], header[2], header[3]]);
    let size = usize::try_from(size).map_err(|_| FrameError::NegativeSize { size })?;
    if size > frame_bytes_max {
        return Err(FrameError::TooLarge {
            size,
            max: frame_bytes_max,
        });
    }
    Ok(Some(size))
}

/// Takes one whole frame off the front of `buf`, or `None` until enough bytes have arrived.
/// Space for the rest of a frame is reserved at once, so callers account for a frame's size
/// (`declared_frame_size`) before they call this.
pub fn split_frame(
    buf: &mut BytesMut,
    frame_bytes_max: usize,
) -> Result<Option<Bytes>, FrameError> {
    let Some(size) = declared_frame_size(buf, frame_bytes_max)? else {
        return Ok(None);
    };
    if buf.len() < 4 + size {
        buf.reserve(4 + size - buf.len());
        return Ok(None);
    }
    buf.advance(4);
    Ok(Some(buf.split_to(size).freeze()))
}

/// Why a request frame could not be turned into a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("request header: {0}")]
    Header(DecodeError),
    #[error("unknown API key {api_key} (correlation id {correlation_id})")]
    UnknownApiKey { api_key: i16, correlation_id: i32 },
    #[error(transparent)]
    Body(DecodeError),
}

/// A request's header, parsed; the body is left as bytes until the version is known to be served.
#[derive(Debug, Clone)]
pub struct RequestFrame {
    pub api_key: ApiKey,
    pub header: RequestHeader,
    pub body: Bytes,
    /// The request's size in bytes, header and body (without the size prefix): what Kafka's
    /// produce quota counts.
    pub size: usize,
}

impl RequestFrame {
    pub fn api_version(&self) -> i16 {
        self.header.request_api_version
    }

    pub fn correlation_id(&self) -> i32 {
        self.header.correlation_id
    }

    pub fn decode_body(&self) -> Result<RequestBody, DecodeError> {
        RequestBody::decode(self.api_key, &mut self.body.clone(), self.api_version())
    }
}

/// Parses the request header (v1 or v2, chosen by the API key and version it names).
pub fn parse_request(frame: Bytes) -> Result<RequestFrame, RequestError> {
    let mut peek = frame.clone();
    let api_key = wire::read_i16(&mut peek).map_err(|e| header_error(e, "RequestApiKey"))?;
    let api_version =
        wire::read_i16(&mut peek).map_err(|e| header_error(e, "RequestApiVersion"))?;
    let Some(key) = ApiKey::from_i16(api_key) else {
        let correlation_id = wire::read_i32(&mut peek).unwrap_or(-1);
        return Err(RequestError::UnknownApiKey {
            api_key,
            correlation_id,
        });
    };
    let header_version = key.request_header_version(api_version);
    let size = frame.len();
    let mut body = frame;
    let header = RequestHeader::decode(&mut body, header_version).map_err(RequestError::Header)?;
    Ok(RequestFrame {
        api_key: key,
        header,
        body,
        size,
    })
}

fn header_error(kind: wire::WireError, field: &'static str) -> RequestError {
    RequestError::Header(kind.at(field).finish("RequestHeader", 1))
}

/// A response frame as the parts it is sent in: the encoded response, with the long record
/// parts it carries spliced in between (see `spliced`), in order; and the throttle time it
/// answers, for which its connection reads nothing more once it is sent (Kafka's channel
/// muting, KIP-219: a client over its quota is held whether or not it pauses itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    parts: Vec<Bytes>,
    throttle: std::time::Duration,
}

impl Frame {
    /// The frame, holding its connection for `throttle` once sent.
    pub fn throttled(self, throttle: std::time::Duration) -> Frame {
        Frame { throttle, ..self }
    }

    pub fn throttle(&self) -> std::time::Duration {
        self.throttle
    }

    pub fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame in one piece (a copy when it has several parts).
    pub fn to_bytes(&self) -> Bytes {
        Records::from_parts(self.parts.iter().cloned()).to_bytes()
    }
}

/// A frame already encoded whole (one another agent answered).
impl From<Bytes> for Frame {
    fn from(frame: Bytes) -> Frame {
        let parts = if frame.is_empty() {
            vec![]
        } else {
            vec![frame]
        };
        Frame {
            parts,
            throttle: Default::default(),
        }
    }
}

/// Encodes a response frame: size, response header (v0/v1 per API), then the body that
/// `write_body` writes. Long record parts in the body are not copied: they become parts of
/// the frame.
pub fn encode_response(
    api_key: ApiKey,
    api_version: i16,
    correlation_id: i32,
    write_body: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
) -> Result<Frame, EncodeError> {
    let mut buf = BytesMut::with_capacity(256);
    buf.put_i32(0);
    let header = ResponseHeader {
        correlation_id,
        ..Default::default()
    };
    header.encode(&mut buf, api_key.response_header_version(api_version))?;
    let (written, splices) = spliced::capture(&mut buf, write_body);
    written?;
    let total = buf.len() + splices.iter().map(|(_, part)| part.len()).sum::<usize>();
    let size = i32::try_from(total - 4).map_err(|_| EncodeError::TooLong(total))?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    let mut encoded = buf.freeze();
    let mut parts = Vec::with_capacity(2 * splices.len() + 1);
    let mut taken = 0;
    for (at, part) in splices {
        parts.push(encoded.split_to(at - taken));
        taken = at;
        parts.push(part);
    }
    parts.push(encoded);
    parts.retain(|part| !part.is_empty());
    Ok(Frame {
        parts,
        throttle: Default::default(),
    })
}

/// Encodes a request frame (clients and tests).
pub fn encode_request(header: &RequestHeader, body: &RequestBody) -> Result<Bytes, EncodeError> {
    let key = body.api_key();
    let version = header.request_api_version;
    let mut buf = BytesMut::with_capacity(256);
    buf.put_i32(0);
    header.encode(&mut buf, key.request_header_version(version))?;
    body.encode(&mut buf, version)?;
    let size = i32::try_from(buf.len() - 4).map_err(|_| EncodeError::TooLong(buf.len()))?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf.freeze())
}

/// Encodes a request frame again from its parsed header and its undecoded body (a request
/// passed on to another agent as it was read).
pub fn reframe_request(frame: &RequestFrame) -> Result<Bytes, EncodeError> {
    let version = frame.api_version();
    let mut buf = BytesMut::with_capacity(64 + frame.body.len());
    buf.put_i32(0);
    frame
        .header
        .encode(&mut buf, frame.api_key.request_header_version(version))?;
    buf.put_slice(&frame.body);
    let size = i32::try_from(buf.len() - 4).map_err(|_| EncodeError::TooLong(buf.len()))?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::MetadataRequest;

    #[test]
    fn long_records_become_parts_of_the_frame_and_it_reads_as_if_copied() {
        use crate::protocol::messages::FetchResponse;
        use crate::protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
        let partition = |index: i32, parts: &[usize]| PartitionData {
            partition_index: index,
            records: Some(Records::from_parts(
                parts.iter().map(|&n| Bytes::from(vec![index as u8; n])),
            )),
            ..Default::default()
        };
        let long = spliced::SPLICE_MIN;
        let response = FetchResponse {
            responses: vec![FetchableTopicResponse {
                topic: "t".into(),
                partitions: vec![
                    partition(0, &[16, long, 3]),
                    partition(1, &[10]),
                    partition(2, &[long + 1]),
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        for version in [4, 12, 16] {
            let frame = encode_response(ApiKey::Fetch, version, 9, |buf| {
                response.encode(buf, version)
            })
            .unwrap();
            // The two long parts travel as they are, between copied ones.
            let long_parts = frame.parts().iter().filter(|p| p.len() >= long).count();
            assert_eq!(long_parts, 2, "v{version}");
            assert!(frame.parts().len() >= 4, "v{version}");
            let mut copied = BytesMut::new();
            response.encode(&mut copied, version).unwrap();
            let whole = frame.to_bytes();
            assert_eq!(whole.len(), frame.len());
            assert_eq!(
                i32::from_be_bytes(whole[..4].try_into().unwrap()) as usize,
                whole.len() - 4
            );
            assert!(
                whole.ends_with(&copied),
                "v{version}: the body differs from a copy"
            );
            let mut body = whole.slice(4..);
            ResponseHeader::decode(&mut body, ApiKey::Fetch.response_header_version(version))
                .unwrap();
            let decoded = FetchResponse::decode(&mut body, version).unwrap();
            let records = |r: &FetchResponse| -> Vec<_> {
                r.responses[0]
                    .partitions
                    .iter()
                    .map(|p| p.records.clone())
                    .collect()
            };
            assert_eq!(records(&decoded), records(&response), "v{version}");
        }
    }

    #[test]
    fn frames_wait_for_all_their_bytes_and_respect_the_maximum() {
        let mut buf = BytesMut::from(&[0u8, 0, 0, 3, 1, 2][..]);
        assert_eq!(split_frame(&mut buf, 10), Ok(None));
        buf.put_u8(3);
        assert_eq!(
            split_frame(&mut buf, 10),
            Ok(Some(Bytes::from_static(&[1, 2, 3])))
        );
        assert!(buf.is_empty());
        let mut huge = BytesMut::from(&[0x7fu8, 0xff, 0xff, 0xff][..]);
        assert!(matches!(
            split_frame(&mut huge, 1024),
            Err(FrameError::TooLarge { .. })
        ));
        let mut negative = BytesMut::from(&[0xffu8, 0xff, 0xff, 0xfe][..]);
        assert!(matches!(
            split_frame(&mut negative, 1024),
            Err(FrameError::NegativeSize { .. })
        ));
    }

    #[test]
    fn requests_round_trip_through_frames_with_either_header_version() {
        for version in [0i16, 4, 9, 12] {
            let header = RequestHeader {
                request_api_key: ApiKey::Metadata as i16,
                request_api_version: version,
                correlation_id: 7,
                client_id: Some("client-1".into()),
                ..Default::default()
            };
            let body = RequestBody::Metadata(MetadataRequest {
                topics: None.filter(|_| version > 0).or(Some(Vec::new())),
                ..Default::default()
            });
            let mut framed = BytesMut::from(&encode_request(&header, &body).expect("encodes")[..]);
            let frame = split_frame(&mut framed, 1 << 20)
                .expect("valid")
                .expect("whole");
            let parsed = parse_request(frame).expect("parses");
            assert_eq!(parsed.api_key, ApiKey::Metadata);
            assert_eq!(parsed.correlation_id(), 7);
            assert_eq!(parsed.header.client_id.as_deref(), Some("client-1"));
            assert_eq!(parsed.decode_body().expect("body"), body);
        }
    }

    #[test]
    fn the_metadata_body_that_aborts_kafka_protocol_is_an_error_here() {
        let mut body = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff]);
        let err = MetadataRequest::decode(&mut body, 0).expect_err("hostile length");
        assert_eq!(err.message, "MetadataRequest");
        assert_eq!(err.field, "Topics");
        assert!(
            err.to_string().contains("MetadataRequest v0 at Topics"),
            "{err}"
        );
    }

    #[test]
    fn unknown_api_keys_are_reported_with_their_correlation_id() {
        let frame = Bytes::from_static(&[0x7f, 0x00, 0, 1, 0, 0, 0, 42, 0xff, 0xff]);
        assert_eq!(
            parse_request(frame).unwrap_err(),
            RequestError::UnknownApiKey {
                api_key: 0x7f00,
                correlation_id: 42
            }
        );
    }
}
