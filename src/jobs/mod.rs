//! Background jobs on agents with the `jobs` role: compaction of runs into segments, the
//! cleaner of compacted topics (`cleaning`), and the collector (retention, deletion of dead
//! objects, the orphan sweep).
//!
//! Each round an agent asks the quorum for leases (`metadata::state::jobs`): a share of the
//! compaction shards (their count over the live agents) and the collector. It runs what it
//! holds, through its own object client (retries, injected faults, and metrics apart from
//! produce and fetch, so the jobs' cost is visible), and commits through the quorum. A lease
//! that is not renewed lapses and the next agent takes it. The decisions are pure (`plan`);
//! this module is the I/O around them.

pub mod cleaning;
pub mod collector;
pub mod compactor;
pub mod context;
pub mod metrics;
pub mod plan;
pub mod sources;

use crate::clock::Clock;
use crate::fetch::runs::{Located, locate};
use crate::ids::TopicPartition;
use crate::metadata::state::MetadataState;
use crate::metadata::state::retention::Retention;
use crate::metadata::state::{AcquireLease, COMPACTION_SHARDS, Job, shard_of};
use crate::telemetry::ErrorChain;
use compactor::CompactionError;
use context::ENTRIES_PER_SWAP_MAX;
pub use context::JobContext;
use metrics::JobMetrics;
use plan::{CleanSettings, CompactionSettings, LogToClean, runs_to_compact};
use sources::{Sources, SpanBudget};
use std::time::Duration;

/// Runs the jobs until the task is dropped. The collector's first round comes one interval
/// after start, as Kafka's first retention check does.
pub async fn run(ctx: JobContext) {
    let started = Some(ctx.clock.now());
    let (mut last_collection, mut last_sweep) = (started, started);
    let mut free_last_round = Vec::new();
    loop {
        ctx.clock.sleep(ctx.config.compaction_interval).await;
        if !ctx.metadata.quorum().has_leader() {
            continue;
        }
        let held = acquire_leases(&ctx, &mut free_last_round).await;
        let shards: Vec<u16> = held
            .iter()
            .filter_map(|job| match job {
                Job::Compaction { shard } => Some(*shard),
                _ => None,
            })
            .collect();
        compact_shards(&ctx, &shards).await;
        if !held.contains(&Job::Collection) {
            continue;
        }
        if is_due(
            &ctx.clock,
            &mut last_collection,
            ctx.config.collection_interval,
        ) {
            JobMetrics::add(&ctx.metrics.collection_runs, 1);
            if let Err(e) = collector::collect(&ctx).await {
                JobMetrics::add(&ctx.metrics.collection_failures, 1);
                tracing::warn!(error = %ErrorChain(&e), "collection failed; it runs again next round");
            }
        }
        if is_due(
            &ctx.clock,
            &mut last_sweep,
            ctx.config.orphan_sweep_interval,
        ) {
            JobMetrics::add(&ctx.metrics.collection_runs, 1);
            if let Err(e) = collector::sweep_orphans(&ctx).await {
                JobMetrics::add(&ctx.metrics.collection_failures, 1);
                tracing::warn!(error = %ErrorChain(&e), "the orphan sweep failed; it runs again next round");
            }
        }
    }
}

/// Whether `every` has passed since `last`, and if so marks it run now.
fn is_due(clock: &Clock, last: &mut Option<tokio::time::Instant>, every: Duration) -> bool {
    let now = clock.now();
    let due = last.is_none_or(|at| now.duration_since(at) >= every);
    if due {
        *last = Some(now);
    }
    due
}

