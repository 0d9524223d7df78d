//! ListOffsets (key 2): earliest (-2), latest (-1), max timestamp (-3), earliest local (-4),
//! latest tiered (-5), earliest pending upload (-6), or the first record at or after a time.
//!
//! floe topics have no local tier (`remote.storage.enable` is false: every byte is in the
//! object store already), so as Kafka answers for such a topic, earliest local is the log
//! start, and latest tiered and earliest pending upload have no offset (-1).

use crate::fetch::by_time::{RunBatches, candidate_entries, first_record_at_or_after};
use crate::fetch::reader::Run;
use crate::fetch::reader::read_run;
use crate::fetch::runs::{locate, runs_reaching};
use crate::ids::Offset;
use crate::metadata::state::markers::Marker;
use crate::metadata::state::{BatchRef, Objects, PartitionState};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ListOffsetsRequest;
use crate::protocol::messages::ListOffsetsResponse;
use crate::protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use crate::protocol::record_batch::RecordBatch;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::{Broker, LEADER_EPOCH};
use crate::server::fresh_copy::{LocalCopy, catch_up};
use crate::telemetry::ErrorChain;
use std::sync::Arc;

const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;
const LATEST_TIERED: i64 = -5;
const EARLIEST_PENDING_UPLOAD: i64 = -6;

pub struct ListOffsets;

impl Api for ListOffsets {
    type Request = ListOffsetsRequest;
    type Response = ListOffsetsResponse;
    const KEY: ApiKey = ApiKey::ListOffsets;
    const VERSIONS: (i16, i16) = (1, 11);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_DESCRIBE]);

    fn coordinator(_: &ListOffsetsRequest) -> Option<&str> {
        None
    }

    /// A topic the client may not describe is answered with TOPIC_AUTHORIZATION_FAILED.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut ListOffsetsRequest,
        version: i16,
    ) -> Authorized<ListOffsetsResponse> {
        let refused = ListOffsetsRequest {
            topics: take_refused(&mut request.topics, |t| {
                gate.allowed(Acl::TOPIC_DESCRIBE, &t.name)
            }),
            ..Default::default()
        };
        Authorized::restoring_items(refused, version, ErrorCode::TopicAuthorizationFailed)
    }

    async fn handle(ctx: Ctx<'_>, request: ListOffsetsRequest) -> Reply<ListOffsetsResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: ListOffsetsRequest,
    version: i16,
) -> ListOffsetsResponse {
    let copy = catch_up(broker).await;
    // Versions before 4 cannot carry a leader epoch.
    let leader_epoch = if version >= 4 { LEADER_EPOCH } else { -1 };
    // Copies of the partitions asked for, taken under the metadata lock (cheap: a partition's
    // index is a persistent vector the copy shares); lookups by time read objects after it is
    // released, so they never delay a commit.
    // read_committed (isolation level 1): the latest offset is the last stable offset.
    let read_committed = request.isolation_level == 1;
    let (objects, partitions): (Objects, Vec<Vec<Option<Copied>>>) =
        broker.metadata.read(|state| {
            let partitions = request
                .topics
                .iter()
                .map(|topic| {
                    let found = state.topic(&topic.name);
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            let index = usize::try_from(p.partition_index).ok()?;
                            let topic = found?;
                            let part = topic.partitions.get(index)?.clone();
                            let latest = match read_committed {
                                true => state
                                    .last_stable_offset(&crate::ids::TopicPartition {
                                        topic_id: topic.id,
                                        partition: p.partition_index,
                                    })
                                    .unwrap_or(part.high_watermark),
                                false => part.high_watermark,
                            };
                            Some((part, latest))
                        })
                        .collect()
                })
                .collect();
            (state.objects().clone(), partitions)
        });
    let mut topics = Vec::with_capacity(request.topics.len());
    for (topic, copies) in request.topics.iter().zip(partitions) {
        let mut out = ListOffsetsTopicResponse {
            name: topic.name.clone(),
            ..Default::default()
        };
        for (p, partition) in topic.partitions.iter().zip(copies) {
            let mut answer = ListOffsetsPartitionResponse {
                partition_index: p.partition_index,
                timestamp: -1,
                offset: -1,
                leader_epoch,
                ..Default::default()
            };
            match partition {
                None => answer.error_code = ErrorCode::UnknownTopicOrPartition.code(),
                // As Kafka answers for a leader whose high watermark is not known yet:
                // OFFSET_NOT_AVAILABLE from v5, LEADER_NOT_AVAILABLE before (older clients
                // do not know the former).
                Some(_) if copy == LocalCopy::MayLag => {
                    answer.error_code = match version >= 5 {
                        true => ErrorCode::OffsetNotAvailable.code(),
                        false => ErrorCode::LeaderNotAvailable.code(),
                    }
                }
                Some((part, latest)) => {
                    match lookup(broker, &objects, &part, latest, p.timestamp).await {
                        // read_committed: a record found by time at or past the last stable
                        // offset is not one the client may read yet (Kafka answers -1).
                        Ok(Some((offset, _)))
                            if read_committed
                                && (p.timestamp >= 0 || p.timestamp == MAX_TIMESTAMP)
                                && offset >= latest => {}
                        Ok(Some((offset, timestamp))) => {
                            (answer.offset, answer.timestamp) = (offset.0, timestamp)
                        }
                        Ok(None) => {}
                        Err(e) => {
                            tracing::warn!(error = %ErrorChain(&*e), topic = %topic.name, partition = p.partition_index, "list offsets by time failed");
                            answer.error_code = ErrorCode::KafkaStorageError.code();
                        }
                    }
                }
            }
            out.partitions.push(answer);
        }
        topics.push(out);
    }
    ListOffsetsResponse {
        topics,
        ..Default::default()
    }
}

