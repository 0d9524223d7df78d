//! `/metrics`: the broker's and the object store's metrics in Prometheus text format.

use crate::produce::batcher::{SealReason, Standing};
use crate::server::broker::Broker;
use crate::telemetry::prometheus::Exposition;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

pub fn render(broker: &Broker) -> String {
    let m = &broker.metrics;
    let produce = broker.pipeline.metrics();
    let mut e = Exposition::default();
    e.gauge(
        "floe_uptime_seconds",
        "Seconds since this broker started.",
        broker.started.elapsed().as_secs_f64(),
    );
    e.gauge(
        "floe_draining",
        "1 once this agent drains (SIGTERM or POST /v1/drain), else 0.",
        if broker.drain.is_draining() { 1.0 } else { 0.0 },
    );

    e.header(
        "floe_produce_request_latency_seconds",
        "histogram",
        "Produce requests, received to answered.",
    );
    e.histogram(
        "floe_produce_request_latency_seconds",
        &[],
        &m.produce_latency.snapshot(),
    );
    e.header(
        "floe_fetch_request_latency_seconds",
        "histogram",
        "Fetch requests, received to answered (long polls included).",
    );
    e.histogram(
        "floe_fetch_request_latency_seconds",
        &[],
        &m.fetch_latency.snapshot(),
    );
    e.header(
        "floe_commit_latency_seconds",
        "histogram",
        "Metadata commits of uploaded objects.",
    );
    e.histogram(
        "floe_commit_latency_seconds",
        &[],
        &produce.commit_latency.snapshot(),
    );
    e.header(
        "floe_object_size_bytes",
        "histogram",
        "Sizes of sealed objects.",
    );
    e.histogram(
        "floe_object_size_bytes",
        &[],
        &produce.object_size.snapshot(),
    );

    e.header(
        "floe_objects_sealed_total",
        "counter",
        "Objects sealed, by reason.",
    );
    for reason in SealReason::ALL {
        e.sample(
            "floe_objects_sealed_total",
            &[("reason", reason.name())],
            produce.sealed(reason) as f64,
        );
    }
    e.header(
        "floe_produce_batches_total",
        "counter",
        "Batches queued for an object, by their tenant's standing: heavy (over its produce quota, or sending far more than the others here) waits for two PUTs of the budget's credit.",
    );
    for standing in Standing::ALL {
        e.sample(
            "floe_produce_batches_total",
            &[("standing", standing.name())],
            produce.accepted(standing) as f64,
        );
    }
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64;
    e.counter(
        "floe_produce_bytes_total",
        "Record batch bytes accepted from producers.",
        load(&m.produce_bytes),
    );
    e.counter(
        "floe_produce_records_total",
        "Records accepted from producers.",
        load(&m.produce_records),
    );
    e.counter(
        "floe_fetch_bytes_total",
        "Record batch bytes sent to consumers.",
        load(&m.fetch_bytes),
    );
    e.counter(
        "floe_fetch_records_total",
        "Records sent to consumers.",
        load(&m.fetch_records),
    );
    e.gauge(
        "floe_fetches_waiting",
        "Fetches waiting in a long poll for a commit to one of their partitions.",
        m.fetches_waiting.load(Ordering::Relaxed) as f64,
    );
    e.gauge(
        "floe_connections",
        "Open client connections.",
        m.connections.load(Ordering::Relaxed) as f64,
    );
    e.gauge(
        "floe_request_bytes_in_flight",
        "Request budget held: frames whose size header was read, until they are answered.",
        broker.request_budget.held() as f64,
    );
    e.counter(
        "floe_connections_total",
        "Client connections accepted.",
        load(&m.connections_total),
    );
    e.counter(
        "floe_forwarded_requests_total",
        "Group requests forwarded to the coordinating agent behind a load balancer.",
        load(&m.forwarded_requests),
    );
    groups(&mut e, broker);
    e.counter(
        "floe_connections_closed_bad_input_total",
        "Connections closed for malformed, oversized or unsupported requests.",
        load(&m.closed_for_bad_input),
    );
    e.counter(
        "floe_connections_closed_idle_total",
        "Connections closed after the idle timeout without a request.",
        load(&m.closed_idle),
    );
    e.counter(
        "floe_connections_refused_total",
        "Connections closed at accept: too many from one address, or opened faster than its connection_creation_rate quota.",
        load(&m.refused_connections),
    );

    quotas(&mut e, broker);
    security(&mut e, broker);

    let ops = broker.store.metrics().snapshot();
    type Pick = fn(&crate::store::metrics::OperationSnapshot) -> u64;
    let counters: [(&str, &str, Pick); 3] = [
        (
            "floe_object_store_requests_total",
            "Object-store requests (every attempt), by operation.",
            |o| o.requests,
        ),
        (
            "floe_object_store_errors_total",
            "Object-store requests that failed, by operation.",
            |o| o.errors,
        ),
        (
            "floe_object_store_bytes_total",
            "Bytes sent (put) or received (get), by operation.",
            |o| o.bytes,
        ),
    ];
    for (name, help, pick) in counters {
        e.header(name, "counter", help);
        for op in &ops {
            e.sample(name, &[("op", op.operation.name())], pick(op) as f64);
        }
    }
    e.header(
        "floe_object_store_request_latency_seconds",
        "histogram",
        "Object-store request latency, by operation.",
    );
    for op in &ops {
        e.histogram(
            "floe_object_store_request_latency_seconds",
            &[("op", op.operation.name())],
            &op.latency,
        );
    }

    read_tiers(&mut e, broker);

    let (topics, partitions, producers, commits, now_ms) = broker.metadata.read(|s| {
        (
            s.topics().count(),
            s.partition_count(),
            s.producer_count(),
            s.remembered_commits(),
            s.now_ms(),
        )
    });
    e.gauge("floe_topics", "Topics.", topics as f64);
    e.gauge(
        "floe_partitions",
        "Partitions over all topics.",
        partitions as f64,
    );
    e.gauge(
        "floe_state_producer_ids",
        "Producer ids the state holds (idle ones expire after producer.id.expiration.ms).",
        producers as f64,
    );
    e.gauge(
        "floe_state_remembered_commits",
        "Object commits whose outcome the state keeps for retried commits.",
        commits as f64,
    );
    e.gauge(
        "floe_state_time_seconds",
        "The state's time: the leader's clock, from its last tick (0 before the first).",
        now_ms as f64 / 1000.0,
    );
    lifecycle(&mut e, broker);
    transactions(&mut e, broker);
    e.finish()
}

