//! What the diskless peers and classic Kafka publish they cost, per GiB ingested: reference
//! lines for the sweep's plot. Each figure is derived from a published monthly or yearly total
//! (the division is ours), on the vendor's own workload.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Published {
    pub name: &'static str,
    pub per_gib: f64,
    pub setup: &'static str,
    pub source: &'static str,
}

pub const PUBLISHED: [Published; 5] = [
    Published {
        name: "Ursa",
        per_gib: 0.0028,
        setup: "5 GB/s for $50 per hour",
        source: "https://streamnative.io/blog/how-we-run-a-5-gb-s-kafka-workload-for-just-50-per-hour",
    },
    Published {
        name: "Bufstream (Spanner)",
        per_gib: 0.0039,
        setup: "< $1 M/month at 100 GiB/s in, 300 GiB/s out",
        source: "https://buf.build/blog/bufstream-on-spanner",
    },
    Published {
        name: "AutoMQ",
        per_gib: 0.0050,
        setup: "$12,899/month at 1 GiB/s in and out",
        source: "https://www.automq.com/docs/automq/benchmarks/automq-vs-apache-kafka-benchmarks-and-cost",
    },
    Published {
        name: "Inkless",
        per_gib: 0.0093,
        setup: "< $288 k/year at 1 GiB/s in, 3 GiB/s out",
        source: "https://aiven.io/blog/benchmarking-diskless-inkless-topics-part-1",
    },
    Published {
        name: "classic Kafka (published)",
        per_gib: 0.087,
        setup: "RF 3 over 3 zones: AutoMQ's $226,671/month at 1 GiB/s (Aiven's $3.32 M/year: $0.107)",
        source: "https://www.automq.com/docs/automq/benchmarks/automq-vs-apache-kafka-benchmarks-and-cost",
    },
];
