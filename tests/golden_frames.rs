//! Golden frames: request bytes captured from real clients (librdkafka through kcat and
//! confluent-kafka, and kafka-python) decode, and re-encode byte for byte.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

use bytes::Bytes;
use floe::protocol::frame::{encode_request, parse_request};
use floe::protocol::messages::RequestBody;
use floe::protocol::record_batch::Batches;

#[test]
fn captured_client_requests_decode_and_re_encode_identically() {
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir("tests/golden")
        .expect("tests/golden")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        let raw = Bytes::from(std::fs::read(&path).expect("read"));
        let name = path.display().to_string();
        let frame = parse_request(raw.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let body = frame
            .decode_body()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let encoded =
            encode_request(&frame.header, &body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&encoded[4..], &raw[..], "{name}: re-encoding differs");
        if let RequestBody::Produce(produce) = &body {
            for topic in &produce.topic_data {
                for partition in &topic.partition_data {
                    let records = partition.records.as_ref().expect("records").to_bytes();
                    for batch in Batches::new(records) {
                        let batch = batch.unwrap_or_else(|e| panic!("{name}: {e}"));
                        batch.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
                    }
                }
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 15,
        "expected the captured frames, found {checked}"
    );
}