/// Transactions: open ones, ends through this agent, timeouts, and how far each partition
/// with an open transaction has its last stable offset behind its high watermark.
fn transactions(e: &mut Exposition, broker: &Broker) {
    let m = &broker.metrics;
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64;
    let (ids, open, timed_out, lags) = broker.metadata.read(|s| {
        let t = s.transactions();
        let lags: Vec<(String, i32, i64)> = t
            .unstable_partitions()
            .filter_map(|(tp, first)| {
                let topic = s.topic_by_id(&tp.topic_id)?;
                let hw = topic.partitions.get(tp.partition as usize)?.high_watermark;
                Some((topic.name.clone(), tp.partition, (hw - first).max(0)))
            })
            .collect();
        (t.len(), t.open_count(), t.timed_out_total(), lags)
    });
    e.gauge(
        "floe_transactional_ids",
        "Transactional ids the state holds (idle ones expire after transactional.id.expiration.ms).",
        ids as f64,
    );
    e.gauge("floe_transactions_open", "Open transactions.", open as f64);
    e.counter(
        "floe_transactions_committed_total",
        "Transactions committed through this agent.",
        load(&m.transactions_committed),
    );
    e.counter(
        "floe_transactions_aborted_total",
        "Transactions aborted through this agent (EndTxn).",
        load(&m.transactions_aborted),
    );
    e.counter(
        "floe_transaction_markers_total",
        "Markers written by transactions ended through this agent.",
        load(&m.transaction_markers),
    );
    e.counter(
        "floe_transactions_timed_out_total",
        "Transactions the coordinator aborted for their timeout, cluster-wide.",
        timed_out as f64,
    );
    e.header(
        "floe_partition_lso_lag_records",
        "gauge",
        "Records between a partition's last stable offset and its high watermark (partitions with open transactions).",
    );
    for (topic, partition, lag) in lags {
        let partition = partition.to_string();
        e.sample(
            "floe_partition_lso_lag_records",
            &[("topic", topic.as_str()), ("partition", partition.as_str())],
            lag as f64,
        );
    }
}

