//! Dollars per month at measured object-store rates, and the cross-zone bill of classic
//! replicated Kafka for the same ingest.
//!
//! Classic Kafka baseline: replication factor 3 across 3 zones, clients spread evenly. Two
//! thirds of produced bytes cross a zone to reach the leader, and both follower copies cross a
//! zone: (2/3 + 2) crossings per byte, each billed on both sides. At 1 GiB/s that is
//! 2,592,000 GiB/month × 8/3 × $0.02 = $138,240/month.

use super::prices::PriceProfile;
use super::units::{GIB, MONTH_SECONDS};
use serde::Serialize;

/// Measured object-store activity per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Rates {
    pub puts_per_second: f64,
    pub gets_per_second: f64,
    pub put_bytes_per_second: f64,
    pub get_bytes_per_second: f64,
    /// Produced (ingested) bytes per second; stored for the retention period.
    pub ingest_bytes_per_second: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MonthlyCost {
    pub put_requests: f64,
    pub get_requests: f64,
    pub transfer: f64,
    pub storage: f64,
    pub total: f64,
}

/// Dollars per month at `rates`, storing `retention_seconds` of ingest.
pub fn monthly_cost(profile: &PriceProfile, rates: &Rates, retention_seconds: f64) -> MonthlyCost {
    let put_requests = rates.puts_per_second * MONTH_SECONDS / 1000.0 * profile.put_per_1000;
    let get_requests = rates.gets_per_second * MONTH_SECONDS / 1000.0 * profile.get_per_1000;
    let transfer = (rates.put_bytes_per_second * profile.upload_per_gib
        + rates.get_bytes_per_second * profile.retrieval_per_gib)
        * MONTH_SECONDS
        / GIB;
    let stored_gib = rates.ingest_bytes_per_second * retention_seconds / GIB;
    let storage = stored_gib * profile.storage_per_gib_month;
    MonthlyCost {
        put_requests,
        get_requests,
        transfer,
        storage,
        total: put_requests + get_requests + transfer + storage,
    }
}

/// Classic Kafka's monthly cross-zone transfer bill for the same ingest (RF=3, 3 zones).
pub fn kafka_cross_zone_monthly(profile: &PriceProfile, ingest_bytes_per_second: f64) -> f64 {
    let crossings_per_byte = 2.0 / 3.0 + 2.0;
    ingest_bytes_per_second * MONTH_SECONDS / GIB
        * crossings_per_byte
        * 2.0
        * profile.inter_az_per_gib_each_way
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn one_gib_per_second_of_classic_kafka_costs_138240_a_month_in_cross_zone_traffic() {
        let cost = kafka_cross_zone_monthly(&PriceProfile::s3_standard(), GIB);
        assert!(close(cost, 138_240.0), "{cost}");
    }

    #[test]
    fn request_and_storage_costs_match_hand_computation() {
        // 4 PUTs/s (250 ms flush) for a month: 10,368,000 PUTs × $0.005/1000 = $51.84.
        // 100 GETs/s: 259,200,000 × $0.0004/1000 = $103.68.
        // 1 MiB/s for 7 days stored: 590.625 GiB × $0.023 = $13.584375.
        let rates = Rates {
            puts_per_second: 4.0,
            gets_per_second: 100.0,
            put_bytes_per_second: 1048576.0,
            get_bytes_per_second: 0.0,
            ingest_bytes_per_second: 1048576.0,
        };
        let cost = monthly_cost(&PriceProfile::s3_standard(), &rates, 7.0 * 24.0 * 3600.0);
        assert!(close(cost.put_requests, 51.84), "{cost:?}");
        assert!(close(cost.get_requests, 103.68), "{cost:?}");
        assert!(close(cost.storage, 13.584375), "{cost:?}");
        assert_eq!(cost.transfer, 0.0);
        assert!(close(cost.total, 51.84 + 103.68 + 13.584375));
        // S3 Express charges per GiB uploaded: 2,531.25 GiB/month × $0.0032 = $8.1.
        let express = monthly_cost(&PriceProfile::s3_express(), &rates, 0.0);
        assert!(close(express.transfer, 8.1), "{express:?}");
    }
}
