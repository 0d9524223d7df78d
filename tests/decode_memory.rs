//! Decoding a hostile frame allocates at most a small multiple of the frame, measured by a
//! counting global allocator: every allocation of this test binary passes through it, so what
//! the decoder reserves cannot hide.
//!
//! One test, its cases in sequence: the counters are global, and a second test running on
//! another thread would add its own allocations to the peak.

use bytes::{BufMut, Bytes, BytesMut};
use floe::protocol::ApiKey;
use floe::protocol::decode_budget::{DECODE_SLACK_BYTES, DECODED_PER_WIRE_BYTE};
use floe::protocol::frame::parse_request;
use floe::protocol::messages::RequestBody;
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The most `f` had allocated at once beyond what was live when it started.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    let out = f();
    (out, ALLOCATOR.peak_usage() - base)
}

const FRAME: usize = 64 << 20;

fn put_uvarint(buf: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        buf.put_u8((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

/// A flexible request header (v2): key, version, correlation id, no client id, no tags.
fn flexible_header(api: ApiKey, version: i16) -> BytesMut {
    let mut buf = BytesMut::with_capacity(FRAME + 64);
    buf.put_i16(api as i16);
    buf.put_i16(version);
    buf.put_i32(7);
    buf.put_i16(-1);
    buf
}

/// Elements of `element` repeated to fill the frame, behind a compact array count.
fn compact_array_of(buf: &mut BytesMut, element: &[u8], room: usize) {
    let count = room / element.len();
    put_uvarint(buf, count as u64 + 1);
    for _ in 0..count {
        buf.put_slice(element);
    }
}

struct Case {
    name: &'static str,
    frame: Bytes,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();

    // OffsetFetch v8: groups of 3 bytes each (an empty id, no topics, no tags), each 100+
    // bytes in memory: 22 million of them would take 2.3 GB.
    let mut buf = flexible_header(ApiKey::OffsetFetch, 8);
    buf.put_u8(0);
    compact_array_of(&mut buf, &[1, 0, 0], FRAME - 32);
    buf.put_u8(0);
    buf.put_u8(0);
    cases.push(Case {
        name: "OffsetFetch v8: 22M empty groups",
        frame: buf.freeze(),
    });

    // The request header's tagged fields, for any API: 2 bytes each (tag, size 0).
    let mut buf = BytesMut::with_capacity(FRAME + 64);
    buf.put_i16(ApiKey::Metadata as i16);
    buf.put_i16(12);
    buf.put_i32(7);
    buf.put_i16(-1);
    let count = (FRAME - 32) / 2;
    put_uvarint(&mut buf, count as u64);
    for i in 0..count {
        buf.put_u8((i % 100) as u8);
        buf.put_u8(0);
    }
    cases.push(Case {
        name: "request header: 33M tagged fields",
        frame: buf.freeze(),
    });

    // DescribeGroups v5: one-character group ids, 2 bytes each.
    let mut buf = flexible_header(ApiKey::DescribeGroups, 5);
    buf.put_u8(0);
    compact_array_of(&mut buf, &[2, b'g'], FRAME - 32);
    buf.put_u8(0);
    buf.put_u8(0);
    cases.push(Case {
        name: "DescribeGroups v5: 33M one-character ids",
        frame: buf.freeze(),
    });

    // CreateTopics v5: a thousand topics, each a large array of replica assignments of 3
    // bytes on the wire: the memory grows topic by topic, so the budget stops it midway.
    let mut buf = flexible_header(ApiKey::CreateTopics, 5);
    buf.put_u8(0);
    let topics = 1000;
    put_uvarint(&mut buf, topics + 1);
    let per_topic = (FRAME - 64) / topics as usize;
    for t in 0..topics {
        let name = format!("t{t:04}");
        put_uvarint(&mut buf, name.len() as u64 + 1);
        buf.put_slice(name.as_bytes());
        buf.put_i32(-1);
        buf.put_i16(-1);
        // partition_index (4), no broker ids (1), no tags (1)
        compact_array_of(&mut buf, &[0, 0, 0, 0, 1, 0], per_topic - 20);
        buf.put_u8(1); // no configs
        buf.put_u8(0);
    }
    buf.put_i32(1000);
    buf.put_u8(0);
    buf.put_u8(0);
    cases.push(Case {
        name: "CreateTopics v5: 1,000 topics of 11,000 assignments",
        frame: buf.freeze(),
    });

    // A real request of the same size: Produce v9 with 64 MiB of records (a slice of the frame).
    let mut buf = flexible_header(ApiKey::Produce, 9);
    buf.put_u8(0);
    buf.put_u8(0); // no transactional id
    buf.put_i16(-1);
    buf.put_i32(30_000);
    put_uvarint(&mut buf, 2);
    buf.put_u8(2);
    buf.put_u8(b't');
    put_uvarint(&mut buf, 2);
    buf.put_i32(0);
    let records = FRAME - 64;
    put_uvarint(&mut buf, records as u64 + 1);
    buf.put_bytes(0, records);
    buf.put_u8(0);
    buf.put_u8(0);
    buf.put_u8(0);
    cases.push(Case {
        name: "Produce v9: 64 MiB of records",
        frame: buf.freeze(),
    });
    cases
}

/// Header and body, as the connection decodes a frame.
fn decode(frame: Bytes) -> Result<RequestBody, String> {
    let request = parse_request(frame).map_err(|e| e.to_string())?;
    request.decode_body().map_err(|e| e.to_string())
}

#[test]
fn decoding_any_frame_allocates_at_most_three_times_it_plus_a_constant() {
    for case in cases() {
        let len = case.frame.len();
        let (result, peak) = peak_of(|| decode(case.frame.clone()).map(|body| body.api_key()));
        let bound = DECODED_PER_WIRE_BYTE * len + DECODE_SLACK_BYTES;
        println!(
            "{}: {} bytes, decode peak {} bytes ({:.3}× the frame; frame and decode {:.3}×): {:?}",
            case.name,
            len,
            peak,
            peak as f64 / len as f64,
            (len + peak) as f64 / len as f64,
            result.as_ref().map_err(|e| &e[..e.len().min(160)])
        );
        assert!(
            peak <= bound,
            "{}: decoding allocated {peak} bytes, more than {bound}",
            case.name
        );
        if case.name.starts_with("Produce") {
            assert_eq!(result, Ok(ApiKey::Produce), "a real request still decodes");
        } else {
            assert!(result.is_err(), "{}: refused", case.name);
        }
    }
}