/// The read path's tiers: hits, misses, bytes and fills per tier, GETs by reason, coalesced
/// misses, damaged disk files, and how long woken fetches took to notice a commit.
fn read_tiers(e: &mut Exposition, broker: &Broker) {
    use crate::read_cache::metrics::{GetReason, TierCounters, TierMetrics};
    let m = broker.read_cache.metrics();
    let (memory, disk) = broker.read_cache.usage();
    let tiers = [("memory", &m.memory, Some(memory)), ("disk", &m.disk, disk)];
    e.header(
        "floe_read_tier_reads_total",
        "counter",
        "Block reads by tier and result.",
    );
    for (tier, c, _) in &tiers {
        for (result, n) in [("hit", &c.hits), ("miss", &c.misses)] {
            let labels = [("tier", *tier), ("result", result)];
            e.sample(
                "floe_read_tier_reads_total",
                &labels,
                TierMetrics::load(n) as f64,
            );
        }
    }
    type Field = fn(&TierCounters) -> &std::sync::atomic::AtomicU64;
    let families: [(&str, &str, Field); 3] = [
        (
            "floe_read_tier_hit_bytes_total",
            "Bytes served by each tier.",
            |c| &c.hit_bytes,
        ),
        (
            "floe_read_tier_fills_total",
            "Blocks put into each tier.",
            |c| &c.fills,
        ),
        (
            "floe_read_tier_fill_bytes_total",
            "Bytes put into each tier.",
            |c| &c.fill_bytes,
        ),
    ];
    for (name, help, field) in families {
        e.header(name, "counter", help);
        for (tier, c, _) in &tiers {
            e.sample(name, &[("tier", tier)], TierMetrics::load(field(c)) as f64);
        }
    }
    // Usage is (blocks, bytes); a tier that is off holds nothing.
    type Usage = fn((u64, u64)) -> u64;
    let gauges: [(&str, &str, Usage); 2] = [
        ("floe_read_tier_bytes", "Bytes each tier holds now.", |u| {
            u.1
        }),
        (
            "floe_read_tier_blocks",
            "Blocks each tier holds now.",
            |u| u.0,
        ),
    ];
    for (name, help, part) in gauges {
        e.header(name, "gauge", help);
        for (tier, _, usage) in &tiers {
            e.sample(name, &[("tier", tier)], usage.map_or(0, part) as f64);
        }
    }
    e.header(
        "floe_read_gets_total",
        "counter",
        "Object-store GETs sent by the read path, by reason.",
    );
    for reason in GetReason::ALL {
        e.sample(
            "floe_read_gets_total",
            &[("reason", reason.name())],
            m.gets(reason).0 as f64,
        );
    }
    e.header(
        "floe_read_get_bytes_total",
        "counter",
        "Bytes the read path's GETs returned, by reason.",
    );
    for reason in GetReason::ALL {
        e.sample(
            "floe_read_get_bytes_total",
            &[("reason", reason.name())],
            m.gets(reason).1 as f64,
        );
    }
    for (name, help, value) in [
        (
            "floe_read_coalesced_total",
            "Block misses that waited for another read's GET.",
            &m.coalesced,
        ),
        (
            "floe_read_disk_corrupt_total",
            "Hot-tier files that failed their checks and were discarded.",
            &m.disk_corrupt,
        ),
        (
            "floe_read_disk_skipped_total",
            "Hot-tier fills skipped while the disk was behind.",
            &m.disk_skipped,
        ),
        (
            "floe_read_disk_write_failures_total",
            "Hot-tier files that could not be written.",
            &m.disk_write_failures,
        ),
    ] {
        e.counter(name, help, TierMetrics::load(value) as f64);
    }
    e.header(
        "floe_fetch_wake_latency_seconds",
        "histogram",
        "From a commit to a long-polling fetch of one of its partitions waking.",
    );
    e.histogram(
        "floe_fetch_wake_latency_seconds",
        &[],
        &broker.metrics.fetch_wake_latency.snapshot(),
    );
}