type LookupError = Box<dyn std::error::Error + Send + Sync>;

/// A partition's state copied out of the metadata, with the offset "latest" answers (the
/// high watermark, or the last stable offset for read_committed).
type Copied = (PartitionState, Offset);

/// The offset (and its record's time, or -1) answering `spec`, or none.
async fn lookup(
    broker: &Broker,
    objects: &Objects,
    part: &PartitionState,
    latest: Offset,
    spec: i64,
) -> Result<Option<(Offset, i64)>, LookupError> {
    Ok(match spec {
        LATEST => Some((latest, -1)),
        EARLIEST | EARLIEST_LOCAL => Some((part.log_start_offset, -1)),
        LATEST_TIERED | EARLIEST_PENDING_UPLOAD => None,
        MAX_TIMESTAMP => {
            // The first record holding the largest time, in the first run that holds it.
            let newest = part
                .index
                .iter()
                .filter(|r| r.end_offset > part.log_start_offset && Marker::of(r).is_none())
                .fold(None::<&BatchRef>, |best, r| match best {
                    Some(b) if b.max_timestamp >= r.max_timestamp => Some(b),
                    _ => Some(r),
                });
            match newest {
                Some(entry) => {
                    let target = entry.max_timestamp;
                    first_in_entries(broker, objects, part, std::iter::once(entry), target).await?
                }
                None => None,
            }
        }
        // Other negative specs are not Kafka's; no record has such a time.
        target if target < 0 => None,
        target => {
            first_in_entries(
                broker,
                objects,
                part,
                candidate_entries(part, target),
                target,
            )
            .await?
        }
    })
}

/// The first offset whose record's time is at or after `target_ms` (a share group's
/// `by_duration` reset), the high watermark when no record is that recent; `None` when the
/// partition is unknown or its objects cannot be read.
pub async fn first_offset_at_or_after(
    broker: &Broker,
    tp: &crate::ids::TopicPartition,
    target_ms: i64,
) -> Option<Offset> {
    let (part, objects) = broker
        .metadata
        .read(|s| Some((s.partition(tp)?.clone(), s.objects().clone())))?;
    let latest = part.high_watermark;
    match lookup(broker, &objects, &part, latest, target_ms.max(0)).await {
        Ok(Some((offset, _))) => Some(offset),
        Ok(None) => Some(latest),
        Err(_) => None,
    }
}

/// The first record reaching `target` in `entries`: each entry's runs that reach it (a
/// segment's chunks, through its footer), in offset order.
async fn first_in_entries<'a>(
    broker: &Broker,
    objects: &Objects,
    part: &PartitionState,
    entries: impl Iterator<Item = &'a BatchRef>,
    target: i64,
) -> Result<Option<(Offset, i64)>, LookupError> {
    // A time lookup answers with a data record: markers hold none a client could read.
    for entry in entries.filter(|e| Marker::of(e).is_none()) {
        let located = locate(objects, entry).ok_or("an index entry names an unknown object")?;
        let runs = runs_reaching(
            &broker.segment_indexes,
            &broker.read_cache,
            &located,
            target,
        )
        .await?;
        if let Some(found) = first_in_runs(broker, part, runs.iter(), target).await? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The first record at or after the log start whose time reaches `target`, in `runs`: each
/// run's batch headers (cached), then the records of the batch that may hold it.
async fn first_in_runs<'a>(
    broker: &Broker,
    part: &PartitionState,
    runs: impl Iterator<Item = &'a Run>,
    target: i64,
) -> Result<Option<(Offset, i64)>, LookupError> {
    let read_cache = &broker.read_cache;
    for run in runs {
        let (batches, raw) = match broker.run_batches.get(run) {
            Some(batches) => (batches, None),
            None => {
                let raw = read_run(read_cache, run).await?;
                let batches = Arc::new(RunBatches::read(run, raw.clone())?);
                broker.run_batches.insert(run, batches.clone());
                (batches, Some(raw))
            }
        };
        for b in batches.candidates(target, part.log_start_offset) {
            let bytes = match &raw {
                Some(raw) => raw.slice(b.at as usize..(b.at + b.len) as usize),
                None => {
                    read_cache
                        .read(&run.object_key, run.byte_start + b.at, b.len)
                        .await?
                }
            };
            let batch = RecordBatch::new(bytes)?;
            if let Some(found) =
                first_record_at_or_after(&batch, b.base_offset, target, part.log_start_offset)
            {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}
