//! Kafka's rules for the batches a client produces (its `LogValidator`), pure: what a batch
//! must be to be accepted, and the error and message Kafka answers when it is not.

use crate::produce::settings::TopicSettings;
use crate::protocol::ErrorCode;
use crate::protocol::record_batch::{
    BatchError, Batches, Compression, RecordBatch, set_log_append_time,
};
use crate::protocol::records;

/// What a client's batches are checked against.
pub struct Checks {
    pub settings: TopicSettings,
    /// The request's version (zstd needs v7).
    pub version: i16,
    /// Whether the request names a transactional id (its batches must be transactional).
    pub transactional: bool,
    pub now_ms: i64,
    /// `topic-partition`, as Kafka's messages name it.
    pub partition: String,
}

/// Per-record errors answered for one partition at most (the rest are counted in the
/// message).
const RECORD_ERRORS_MAX: usize = 1000;

/// Splits a records blob into whole, valid v2 batches, checked as Kafka checks a client's
/// batches (`LogValidator`): the header, the CRC, then the records of an uncompressed batch
/// (their count and framing) and their timestamps. A refusal carries the code and a message.
/// Kafka's per-record errors of a refused batch go to `record_errors` (index in the batch,
/// message), so a client fails only those records with the error and retries the others.
pub fn validate(
    records: bytes::Bytes,
    checks: &Checks,
    record_errors: &mut Vec<(i32, String)>,
) -> Result<Vec<RecordBatch>, (ErrorCode, String)> {
    let settings = &checks.settings;
    let batch_bytes_max = settings.max_message_bytes;
    let mut batches = Vec::new();
    for batch in Batches::new(records) {
        let batch = batch.map_err(|e| match e {
            BatchError::UnsupportedMagic(_) => {
                (ErrorCode::UnsupportedForMessageFormat, e.to_string())
            }
            _ => (ErrorCode::CorruptMessage, e.to_string()),
        })?;
        if batch.size() > batch_bytes_max {
            return Err((
                ErrorCode::MessageTooLarge,
                format!(
                    "The record batch size in the append to {} is {} bytes which exceeds the \
                     maximum configured value of {batch_bytes_max}.",
                    checks.partition,
                    batch.size()
                ),
            ));
        }
        if let Some(refusal) = client_batch_refusal(&batch, checks.version, checks.transactional) {
            return Err(refusal);
        }
        batch
            .validate()
            .map_err(|e| (ErrorCode::CorruptMessage, e.to_string()))?;
        if let Some(codec) = settings.compression
            && batch.compression() != codec
        {
            return Err((
                ErrorCode::InvalidRecord,
                format!(
                    "topic partition {} has compression.type {codec:?} and this batch is \
                     {:?}: floe stores batches as sent and does not recompress them; set the \
                     producer's compression.type to match",
                    checks.partition,
                    batch.compression()
                ),
            ));
        }
        // Kafka refuses the flag from any client, whatever the topic's timestamp type.
        if batch.is_log_append_time() {
            return Err((
                ErrorCode::InvalidTimestamp,
                format!(
                    "Invalid timestamp type in message with offset delta 0. Producer should not \
                     set timestamp type to LogAppendTime (topic partition {}).",
                    checks.partition
                ),
            ));
        }
        let (policy, now_ms) = (&settings.timestamps, checks.now_ms);
        let mut out_of_range = None;
        let mut keyless = Vec::new();
        let mut visit = |r: records::RecordMeta| {
            if out_of_range.is_none() {
                out_of_range = policy.refusal(r.offset_delta, r.timestamp, now_ms);
            }
            if r.key_is_null {
                keyless.push(r.index);
            }
        };
        // Records are read when uncompressed, or when the topic needs their keys; otherwise
        // the header's first and max timestamps are checked.
        if batch.compression() == Compression::None || settings.compacted {
            let limit = crate::protocol::compression::decompressed_limit(batch.size());
            records::walk_decompressed(&batch, limit, &mut visit)
                .map_err(|e| (ErrorCode::InvalidRecord, e.to_string()))?;
        } else {
            out_of_range = policy.header_refusal(&batch, now_ms);
        }
        if let Some(message) = out_of_range {
            return Err((ErrorCode::InvalidTimestamp, message));
        }
        if settings.compacted && !keyless.is_empty() {
            let message = format!(
                "Compacted topic cannot accept message without key in topic partition {}",
                checks.partition
            );
            let shown: Vec<String> = keyless
                .iter()
                .take(3)
                .map(|i| format!("RecordError(batchIndex={i}, message='{message}')"))
                .collect();
            record_errors.extend(
                keyless
                    .iter()
                    .take(RECORD_ERRORS_MAX)
                    .map(|&i| (i, message.clone())),
            );
            return Err((
                ErrorCode::InvalidRecord,
                format!(
                    "One or more records have been rejected due to {} record errors in total, \
                     and only showing the first three errors at most: [{}]",
                    keyless.len(),
                    shown.join(", ")
                ),
            ));
        }
        let batch = if settings.log_append_time {
            let mut stamped = batch.as_bytes().to_vec();
            set_log_append_time(&mut stamped, now_ms);
            RecordBatch::new(stamped.into())
                .map_err(|e| (ErrorCode::CorruptMessage, e.to_string()))?
        } else {
            batch
        };
        batches.push(batch);
    }
    if batches.is_empty() {
        return Err((ErrorCode::InvalidRecord, "no record batch".into()));
    }
    Ok(batches)
}