/// The storage lifecycle: what the jobs did and cost, and how large the index is.
fn lifecycle(e: &mut Exposition, broker: &Broker) {
    use crate::jobs::metrics::JobMetrics;
    let j = &broker.job_metrics;
    let counters: [(&str, &str, &std::sync::atomic::AtomicU64); 19] = [
        (
            "floe_compaction_runs_total",
            "Compactions started.",
            &j.compaction_runs,
        ),
        (
            "floe_compaction_failures_total",
            "Compactions that failed (tried again later).",
            &j.compaction_failures,
        ),
        (
            "floe_compaction_segments_total",
            "Segments written and indexed.",
            &j.segments_written,
        ),
        (
            "floe_compaction_rewritten_bytes_total",
            "Bytes of batches rewritten into segments.",
            &j.bytes_rewritten,
        ),
        (
            "floe_compaction_replaced_entries_total",
            "Index entries replaced by segments.",
            &j.entries_replaced,
        ),
        (
            "floe_compaction_swaps_lost_total",
            "Segments the state refused: their runs changed meanwhile.",
            &j.swaps_lost,
        ),
        (
            "floe_cleaner_passes_total",
            "Cleaning passes over compacted partitions.",
            &j.cleaning_passes,
        ),
        (
            "floe_cleaner_failures_total",
            "Cleaning passes that failed (tried again later).",
            &j.cleaning_failures,
        ),
        (
            "floe_cleaner_read_records_total",
            "Records cleaning passes read (from each partition's log start).",
            &j.cleaned_records_read,
        ),
        (
            "floe_cleaner_kept_records_total",
            "Records cleaning passes kept.",
            &j.cleaned_records_kept,
        ),
        (
            "floe_cleaner_read_bytes_total",
            "Bytes of batches cleaning passes read.",
            &j.cleaned_bytes_read,
        ),
        (
            "floe_cleaner_kept_bytes_total",
            "Bytes of batches cleaning passes kept, as rewritten.",
            &j.cleaned_bytes_kept,
        ),
        (
            "floe_cleaner_kept_tombstones_total",
            "Tombstones cleaning passes kept (inside their delete.retention.ms).",
            &j.cleaned_tombstones_kept,
        ),
        (
            "floe_collection_runs_total",
            "Collector rounds (retention and dead objects, or the orphan sweep).",
            &j.collection_runs,
        ),
        (
            "floe_collection_failures_total",
            "Collector rounds that failed (tried again later).",
            &j.collection_failures,
        ),
        (
            "floe_retention_moves_total",
            "Partitions whose log start retention moved.",
            &j.retention_moves,
        ),
        (
            "floe_objects_deleted_total",
            "Dead objects deleted from the store.",
            &j.objects_deleted,
        ),
        (
            "floe_orphans_found_total",
            "Objects found in the store that no commit refers to.",
            &j.orphans_found,
        ),
        (
            "floe_orphans_deleted_total",
            "Orphaned objects deleted.",
            &j.orphans_deleted,
        ),
    ];
    for (name, help, counter) in counters {
        e.counter(name, help, JobMetrics::load(counter) as f64);
    }
    e.counter(
        "floe_cleaner_seconds_total",
        "Time cleaning passes took (their throughput: bytes read over this).",
        JobMetrics::load(&j.cleaning_micros) as f64 / 1e6,
    );
    cleaner(e, broker);
    let ops = broker.jobs_store.metrics().snapshot();
    type Pick = fn(&crate::store::metrics::OperationSnapshot) -> u64;
    let families: [(&str, &str, Pick); 3] = [
        (
            "floe_jobs_object_store_requests_total",
            "Object-store requests of the background jobs (every attempt), by operation.",
            |o| o.requests,
        ),
        (
            "floe_jobs_object_store_errors_total",
            "Object-store requests of the background jobs that failed, by operation.",
            |o| o.errors,
        ),
        (
            "floe_jobs_object_store_bytes_total",
            "Bytes the background jobs sent (put) or received (get), by operation.",
            |o| o.bytes,
        ),
    ];
    for (name, help, pick) in families {
        e.header(name, "counter", help);
        for op in &ops {
            e.sample(name, &[("op", op.operation.name())], pick(op) as f64);
        }
    }
    let (entries, entries_max, live, dead) = broker.metadata.read(|s| {
        let per_partition = s
            .topics()
            .flat_map(|t| t.partitions.iter().map(|p| p.index.len()));
        let (sum, max) = per_partition.fold((0, 0), |(sum, max), n| (sum + n, max.max(n)));
        (sum, max, s.objects().live_count(), s.objects().dead_count())
    });
    e.gauge(
        "floe_index_entries",
        "Index entries over all partitions.",
        entries as f64,
    );
    e.gauge(
        "floe_index_entries_partition_max",
        "Index entries of the partition with the most.",
        entries_max as f64,
    );
    e.gauge(
        "floe_index_bytes",
        "Memory the index entries take (their fixed size; keys are stored once per object).",
        (entries * std::mem::size_of::<crate::metadata::state::BatchRef>()) as f64,
    );
    e.gauge(
        "floe_objects_live",
        "Objects the index refers to.",
        live as f64,
    );
    e.gauge(
        "floe_objects_dead",
        "Unreferenced objects waiting for deletion.",
        dead as f64,
    );
    let (cached, cached_bytes) = broker.segment_indexes.usage();
    e.gauge(
        "floe_index_cache_segments",
        "Segment footers in the local index cache.",
        cached as f64,
    );
    e.gauge(
        "floe_index_cache_bytes",
        "Bytes of segment footers in the local index cache.",
        cached_bytes as f64,
    );
    let snapshot =
        std::fs::metadata(broker.config.data_dir.join("meta/raft/snapshot")).map_or(0, |m| m.len());
    e.gauge(
        "floe_snapshot_bytes",
        "Size of this node's last metadata snapshot.",
        snapshot as f64,
    );
}

