//! The cost model: what a floe deployment costs per month, and classic Kafka's bill for the
//! same work.
//!
//! ```text
//! prices     versioned price profiles (object store, instances, block storage, zones)
//! rates      $/month at measured object-store rates (one experiment, as measured)
//! deployment a floe deployment at a target ingest: agents, quorum, requests, storage, zones
//! classic    classic Kafka (RF 3 over 3 zones) for the same ingest and fan-out
//! peers      the diskless peers' published $/GiB, as reference lines
//! frontier   the Pareto frontier of cost against latency
//! units      the month and the GiB every price is quoted in
//! ```
//!
//! Everything here is pure arithmetic over its arguments; the benchmark measures, this prices.

pub mod classic;
pub mod deployment;
pub mod frontier;
pub mod peers;
pub mod prices;
pub mod rates;
pub mod units;

pub use prices::{Instance, PriceError, PriceProfile};
pub use rates::{MonthlyCost, Rates, kafka_cross_zone_monthly, monthly_cost};
pub use units::{GIB, MONTH_SECONDS};