/// What Kafka refuses in a batch a client sent, before looking at its CRC.
fn client_batch_refusal(
    batch: &RecordBatch,
    version: i16,
    transactional: bool,
) -> Option<(ErrorCode, String)> {
    let count = i64::from(batch.record_count());
    let span = batch.offset_count();
    let refusal = if batch.is_control() {
        (
            ErrorCode::InvalidRecord,
            "clients may not write control batches".to_string(),
        )
    } else if batch.is_transactional() != transactional {
        // Whether the batch is in a transaction must agree with the request (the state
        // machine then checks that the transaction is open and holds the partition).
        (
            ErrorCode::InvalidRecord,
            if transactional {
                "a transactional request holds a batch that is not transactional".to_string()
            } else {
                "a transactional batch needs the request's transactional id".to_string()
            },
        )
    } else if batch.is_transactional() && batch.producer_id() < 0 {
        (
            ErrorCode::InvalidRecord,
            "a transactional batch needs a producer id".to_string(),
        )
    } else if span <= 0 {
        (
            ErrorCode::InvalidRecord,
            format!("invalid last offset delta {}", batch.last_offset_delta()),
        )
    } else if count <= 0 || count != span {
        (
            ErrorCode::InvalidRecord,
            format!("the batch counts {count} records but its offsets span {span}"),
        )
    } else if batch.producer_id() >= 0 && batch.base_sequence() < 0 {
        (
            ErrorCode::InvalidRecord,
            format!(
                "invalid sequence number {} for producer {}",
                batch.base_sequence(),
                batch.producer_id()
            ),
        )
    } else if let Compression::Unknown(id) = batch.compression() {
        (
            ErrorCode::CorruptMessage,
            format!("unknown compression codec {id}"),
        )
    } else if batch.compression() == Compression::Zstd && version < 7 {
        (
            ErrorCode::UnsupportedCompressionType,
            "zstd needs Produce v7 or later".to_string(),
        )
    } else {
        return None;
    };
    Some(refusal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::build_test_batch;
    use std::collections::BTreeMap;

    fn checks(configs: &[(&str, &str)], transactional: bool) -> Checks {
        let configs: BTreeMap<String, String> = configs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Checks {
            settings: TopicSettings::of(&configs, 1 << 20, 1 << 30),
            version: 9,
            transactional,
            now_ms: 1_700_000_000_000,
            partition: "t-0".into(),
        }
    }

    fn check(records: bytes::Bytes, checks: &Checks) -> Result<usize, (ErrorCode, String)> {
        validate(records, checks, &mut Vec::new()).map(|batches| batches.len())
    }

    #[test]
    fn whole_valid_batches_are_accepted() {
        let mut two = build_test_batch(7, 0, 0, 3, 10).to_vec();
        two.extend_from_slice(&build_test_batch(7, 0, 3, 2, 10));
        assert_eq!(check(two.into(), &checks(&[], false)), Ok(2));
    }

    #[test]
    fn a_batch_above_the_topics_max_message_bytes_is_message_too_large() {
        let batch = build_test_batch(-1, -1, -1, 10, 1000);
        let (code, message) =
            check(batch, &checks(&[("max.message.bytes", "500")], false)).expect_err("refused");
        assert_eq!(code, ErrorCode::MessageTooLarge);
        assert!(
            message.contains("t-0") && message.contains("500"),
            "{message}"
        );
    }

    #[test]
    fn a_batch_must_agree_with_the_request_on_being_transactional() {
        let batch = build_test_batch(7, 0, 0, 1, 10);
        let (code, _) = check(batch, &checks(&[], true)).expect_err("refused");
        assert_eq!(code, ErrorCode::InvalidRecord);
    }

    #[test]
    fn a_damaged_batch_is_corrupt_and_nothing_at_all_is_invalid() {
        let mut damaged = build_test_batch(-1, -1, -1, 2, 10).to_vec();
        let last = damaged.len() - 1;
        damaged[last] ^= 0xff;
        let (code, _) = check(damaged.into(), &checks(&[], false)).expect_err("refused");
        assert_eq!(code, ErrorCode::CorruptMessage);
        let (code, _) = check(bytes::Bytes::new(), &checks(&[], false)).expect_err("refused");
        assert_eq!(code, ErrorCode::InvalidRecord);
    }
}