/// Where the compacted partitions' cleaning stands, from the replicated state (every agent
/// shows the same): Kafka's max-dirty-percent, and what waits for a pass.
fn cleaner(e: &mut Exposition, broker: &Broker) {
    use crate::ids::TopicPartition;
    use crate::jobs::{log_to_clean, plan::CleanSettings};
    let logs = broker.metadata.read(|s| {
        s.topics()
            .filter_map(|t| Some((t, CleanSettings::of(&t.configs)?)))
            .flat_map(|(t, settings)| {
                (0..t.partitions.len() as i32).filter_map(move |partition| {
                    let tp = TopicPartition {
                        topic_id: t.id,
                        partition,
                    };
                    log_to_clean(s, &tp, &settings)
                })
            })
            .map(|log| {
                (
                    log.dirty_ratio,
                    log.dirty_bytes,
                    log.due(),
                    log.segments_with_horizon,
                )
            })
            .collect::<Vec<_>>()
    });
    let max_ratio = logs.iter().map(|l| l.0).fold(0.0, f64::max);
    e.gauge(
        "floe_cleaner_compacted_partitions",
        "Partitions of compacted topics.",
        logs.len() as f64,
    );
    e.gauge(
        "floe_cleaner_max_dirty_ratio",
        "The highest dirty share of what may be cleaned, over compacted partitions.",
        max_ratio,
    );
    e.gauge(
        "floe_cleaner_dirty_bytes",
        "Bytes no pass has cleaned yet that a pass may clean, over compacted partitions.",
        logs.iter().map(|l| l.1).sum::<u64>() as f64,
    );
    e.gauge(
        "floe_cleaner_partitions_due",
        "Compacted partitions with a cleaning pass due.",
        logs.iter().filter(|l| l.2).count() as f64,
    );
    e.gauge(
        "floe_cleaner_segments_with_tombstones",
        "Cleaned segments keeping tombstones or markers until their delete horizon.",
        logs.iter().map(|l| l.3).sum::<usize>() as f64,
    );
}

/// Consumer groups: the live groups this agent coordinates, and every group's lag (records
/// between its committed offsets and the high watermarks, from the replicated state).
fn groups(e: &mut Exposition, broker: &Broker) {
    // (type, state) → (groups, members)
    let mut live: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    for g in broker.groups.list() {
        let entry = live.entry((g.group_type, g.state)).or_default();
        entry.0 += 1;
        entry.1 += g.members;
    }
    type Pick = fn(&(usize, usize)) -> usize;
    let gauges: [(&str, &str, Pick); 2] = [
        (
            "floe_coordinated_groups",
            "Live consumer groups this agent coordinates, by protocol type and state.",
            |c| c.0,
        ),
        (
            "floe_coordinated_group_members",
            "Members of the groups this agent coordinates, by protocol type and state.",
            |c| c.1,
        ),
    ];
    for (name, help, pick) in gauges {
        e.header(name, "gauge", help);
        for ((kind, state), counts) in &live {
            e.sample(
                name,
                &[("type", kind), ("state", state)],
                pick(counts) as f64,
            );
        }
    }
    e.header(
        "floe_group_lag_records",
        "gauge",
        "Records between a group's committed offsets and the high watermarks.",
    );
    broker.metadata.read(|state| {
        for group in state.groups() {
            let lag = state.group_lag(group) as f64;
            e.sample("floe_group_lag_records", &[("group", group)], lag);
        }
    });
}