/// Renews what this agent holds and asks for its share of the rest, in one metadata write;
/// returns what it holds. The share is the shards over the live agents; a shard that stayed
/// free a whole round (not every agent runs jobs) is taken whatever the share, so every shard
/// has a compactor within two rounds.
async fn acquire_leases(ctx: &JobContext, free_last_round: &mut Vec<Job>) -> Vec<Job> {
    let wanted: Vec<Job> = ctx.metadata.read(|s| {
        let now_ms = s.now_ms();
        let agents = s.live_agents().count().max(1);
        let share = (COMPACTION_SHARDS as usize).div_ceil(agents);
        let mine = |job: &Job| s.lease(job).is_some_and(|l| l.holder == ctx.node_id);
        let free = |job: &Job| {
            s.lease(job)
                .is_none_or(|l| l.holder == ctx.node_id || l.until_ms <= now_ms)
        };
        // Start where this node's id points, so agents do not all ask for the same shards.
        let start = ctx.node_id.unsigned_abs() as usize;
        let shards: Vec<Job> = (0..COMPACTION_SHARDS as usize)
            .map(|i| Job::Compaction {
                shard: ((start + i) % COMPACTION_SHARDS as usize) as u16,
            })
            .collect();
        // Everything held is renewed (shedding shards to a later agent would leave them
        // without a compactor while their lease lapses): an agent that joins later takes
        // shards as their holders die or stop.
        let mut wanted: Vec<Job> = shards.iter().copied().filter(|j| mine(j)).collect();
        let others_free: Vec<Job> = shards
            .iter()
            .copied()
            .filter(|j| !mine(j) && free(j))
            .collect();
        let more = share.saturating_sub(wanted.len());
        let (within_share, beyond) = others_free.split_at(more.min(others_free.len()));
        wanted.extend_from_slice(within_share);
        wanted.extend(beyond.iter().filter(|j| free_last_round.contains(j)));
        *free_last_round = beyond.to_vec();
        if free(&Job::Collection) {
            wanted.push(Job::Collection);
        }
        wanted
    });
    let asks = wanted
        .iter()
        .map(|&job| AcquireLease {
            job,
            holder: ctx.node_id,
            for_ms: ctx.lease_ms(),
        })
        .collect();
    match ctx.metadata.write_each(asks).await {
        Ok(granted) => wanted
            .into_iter()
            .zip(granted)
            .filter_map(|(job, held)| held.then_some(job))
            .collect(),
        Err(e) => {
            tracing::debug!(error = %ErrorChain(&e), "asking for job leases failed");
            Vec::new()
        }
    }
}

/// A partition of a held shard, with the settings its merges and cleaning use.
struct Held {
    tp: TopicPartition,
    segment_bytes: u64,
    interval: u64,
    cleaning: Option<CleanSettings>,
}

/// Cleans and merges what is due in the partitions of the held shards. Each pass plans one
/// group of runs per partition and reads the objects of a batch of groups once
/// (`sources`): a produce object holds runs of many partitions.
async fn compact_shards(ctx: &JobContext, shards: &[u16]) {
    if shards.is_empty() {
        return;
    }
    let partitions = held_partitions(ctx, shards);
    for p in &partitions {
        if let Some(cleaning) = &p.cleaning {
            clean_partition(ctx, p.tp, cleaning, p.segment_bytes, p.interval).await;
        }
    }
    // A partition may have several groups due; a bounded number of passes keeps a round
    // short, and the next round goes on. Groups are planned as batches fill, so only one
    // batch's entries and bytes are held at a time.
    let mut active: Vec<&Held> = partitions.iter().collect();
    for _ in 0..8 {
        let mut again = Vec::new();
        let mut batch = Vec::new();
        let mut budget = SpanBudget::default();
        for p in active {
            let Some(group) = plan_group(ctx, p) else {
                continue;
            };
            let grows = group.as_deref().map_or(0, |g| budget.grown_by(g));
            if !batch.is_empty() && budget.bytes() + grows > sources::SOURCE_BYTES_MAX {
                merge_batch(ctx, std::mem::take(&mut batch), &mut again).await;
                budget = SpanBudget::default();
            }
            if let Some(g) = &group {
                budget.add(g);
            }
            batch.push((p, group));
        }
        merge_batch(ctx, batch, &mut again).await;
        if again.is_empty() {
            break;
        }
        active = again;
    }
}

/// The next group of runs of a partition to merge, located (`None` inside when an entry's
/// object is not live: the state is inconsistent, and the merge is refused).
fn plan_group(ctx: &JobContext, p: &Held) -> Option<Option<Vec<Located>>> {
    let settings = CompactionSettings {
        segment_bytes: p.segment_bytes,
        lag_ms: ctx.config.compaction_lag.as_millis() as i64,
        entries_max: ENTRIES_PER_SWAP_MAX,
    };
    ctx.metadata.read(|s| {
        let group = runs_to_compact(s.partition(&p.tp)?, s.objects(), s.now_ms(), &settings)?;
        Some(group.iter().map(|e| locate(s.objects(), e)).collect())
    })
}

/// Merges a batch of groups, their objects read once (`Sources::fetch`); the partitions that
/// swapped a segment in go to `again` (they may have more due).
async fn merge_batch<'a>(
    ctx: &JobContext,
    batch: Vec<(&'a Held, Option<Vec<Located>>)>,
    again: &mut Vec<&'a Held>,
) {
    if batch.is_empty() {
        return;
    }
    let entries: Vec<&Located> = batch
        .iter()
        .filter_map(|(_, group)| group.as_ref())
        .flatten()
        .collect();
    let read = Sources::fetch(ctx, &entries).await;
    for (p, group) in &batch {
        JobMetrics::add(&ctx.metrics.compaction_runs, 1);
        let outcome = match group {
            None => Err(CompactionError::UnknownObject),
            Some(group) => compactor::compact(ctx, &read, p.tp, group, p.interval).await,
        };
        match outcome {
            Ok(true) => again.push(p),
            Ok(false) => {}
            Err(e) => {
                JobMetrics::add(&ctx.metrics.compaction_failures, 1);
                tracing::warn!(error = %ErrorChain(&e), topic = %p.tp.topic_id, partition = p.tp.partition, "compaction failed; it is tried again next round");
            }
        }
    }
}

