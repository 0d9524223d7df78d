//! A floe deployment at a target ingest, priced per month: agents sized from the measured CPU
//! per GiB, the metadata quorum, object-store requests from the PUT budget, compaction's
//! requests, storage for the retention, and cross-zone bytes for the zone layout.
//!
//! How each line follows from the deployment (T ingest, N agents over Z zones, I the flush
//! interval, S `object_bytes_max`):
//! - **PUTs/s = N/I + T/S**, the PUT budget spent in full: at a target rate data always waits,
//!   so every agent seals each interval, and objects fill towards S as the rate grows.
//! - **GETs**: an agent reads an object only for partitions it serves but did not write. With
//!   zone-aware clients each zone has its own agent per partition, so the other zones' agents
//!   read each object: (Z − 1) × N/Z GETs per object (an upper bound: every agent of a zone
//!   serves some partition of every object). Without zone awareness one agent serves a
//!   partition everywhere and reads its own objects from its tiers: no GET, but client bytes
//!   cross zones. More consumer groups read the same blocks from the tiers, so GETs do not
//!   grow with the fan-out.
//! - **Compaction** reads every produce object once and writes T / segment bytes PUTs.
//! - **Storage** holds the retention in segments and the compaction lag in produce objects.
//! - **Compute**: cores = T × measured marginal core-s/GiB, scaled for the fan-out; each agent
//!   offers its vCPUs × the target utilisation less what it spends idle (timers, leases,
//!   heartbeats); the agent count is at least one per zone and a multiple of the zones.

use super::prices::PriceProfile;
use super::units::{GIB, MONTH_SECONDS};
use serde::Serialize;

/// CPU a served GiB costs next to an ingested one: 0.47 against 1.33 core-s/GB on `memory://`
/// (`scripts/produce_bench.py`, README "Produce throughput").
pub const SERVE_CPU_SHARE: f64 = 0.35;

/// The deployment to price.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deployment {
    pub ingest_bytes_per_second: f64,
    /// Bytes read per byte written (each consumer group that reads everything adds 1).
    pub fan_out: f64,
    pub zones: u32,
    /// At least this many agents (rounded up to a multiple of the zones).
    pub agents_min: u32,
    /// Clients name their zone (`floe_az=` in `client.id`, or `client.rack`), so no client
    /// byte crosses a zone.
    pub zone_aware: bool,
    pub flush_interval_seconds: f64,
    pub object_bytes_max: f64,
    pub segment_bytes: f64,
    pub compaction_lag_seconds: f64,
    pub retention_seconds: f64,
    /// The CPU share an agent is sized for (0..1].
    pub target_utilisation: f64,
    pub quorum_voters: u32,
}

/// One month of a deployment, in dollars, with the quantities behind it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Bill {
    pub agents: u32,
    pub agent_cores: f64,
    pub puts_per_second: f64,
    pub gets_per_second: f64,
    /// The produce objects' mean size.
    pub object_bytes: f64,
    pub compute: f64,
    pub quorum: f64,
    pub put_requests: f64,
    pub get_requests: f64,
    pub compaction_requests: f64,
    pub transfer: f64,
    pub storage: f64,
    pub cross_zone: f64,
    pub total: f64,
    /// Dollars per GiB ingested.
    pub per_gib: f64,
}

impl Bill {
    /// The bill's parts in a fixed order, for tables and stacked bars.
    pub fn parts(&self) -> [(&'static str, f64); 9] {
        [
            ("agents", self.compute),
            ("quorum", self.quorum),
            ("PUTs", self.put_requests),
            ("GETs", self.get_requests),
            ("compaction", self.compaction_requests),
            ("transfer", self.transfer),
            ("storage", self.storage),
            ("cross-zone", self.cross_zone),
            ("total", self.total),
        ]
    }
}

/// What an agent's CPU was measured to cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AgentCpu {
    /// Core-seconds per GiB ingested beyond idle, while one consumer read everything once.
    pub seconds_per_gib: f64,
    /// Cores an agent spends with no load.
    pub idle_cores: f64,
}

impl AgentCpu {
    pub fn per_gib(seconds_per_gib: f64) -> AgentCpu {
        AgentCpu {
            seconds_per_gib,
            idle_cores: 0.0,
        }
    }
}

