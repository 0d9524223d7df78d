//! Classic Kafka for the same ingest and fan-out: brokers replicating over three zones (RF 3)
//! on block storage. The baseline a diskless deployment is compared with.
//!
//! - **Cross-zone**: two thirds of produced bytes reach a leader in another zone, both
//!   follower copies cross a zone, and consumers that are not rack-aware (KIP-392) read two
//!   thirds of their bytes from another zone; each crossing is billed on both sides. At
//!   1 GiB/s with rack-aware consumers: 2,592,000 GiB × 8/3 × $0.02 = $138,240/month.
//! - **Storage**: the retention, three times, on block storage (no headroom counted).
//! - **Brokers**: the ingest over the profile's per-vCPU figure, at least 3, in whole zones.

use super::deployment::per_gib;
use super::prices::PriceProfile;
use super::units::{GIB, MONTH_SECONDS};
use serde::Serialize;

pub const REPLICATION_FACTOR: f64 = 3.0;
const ZONES: u32 = 3;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ClassicBill {
    pub brokers: u32,
    pub compute: f64,
    pub storage: f64,
    pub cross_zone: f64,
    pub total: f64,
    pub per_gib: f64,
}

pub fn price(
    ingest_bytes_per_second: f64,
    fan_out: f64,
    retention_seconds: f64,
    rack_aware_consumers: bool,
    profile: &PriceProfile,
) -> ClassicBill {
    let t = ingest_bytes_per_second.max(0.0);
    let per_broker =
        (profile.kafka_ingest_bytes_per_second_per_vcpu * profile.agent_instance.vcpus).max(1.0);
    let brokers = ((t / per_broker).ceil().min(1e6) as u32)
        .max(ZONES)
        .div_ceil(ZONES)
        * ZONES;
    let compute = brokers as f64 * profile.agent_instance.monthly();
    let storage =
        t * retention_seconds * REPLICATION_FACTOR / GIB * profile.block_storage_per_gib_month;
    let consumer_crossings = if rack_aware_consumers {
        0.0
    } else {
        2.0 / 3.0 * fan_out.max(0.0)
    };
    let crossings = 2.0 / 3.0 + (REPLICATION_FACTOR - 1.0) + consumer_crossings;
    let cross_zone = t * MONTH_SECONDS / GIB * crossings * 2.0 * profile.inter_az_per_gib_each_way;
    let total = compute + storage + cross_zone;
    ClassicBill {
        brokers,
        compute,
        storage,
        cross_zone,
        total,
        per_gib: per_gib(total, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn one_gib_per_second_matches_hand_computation() {
        let bill = price(GIB, 1.0, 7.0 * 86400.0, true, &PriceProfile::s3_standard());
        assert!(close(bill.cross_zone, 138_240.0), "{bill:?}");
        // 1024 MiB/s over 42.8 MiB/s per 4-vCPU broker: 24 brokers × $117.504.
        assert_eq!(bill.brokers, 24);
        assert!(close(bill.compute, 24.0 * 117.504), "{bill:?}");
        // 604,800 GiB × 3 copies × $0.08.
        assert!(close(bill.storage, 145_152.0), "{bill:?}");
        assert!(
            close(bill.total, 138_240.0 + 145_152.0 + 2820.096),
            "{bill:?}"
        );
        // Consumers that are not rack-aware add 2/3 × 2,592,000 GiB × $0.02.
        let unaware = price(GIB, 1.0, 7.0 * 86400.0, false, &PriceProfile::s3_standard());
        assert!(
            close(unaware.cross_zone - bill.cross_zone, 34_560.0),
            "{unaware:?}"
        );
    }

    #[test]
    fn a_small_cluster_still_has_three_brokers() {
        let bill = price(1e6, 1.0, 0.0, true, &PriceProfile::s3_standard());
        assert_eq!(bill.brokers, 3);
    }
}