/// The partitions of the shards, with their topics' settings.
fn held_partitions(ctx: &JobContext, shards: &[u16]) -> Vec<Held> {
    ctx.metadata.read(|s| {
        s.topics()
            .flat_map(|t| {
                // A segment never outgrows `retention.bytes`: retention drops whole entries,
                // so a larger segment would hold more than the topic keeps.
                // Read as retention reads it (`Retention::of`), so the two never disagree.
                let retained = Retention::of(&t.configs)
                    .and_then(|r| u64::try_from(r.bytes).ok())
                    .filter(|b| *b > 0);
                let segment_bytes = topic_setting(t, "segment.bytes", ctx.config.segment_bytes)
                    .min(retained.unwrap_or(u64::MAX));
                let interval =
                    topic_setting(t, "index.interval.bytes", compactor::INDEX_INTERVAL_BYTES);
                let cleaning = CleanSettings::of(&t.configs);
                (0..t.partitions.len() as i32)
                    .filter(move |p| shards.contains(&shard_of(&t.id, *p)))
                    .map(move |p| Held {
                        tp: TopicPartition {
                            topic_id: t.id,
                            partition: p,
                        },
                        segment_bytes,
                        interval,
                        cleaning,
                    })
            })
            .collect()
    })
}

/// A cleaning pass over a compacted partition, when one is due (`plan::LogToClean::section`).
async fn clean_partition(
    ctx: &JobContext,
    tp: TopicPartition,
    settings: &CleanSettings,
    segment_bytes: u64,
    interval: u64,
) {
    let section = ctx.metadata.read(|s| {
        let log = log_to_clean(s, &tp, settings)?;
        log.section()
    });
    let Some(section) = section else { return };
    let m = &ctx.metrics;
    JobMetrics::add(&m.cleaning_passes, 1);
    let ratio = section.dirty_ratio;
    let started = ctx.clock.now();
    let outcome = cleaning::clean(ctx, tp, section, settings, segment_bytes, interval).await;
    let took = ctx.clock.now().saturating_duration_since(started);
    JobMetrics::add(&m.cleaning_micros, took.as_micros() as u64);
    match outcome {
        Ok(cleaned) => {
            JobMetrics::add(&m.cleaned_records_read, cleaned.records_read);
            JobMetrics::add(&m.cleaned_records_kept, cleaned.records_kept);
            JobMetrics::add(&m.cleaned_bytes_read, cleaned.bytes_read);
            JobMetrics::add(&m.cleaned_bytes_kept, cleaned.bytes_kept);
            JobMetrics::add(&m.cleaned_tombstones_kept, cleaned.tombstones_kept);
            tracing::debug!(
                topic = %tp.topic_id,
                partition = tp.partition,
                dirty_ratio = ratio,
                records_read = cleaned.records_read,
                records_kept = cleaned.records_kept,
                bytes_read = cleaned.bytes_read,
                bytes_kept = cleaned.bytes_kept,
                "cleaned a compacted partition"
            );
        }
        Err(e) => {
            JobMetrics::add(&m.cleaning_failures, 1);
            tracing::warn!(error = %ErrorChain(&e), topic = %tp.topic_id, partition = tp.partition, "cleaning failed; it is tried again next round");
        }
    }
}

/// Where the cleaning of a compacted partition stands, as its job sees it (`plan::LogToClean`,
/// a pass's entries at most); `None` for an unknown partition.
pub fn log_to_clean(
    s: &MetadataState,
    tp: &TopicPartition,
    settings: &CleanSettings,
) -> Option<LogToClean> {
    let stable = s.last_stable_offset(tp)?;
    let partition = s.partition(tp)?;
    Some(LogToClean::of(
        partition,
        s.objects(),
        stable,
        s.now_ms(),
        settings,
        ENTRIES_PER_SWAP_MAX,
    ))
}

/// A topic's own value of a size config, or the broker's.
fn topic_setting(topic: &crate::metadata::state::Topic, key: &str, default: u64) -> u64 {
    topic
        .configs
        .get(key)
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}