/// Cores the load needs across all agents (idle cost apart).
pub fn agent_cores(d: &Deployment, cpu_seconds_per_gib: f64) -> f64 {
    let gib_per_second = d.ingest_bytes_per_second / GIB;
    let fan_out = d.fan_out.max(0.0);
    // The measurement is ingest plus one read: split it, then add the fan-out's reads.
    gib_per_second * cpu_seconds_per_gib * (1.0 + SERVE_CPU_SHARE * fan_out)
        / (1.0 + SERVE_CPU_SHARE)
}

pub fn agents_needed(d: &Deployment, profile: &PriceProfile, cpu: AgentCpu, cores: f64) -> u32 {
    let zones = d.zones.max(1);
    let usable = profile.agent_instance.vcpus * d.target_utilisation.clamp(0.01, 1.0);
    // An agent idling at more than its usable share still carries a tenth of it.
    let per_agent = (usable - cpu.idle_cores.max(0.0))
        .max(usable / 10.0)
        .max(1e-9);
    let by_cpu = (cores / per_agent).ceil().min(1e6) as u32;
    let agents = d.agents_min.max(zones).max(by_cpu).max(1);
    agents.div_ceil(zones) * zones
}

pub fn price(d: &Deployment, cpu: AgentCpu, profile: &PriceProfile) -> Bill {
    let month_per_second = MONTH_SECONDS / 1000.0;
    let t = d.ingest_bytes_per_second.max(0.0);
    let zones = d.zones.max(1) as f64;
    let cores = agent_cores(d, cpu.seconds_per_gib);
    let agents = agents_needed(d, profile, cpu, cores);
    let n = agents as f64;

    let puts = n / d.flush_interval_seconds.max(1e-6) + t / d.object_bytes_max.max(1.0);
    let readers_per_object = if d.zone_aware && d.fan_out > 0.0 {
        (zones - 1.0) * n / zones
    } else {
        0.0
    };
    let gets = puts * readers_per_object;
    let compaction_puts = t / d.segment_bytes.max(1.0);
    let compaction_gets = puts;

    let put_requests = puts * month_per_second * profile.put_per_1000;
    let get_requests = gets * month_per_second * profile.get_per_1000;
    let compaction_requests = (compaction_puts * profile.put_per_1000
        + compaction_gets * profile.get_per_1000)
        * month_per_second;
    // Bytes written: produce objects, then segments; read: other zones' agents and compaction.
    let transfer = (2.0 * t * profile.upload_per_gib
        + (readers_per_object + 1.0) * t * profile.retrieval_per_gib)
        * MONTH_SECONDS
        / GIB;
    let storage =
        t * (d.retention_seconds + d.compaction_lag_seconds) / GIB * profile.storage_per_gib_month;
    let cross_zone = if d.zone_aware {
        0.0
    } else {
        // A client reaches an agent of another zone (Z − 1)/Z of the time; billed both sides.
        t * (zones - 1.0) / zones * (1.0 + d.fan_out.max(0.0)) * MONTH_SECONDS / GIB
            * 2.0
            * profile.inter_az_per_gib_each_way
    };
    let compute = n * profile.agent_instance.monthly();
    let quorum = d.quorum_voters as f64 * profile.quorum_instance.monthly();
    let total = compute
        + quorum
        + put_requests
        + get_requests
        + compaction_requests
        + transfer
        + storage
        + cross_zone;
    Bill {
        agents,
        agent_cores: cores,
        puts_per_second: puts,
        gets_per_second: gets,
        object_bytes: if puts > 0.0 { t / puts } else { 0.0 },
        compute,
        quorum,
        put_requests,
        get_requests,
        compaction_requests,
        transfer,
        storage,
        cross_zone,
        total,
        per_gib: per_gib(total, t),
    }
}

