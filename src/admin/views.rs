//! JSON views of the cluster, topics, groups (with lag) and cost.

use crate::cost::{PriceProfile, Rates, kafka_cross_zone_monthly, monthly_cost};
use crate::ids::TopicPartition;
use crate::jobs::log_to_clean;
use crate::jobs::plan::{CleanSettings, LogToClean};
use crate::server::broker::Broker;
use crate::store::chaos::Operation;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

pub fn cluster(broker: &Broker) -> Value {
    let (topics, partitions) = broker.metadata.read(|s| {
        (
            s.topics().count(),
            s.topics().map(|t| t.partitions.len()).sum::<usize>(),
        )
    });
    json!({
        "cluster_id": broker.cluster_id(),
        "version": env!("CARGO_PKG_VERSION"),
        "node_id": broker.node_id(),
        "brokers": broker.shown_brokers().iter().map(|b| json!({
            "node_id": b.id, "host": b.host, "port": b.port, "zone": b.zone,
        })).collect::<Vec<_>>(),
        "quorum": quorum(broker),
        "object_store": broker.store.description(),
        "topics": topics,
        "partitions": partitions,
        "uptime_seconds": broker.started.elapsed().as_secs_f64(),
    })
}

/// This node's view of the metadata quorum (from Raft's metrics).
pub fn quorum(broker: &Broker) -> Value {
    let raft = broker.metadata.quorum().raft();
    let m = raft.metrics().borrow().clone();
    let membership = m.membership_config.membership();
    json!({
        "state": format!("{:?}", m.state),
        "term": m.current_term,
        "leader": m.current_leader,
        "voters": membership.voter_ids().collect::<Vec<_>>(),
        "learners": membership.learner_ids().collect::<Vec<_>>(),
        "last_log_index": m.last_log_index,
        "last_applied_index": m.last_applied.map(|l| l.index),
        "snapshot_index": m.snapshot.map(|l| l.index),
        "purged_index": m.purged.map(|l| l.index),
    })
}

#[derive(Serialize)]
struct PartitionView {
    partition: usize,
    log_start_offset: i64,
    high_watermark: i64,
    index_entries: usize,
    /// Entries that are segments (the rest are runs in produce objects).
    segments: usize,
    bytes: u64,
    /// A compacted topic's partitions: where cleaning stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    cleaner: Option<CleanerView>,
}

/// Where a compacted partition's cleaning stands (`jobs::plan::LogToClean`): bytes in the
/// part a pass may clean now, clean (cleaned segments) and dirty, and past it.
#[derive(Serialize)]
struct CleanerView {
    dirty_ratio: f64,
    clean_bytes: u64,
    dirty_bytes: u64,
    uncleanable_bytes: u64,
    /// Whether a pass is due at the next round of the job that holds the partition.
    due: bool,
    /// When the newest cleaned segment was written (ms since the epoch), if any.
    last_cleaned_ms: Option<i64>,
    /// Cleaned segments that keep tombstones or transaction markers until their delete
    /// horizon, and the earliest horizon (ms since the epoch).
    segments_with_tombstones: usize,
    next_delete_horizon_ms: Option<i64>,
}

impl CleanerView {
    fn of(log: LogToClean) -> CleanerView {
        CleanerView {
            dirty_ratio: log.dirty_ratio,
            clean_bytes: log.clean_bytes,
            dirty_bytes: log.dirty_bytes,
            uncleanable_bytes: log.uncleanable_bytes,
            due: log.due(),
            last_cleaned_ms: log.last_cleaned_ms,
            segments_with_tombstones: log.segments_with_horizon,
            next_delete_horizon_ms: log.next_horizon_ms,
        }
    }
}

pub fn topics(broker: &Broker) -> Value {
    broker.metadata.read(|state| {
        let topics: Vec<Value> = state
            .topics()
            .map(|t| {
                let cleaning = CleanSettings::of(&t.configs);
                let partitions: Vec<PartitionView> = t
                    .partitions
                    .iter()
                    .enumerate()
                    .map(|(i, p)| PartitionView {
                        partition: i,
                        log_start_offset: p.log_start_offset.0,
                        high_watermark: p.high_watermark.0,
                        index_entries: p.index.len(),
                        segments: p
                            .index
                            .iter()
                            .filter(|r| {
                                state.objects().get(r.object).is_some_and(|o| o.is_segment())
                            })
                            .count(),
                        bytes: p.bytes,
                        cleaner: cleaning.as_ref().and_then(|settings| {
                            let tp = TopicPartition {
                                topic_id: t.id,
                                partition: i as i32,
                            };
                            log_to_clean(state, &tp, settings).map(CleanerView::of)
                        }),
                    })
                    .collect();
                json!({ "name": t.name, "id": t.id, "configs": t.configs, "partitions": partitions })
            })
            .collect();
        json!({ "topics": topics })
    })
}

