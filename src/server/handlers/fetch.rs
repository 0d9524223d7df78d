//! Fetch (key 1): plan from the partition index, read byte ranges, patch headers; long-poll.
//!
//! When less than `min_bytes` is available the request waits, up to `max_wait_ms`, for a commit
//! to make more visible: it sleeps on the metadata store's change signal, not in a polling loop.

use crate::fetch::planner::{Plan, plan_fetch};
use crate::fetch::reader::read_batches;
use crate::metadata::state::PartitionState;
use crate::protocol::ErrorCode;
use crate::protocol::messages::FetchRequest;
use crate::protocol::messages::FetchResponse;
use crate::protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use crate::protocol::record_batch::Batches;
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::telemetry::BrokerMetrics;
use std::time::Duration;

/// A long poll never waits longer than this, whatever the client asks.
const MAX_WAIT_CAP: Duration = Duration::from_secs(30);

pub async fn handle(broker: &Broker, request: FetchRequest, _version: i16) -> FetchResponse {
    let mut changes = broker.metadata.subscribe();
    let wait = Duration::from_millis(request.max_wait_ms.max(0) as u64).min(MAX_WAIT_CAP);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        changes.borrow_and_update();
        let (response, bytes) = fetch_once(broker, &request).await;
        let enough = bytes >= request.min_bytes.max(1) as usize;
        if enough || tokio::time::Instant::now() >= deadline {
            return response;
        }
        // Wake on the next commit, or give up at the deadline.
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => continue,
            _ => return fetch_once(broker, &request).await.0,
        }
    }
}

async fn fetch_once(broker: &Broker, request: &FetchRequest) -> (FetchResponse, usize) {
    let mut response = FetchResponse::default();
    let mut total = 0usize;
    let request_budget = request.max_bytes.max(0) as usize;
    for topic in &request.topics {
        let mut out = FetchableTopicResponse {
            topic: topic.topic.clone(),
            topic_id: topic.topic_id,
            ..Default::default()
        };
        for p in &topic.partitions {
            let state: Option<PartitionState> = broker.metadata.read(|s| {
                s.topic(&topic.topic)
                    .and_then(|t| {
                        usize::try_from(p.partition)
                            .ok()
                            .and_then(|i| t.partitions.get(i))
                    })
                    .cloned()
            });
            let mut data = PartitionData {
                partition_index: p.partition,
                high_watermark: -1,
                last_stable_offset: -1,
                log_start_offset: -1,
                ..Default::default()
            };
            let Some(state) = state else {
                data.error_code = ErrorCode::UnknownTopicOrPartition.code();
                out.partitions.push(data);
                continue;
            };
            data.high_watermark = state.high_watermark;
            data.last_stable_offset = state.high_watermark;
            data.log_start_offset = state.log_start_offset;
            // The request-wide budget is soft for the first partition (at least one batch).
            let budget = (p.partition_max_bytes.max(0) as usize).min(if total == 0 {
                usize::MAX
            } else {
                request_budget.saturating_sub(total)
            });
            match plan_fetch(&state, p.fetch_offset, budget as u64) {
                Plan::OutOfRange => data.error_code = ErrorCode::OffsetOutOfRange.code(),
                Plan::Empty => data.records = Some(bytes::Bytes::new()),
                Plan::Read(runs) if budget > 0 || total == 0 => {
                    match read_batches(
                        broker.store.as_ref(),
                        &runs,
                        p.fetch_offset,
                        budget.max(1),
                        LEADER_EPOCH,
                    )
                    .await
                    {
                        Ok(records) => {
                            total += records.len();
                            BrokerMetrics::add(&broker.metrics.fetch_bytes, records.len() as u64);
                            let count: i64 = Batches::new(records.clone())
                                .flatten()
                                .map(|b| i64::from(b.record_count().max(0)))
                                .sum();
                            BrokerMetrics::add(&broker.metrics.fetch_records, count as u64);
                            data.records = Some(records);
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, topic = %topic.topic, partition = p.partition, "fetch read failed");
                            data.error_code = ErrorCode::KafkaStorageError.code();
                        }
                    }
                }
                Plan::Read(_) => data.records = Some(bytes::Bytes::new()),
            }
            out.partitions.push(data);
        }
        response.responses.push(out);
    }
    (response, total)
}