fn security(e: &mut Exposition, broker: &Broker) {
    use crate::security::metrics::MECHANISMS;
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64;
    let m = &broker.metrics.security;
    e.counter(
        "floe_admin_refused_total",
        "Admin HTTP calls refused: no or a wrong bearer token.",
        load(&m.admin_refused),
    );
    e.counter(
        "floe_internal_refused_total",
        "Requests on the internal listener refused: not signed with the cluster secret, stale, replayed or from another cluster.",
        broker.metadata.quorum().refused_total() as f64,
    );
    e.header(
        "floe_sasl_authentications_total",
        "counter",
        "SASL authentications, by mechanism and result.",
    );
    for (i, mechanism) in MECHANISMS.iter().enumerate() {
        for (result, counters) in [("success", &m.sasl_succeeded), ("failure", &m.sasl_failed)] {
            e.sample(
                "floe_sasl_authentications_total",
                &[("mechanism", mechanism), ("result", result)],
                load(&counters[i]),
            );
        }
    }
    e.counter(
        "floe_sasl_sessions_expired_total",
        "Connections closed because their SASL session expired without re-authentication.",
        load(&m.sessions_expired),
    );
    e.counter(
        "floe_tls_handshakes_failed_total",
        "TLS handshakes that failed.",
        load(&m.tls_handshakes_failed),
    );
    e.counter(
        "floe_authorization_denied_total",
        "Operations the ACL authorizer denied.",
        load(&m.authorization_denied),
    );
}

/// Client quotas on this agent, by quota type, and by quota type and the entity that set the
/// quota: bounded label sets (per-account usage would grow with the clients; the entities
/// are at most `usage_by_entity::ENTITIES_MAX`).
fn quotas(e: &mut Exposition, broker: &Broker) {
    use crate::quotas::meter::QuotaKind;
    let meter = &broker.quota_meter;
    type Pick = fn(&crate::quotas::meter::KindTotals) -> u64;
    let counters: [(&str, &str, Pick); 2] = [
        (
            "floe_quota_throttled_requests_total",
            "Requests answered with a throttle time (the client over its quota), by quota.",
            |t| t.throttled.load(Ordering::Relaxed),
        ),
        (
            "floe_quota_throttle_time_ms_total",
            "Throttle times answered, summed in milliseconds, by quota.",
            |t| t.throttle_ms.load(Ordering::Relaxed),
        ),
    ];
    for (name, help, pick) in counters {
        e.header(name, "counter", help);
        for kind in QuotaKind::ALL {
            e.sample(
                name,
                &[("quota", kind.name())],
                pick(meter.totals(kind)) as f64,
            );
        }
    }
    let series = meter.by_entity.series();
    type PickUsage = fn(&crate::quotas::usage_by_entity::EntityUsage) -> f64;
    let by_entity: [(&str, &str, PickUsage); 2] = [
        (
            "floe_quota_entity_used_total",
            "What the clients a quota entity binds used through this agent, by quota and entity, in the quota's unit (bytes; partitions; connections; percent of a thread times seconds); at most 1,000 series, the rest as entity=\"other\".",
            |u| u.used,
        ),
        (
            "floe_quota_entity_throttle_time_ms_total",
            "Throttle times answered to the clients a quota entity binds, summed in milliseconds, by quota and entity.",
            |u| u.throttle_ms as f64,
        ),
    ];
    for (name, help, pick) in by_entity {
        e.header(name, "counter", help);
        for (kind, entity, usage) in &series {
            e.sample(
                name,
                &[("quota", kind.name()), ("entity", entity)],
                pick(usage),
            );
        }
    }
    e.gauge(
        "floe_quota_accounts",
        "Accounts (users, client ids) and ips whose usage this agent meters against a quota.",
        meter.accounts() as f64,
    );
    e.counter(
        "floe_quota_unmetered_total",
        "Accounts left unmetered because the most this agent meters at once were metered.",
        meter.unmetered.load(Ordering::Relaxed) as f64,
    );
}