/// Committed offsets per group and partition, and lag = high watermark − committed offset.
pub fn groups(broker: &Broker) -> Value {
    // Membership of the groups this agent coordinates (soft state, in memory).
    let live: Vec<Value> = broker
        .groups
        .list()
        .into_iter()
        .filter_map(|listed| {
            if let Some(view) = broker.groups.describe(&listed.id) {
                return Some(json!({
                    "group": listed.id,
                    "type": "classic",
                    "state": view.state.name(),
                    "generation": view.generation,
                    "protocol": view.protocol,
                    "members": view.members.iter().map(|m| json!({
                        "member_id": m.id,
                        "instance_id": m.instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                    })).collect::<Vec<_>>(),
                }));
            }
            let group = broker.groups.consumer_group(&listed.id)?;
            Some(json!({
                "group": listed.id,
                "type": "consumer",
                "state": group.state_name(),
                "epoch": group.epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignor": group.assignor.map(|a| a.name()),
                "members": group.members.values().map(|m| json!({
                    "member_id": m.id,
                    "instance_id": m.instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_epoch": m.epoch,
                    "state": m.state.name(),
                    "partitions": m.assigned.values().map(|p| p.len()).sum::<usize>(),
                })).collect::<Vec<_>>(),
            }))
        })
        .collect();
    broker.metadata.read(|state| {
        let groups: Vec<Value> = state
            .groups()
            .map(|group| {
                let offsets: Vec<Value> = state
                    .group_offsets(group)
                    .map(|((topic, partition), committed)| {
                        let high_watermark = state.high_watermark(topic, *partition);
                        let lag = high_watermark.map(|hw| committed.lag(hw));
                        json!({
                            "topic": topic,
                            "partition": partition,
                            "committed_offset": committed.offset,
                            "high_watermark": high_watermark,
                            "lag": lag,
                        })
                    })
                    .collect();
                let total_lag = state.group_lag(group);
                json!({ "group": group, "offsets": offsets, "total_lag": total_lag })
            })
            .collect();
        json!({ "groups": groups, "coordinated": live })
    })
}

/// The storage lifecycle: objects live and dead, job leases, and what the jobs did here.
pub fn storage(broker: &Broker) -> Value {
    use crate::jobs::metrics::JobMetrics;
    let j = &broker.job_metrics;
    let (live, dead, leases, entries) = broker.metadata.read(|s| {
        let leases: Vec<Value> = s
            .leases()
            .map(|(job, l)| json!({ "job": format!("{job:?}"), "holder": l.holder, "until_ms": l.until_ms }))
            .collect();
        let entries: usize = s
            .topics()
            .flat_map(|t| t.partitions.iter())
            .map(|p| p.index.len())
            .sum();
        (s.objects().live_count(), s.objects().dead_count(), leases, entries)
    });
    json!({
        "objects_live": live,
        "objects_dead": dead,
        "index_entries": entries,
        "leases": leases,
        "jobs_here": {
            "compaction_runs": JobMetrics::load(&j.compaction_runs),
            "segments_written": JobMetrics::load(&j.segments_written),
            "bytes_rewritten": JobMetrics::load(&j.bytes_rewritten),
            "entries_replaced": JobMetrics::load(&j.entries_replaced),
            "swaps_lost": JobMetrics::load(&j.swaps_lost),
            "objects_deleted": JobMetrics::load(&j.objects_deleted),
            "orphans_deleted": JobMetrics::load(&j.orphans_deleted),
            "retention_moves": JobMetrics::load(&j.retention_moves),
        },
    })
}

/// Object-store activity since start, and the month it projects to under a price profile.
pub fn cost(broker: &Broker, profile: &PriceProfile, retention_hours: f64) -> Value {
    let seconds = broker.started.elapsed().as_secs_f64().max(1e-3);
    let ops = broker.store.metrics().snapshot();
    let op = |o: Operation| ops.iter().find(|s| s.operation == o).cloned();
    let (puts, put_bytes) = op(Operation::Put).map_or((0, 0), |s| (s.requests, s.bytes));
    let (gets, get_bytes) = op(Operation::Get).map_or((0, 0), |s| (s.requests, s.bytes));
    let ingest = broker.metrics.produce_bytes.load(Ordering::Relaxed);
    let rates = Rates {
        puts_per_second: puts as f64 / seconds,
        gets_per_second: gets as f64 / seconds,
        put_bytes_per_second: put_bytes as f64 / seconds,
        get_bytes_per_second: get_bytes as f64 / seconds,
        ingest_bytes_per_second: ingest as f64 / seconds,
    };
    let monthly = monthly_cost(profile, &rates, retention_hours * 3600.0);
    // The background jobs' requests, priced apart (S3 bills LIST as a PUT-class request;
    // DELETE is free). What they store is the same data, already priced above.
    let jobs_ops = broker.jobs_store.metrics().snapshot();
    let jobs_op = |o: Operation| jobs_ops.iter().find(|s| s.operation == o).cloned();
    let count = |o: Operation| jobs_op(o).map_or((0, 0), |s| (s.requests, s.bytes));
    let ((jobs_puts, jobs_put_bytes), (jobs_lists, _)) =
        (count(Operation::Put), count(Operation::List));
    let (jobs_gets, jobs_get_bytes) = count(Operation::Get);
    let jobs_rates = Rates {
        puts_per_second: (jobs_puts + jobs_lists) as f64 / seconds,
        gets_per_second: jobs_gets as f64 / seconds,
        put_bytes_per_second: jobs_put_bytes as f64 / seconds,
        get_bytes_per_second: jobs_get_bytes as f64 / seconds,
        ingest_bytes_per_second: 0.0,
    };
    let jobs_monthly = monthly_cost(profile, &jobs_rates, 0.0);
    json!({
        "profile": profile,
        "since_seconds": seconds,
        "requests": ops.iter().map(|s| (s.operation.name(), s.requests)).collect::<std::collections::BTreeMap<_, _>>(),
        "bytes": { "put": put_bytes, "get": get_bytes, "produced": ingest },
        "rates": rates,
        "retention_hours": retention_hours,
        "projected_monthly_usd": monthly,
        "jobs_requests": jobs_ops.iter().map(|s| (s.operation.name(), s.requests)).collect::<std::collections::BTreeMap<_, _>>(),
        "jobs_projected_monthly_usd": jobs_monthly,
        "classic_kafka_cross_zone_monthly_usd": kafka_cross_zone_monthly(profile, rates.ingest_bytes_per_second),
    })
}