/// Dollars per GiB ingested over the month.
pub fn per_gib(monthly: f64, ingest_bytes_per_second: f64) -> f64 {
    let gib = ingest_bytes_per_second * MONTH_SECONDS / GIB;
    if gib > 0.0 { monthly / gib } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    pub(crate) fn one_gib_per_second(zone_aware: bool) -> Deployment {
        Deployment {
            ingest_bytes_per_second: GIB,
            fan_out: 1.0,
            zones: 3,
            agents_min: 3,
            zone_aware,
            flush_interval_seconds: 0.25,
            object_bytes_max: 8.0 * 1024.0 * 1024.0,
            segment_bytes: 64.0 * 1024.0 * 1024.0,
            compaction_lag_seconds: 600.0,
            retention_seconds: 7.0 * 86400.0,
            target_utilisation: 0.5,
            quorum_voters: 3,
        }
    }

    #[test]
    fn one_gib_per_second_zone_aware_matches_hand_computation() {
        // 2 core-s/GiB at fan-out 1: 2 cores, one 4-vCPU agent at 50 % → the 3 zones' minimum.
        let bill = price(
            &one_gib_per_second(true),
            AgentCpu::per_gib(2.0),
            &PriceProfile::s3_standard(),
        );
        assert_eq!(bill.agents, 3);
        assert!(close(bill.agent_cores, 2.0), "{bill:?}");
        // 3 agents / 0.25 s + 1024 MiB / 8 MiB = 12 + 128 PUTs/s: 140 × 2,592 × $0.005.
        assert!(close(bill.puts_per_second, 140.0), "{bill:?}");
        assert!(close(bill.put_requests, 1814.4), "{bill:?}");
        // Two other zones' agents read each object: 280 GETs/s × 2,592 × $0.0004.
        assert!(close(bill.gets_per_second, 280.0), "{bill:?}");
        assert!(close(bill.get_requests, 290.304), "{bill:?}");
        // 16 segment PUTs/s and 140 GETs/s: $207.36 + $145.152.
        assert!(close(bill.compaction_requests, 352.512), "{bill:?}");
        // 605,400 GiB held (7 days + 10 minutes) × $0.023.
        assert!(close(bill.storage, 13924.2), "{bill:?}");
        assert_eq!(bill.transfer, 0.0);
        assert_eq!(bill.cross_zone, 0.0);
        // 3 × m7g.xlarge ($0.1632/h × 720 h) and 3 × m7g.large ($0.0816/h × 720 h).
        assert!(close(bill.compute, 352.512), "{bill:?}");
        assert!(close(bill.quorum, 176.256), "{bill:?}");
        let total = 1814.4 + 290.304 + 352.512 + 13924.2 + 352.512 + 176.256;
        assert!(close(bill.total, total), "{bill:?}");
        assert!(close(bill.per_gib, total / 2_592_000.0), "{bill:?}");
        // Objects fill towards 8 MiB at this rate: 1 GiB / 140.
        assert!(close(bill.object_bytes, GIB / 140.0), "{bill:?}");
    }

    #[test]
    fn zone_unaware_clients_trade_gets_for_cross_zone_bytes() {
        let bill = price(
            &one_gib_per_second(false),
            AgentCpu::per_gib(2.0),
            &PriceProfile::s3_standard(),
        );
        assert_eq!(bill.gets_per_second, 0.0);
        // 2/3 of produced and of consumed bytes cross: 2,592,000 GiB × 4/3 × $0.02.
        assert!(close(bill.cross_zone, 69_120.0), "{bill:?}");
    }

    #[test]
    fn agents_follow_the_measured_cpu_and_round_to_whole_zones() {
        let mut d = one_gib_per_second(true);
        // 20 core-s/GiB → 20 cores → 10 agents at 2 usable vCPUs each → 12 over 3 zones.
        let bill = price(&d, AgentCpu::per_gib(20.0), &PriceProfile::s3_standard());
        assert_eq!(bill.agents, 12);
        // A fan-out of 3 serves two more GiB per ingested GiB, each at 0.35 of its CPU.
        // Agents idling at half a core each offer 1.5: 14 agents → 15.
        let idle = AgentCpu {
            seconds_per_gib: 20.0,
            idle_cores: 0.5,
        };
        assert_eq!(price(&d, idle, &PriceProfile::s3_standard()).agents, 15);
        d.fan_out = 3.0;
        assert!(close(agent_cores(&d, 20.0), 20.0 * 2.05 / 1.35));
    }

    #[test]
    fn puts_per_gib_fall_as_the_rate_grows_and_objects_fill() {
        let profile = PriceProfile::s3_standard();
        let mut d = one_gib_per_second(true);
        d.ingest_bytes_per_second = 4.0 * 1024.0 * 1024.0;
        let slow = price(&d, AgentCpu::per_gib(2.0), &profile);
        d.ingest_bytes_per_second = GIB;
        let fast = price(&d, AgentCpu::per_gib(2.0), &profile);
        let per_gib = |b: &Bill, t: f64| b.puts_per_second / (t / GIB);
        // 4 MiB/s: 12.5 PUTs/s = 3,200 PUTs/GiB; 1 GiB/s: 140 PUTs/GiB (8 MiB objects: 128).
        assert!(
            close(per_gib(&slow, 4.0 * 1024.0 * 1024.0), 3200.0),
            "{slow:?}"
        );
        assert!(close(per_gib(&fast, GIB), 140.0), "{fast:?}");
    }
}
