//! Price profiles: what a cloud charges for object-store requests, transfer and storage, for
//! instances, block storage and cross-zone bytes, each versioned with its source. A JSON file
//! can override a profile (a file may leave out the instance, block-storage and Kafka fields,
//! which then keep the built-in values).
//!
//! Data volumes are counted in GiB (2^30 bytes), as AWS bills "GB".

use crate::store::latency_model_file::{self, LatencyModelFile};
use serde::{Deserialize, Serialize};

/// A machine the cloud rents by the hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub name: String,
    pub vcpus: f64,
    pub per_hour: f64,
}

impl Instance {
    /// AWS Graviton3, us-east-1 on demand: m7g.large is $0.0816/h (June 2026), and a family's
    /// sizes are priced in proportion to their vCPUs.
    pub fn m7g(size: &str, vcpus: f64) -> Instance {
        Instance {
            name: format!("m7g.{size}"),
            vcpus,
            per_hour: 0.0816 * vcpus / 2.0,
        }
    }

    pub fn monthly(&self) -> f64 {
        self.per_hour * super::units::MONTH_SECONDS / 3600.0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceProfile {
    pub name: String,
    /// Where the numbers come from, and when they were read.
    pub source: String,
    pub storage_per_gib_month: f64,
    pub put_per_1000: f64,
    pub get_per_1000: f64,
    /// Per GiB written (S3 Express charges uploads; S3 Standard does not).
    pub upload_per_gib: f64,
    /// Per GiB read.
    pub retrieval_per_gib: f64,
    /// Inter-zone transfer, per GiB, charged on each side.
    pub inter_az_per_gib_each_way: f64,
    /// The machine an agent runs on.
    #[serde(default = "default_agent_instance")]
    pub agent_instance: Instance,
    /// The machine a metadata-quorum voter runs on.
    #[serde(default = "default_quorum_instance")]
    pub quorum_instance: Instance,
    /// Block storage for classic Kafka's replicas (EBS gp3), per GiB-month.
    #[serde(default = "default_block_storage")]
    pub block_storage_per_gib_month: f64,
    /// What one vCPU of a classic Kafka broker ingests at RF 3, bytes per second.
    #[serde(default = "default_kafka_ingest_per_vcpu")]
    pub kafka_ingest_bytes_per_second_per_vcpu: f64,
}

fn default_agent_instance() -> Instance {
    Instance::m7g("xlarge", 4.0)
}

fn default_quorum_instance() -> Instance {
    Instance::m7g("large", 2.0)
}

/// EBS gp3, us-east-1: $0.08 per GB-month.
fn default_block_storage() -> f64 {
    0.08
}

/// 10.7 MiB/s per vCPU: the ingest per vCPU of the published 1 GiB/s Kafka-fork benchmarks on
/// m7g/m8g (AutoMQ, Inkless), the nearest published figure for Kafka's own brokers.
fn default_kafka_ingest_per_vcpu() -> f64 {
    10.7 * 1024.0 * 1024.0
}

impl PriceProfile {
    pub fn s3_standard() -> PriceProfile {
        PriceProfile {
            name: "s3-standard".into(),
            source: "AWS us-east-1: S3 Standard (2025), m7g on demand (June 2026), EBS gp3, $0.01/GB each way across zones".into(),
            storage_per_gib_month: 0.023,
            put_per_1000: 0.005,
            get_per_1000: 0.0004,
            upload_per_gib: 0.0,
            retrieval_per_gib: 0.0,
            inter_az_per_gib_each_way: 0.01,
            agent_instance: default_agent_instance(),
            quorum_instance: default_quorum_instance(),
            block_storage_per_gib_month: default_block_storage(),
            kafka_ingest_bytes_per_second_per_vcpu: default_kafka_ingest_per_vcpu(),
        }
    }

    pub fn s3_express() -> PriceProfile {
        PriceProfile {
            name: "s3-express".into(),
            source: "AWS us-east-1: S3 Express One Zone (after the April 2025 cut), m7g on demand (June 2026), EBS gp3, $0.01/GB each way across zones".into(),
            storage_per_gib_month: 0.11,
            put_per_1000: 0.00113,
            get_per_1000: 0.00003,
            upload_per_gib: 0.0032,
            retrieval_per_gib: 0.0006,
            ..Self::s3_standard()
        }
    }

    /// `auto` picks the profile named like the latency model (`s3-express` prices for the
    /// `s3-express` model), the profile a model file names, S3 Standard otherwise; any other
    /// value goes to `load`.
    pub fn resolve(name_or_path: &str, latency_model: &str) -> Result<PriceProfile, PriceError> {
        match (name_or_path, latency_model) {
            ("auto", model) if latency_model_file::names_a_file(model) => {
                match LatencyModelFile::read(model) {
                    Ok(file) => Self::load(&file.price_profile),
                    Err(_) => Ok(Self::s3_standard()), // the broker reports the unreadable file
                }
            }
            ("auto", "s3-express") => Ok(Self::s3_express()),
            ("auto", _) => Ok(Self::s3_standard()),
            (other, _) => Self::load(other),
        }
    }

    /// A built-in profile by name, or a JSON file with every field.
    pub fn load(name_or_path: &str) -> Result<PriceProfile, PriceError> {
        match name_or_path {
            "s3-standard" => Ok(Self::s3_standard()),
            "s3-express" => Ok(Self::s3_express()),
            path => {
                let text = std::fs::read_to_string(path).map_err(|cause| PriceError::Read {
                    path: path.to_string(),
                    cause,
                })?;
                serde_json::from_str(&text).map_err(|cause| PriceError::Parse {
                    path: path.to_string(),
                    cause,
                })
            }
        }
    }
}

/// Why a price profile could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    #[error("price profile '{path}': not s3-standard, s3-express or a readable file")]
    Read {
        path: String,
        #[source]
        cause: std::io::Error,
    },
    #[error("price profile '{path}' is not a valid profile")]
    Parse {
        path: String,
        #[source]
        cause: serde_json::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_load_by_name_or_file() {
        assert_eq!(
            PriceProfile::load("s3-express").unwrap().put_per_1000,
            0.00113
        );
        let path = std::env::temp_dir().join(format!(
            "floe-prices-{}.json",
            crate::random::Rng::from_entropy().uuid()
        ));
        let mut custom = PriceProfile::s3_standard();
        custom.name = "negotiated".into();
        custom.put_per_1000 = 0.004;
        std::fs::write(&path, serde_json::to_string(&custom).unwrap()).unwrap();
        assert_eq!(PriceProfile::load(path.to_str().unwrap()).unwrap(), custom);
        std::fs::remove_file(path).unwrap();
        assert!(PriceProfile::load("gold-plated").is_err());
        // A profile written before instances were priced still loads, with the built-in ones.
        let mut old: serde_json::Value = serde_json::to_value(&custom).unwrap();
        for field in [
            "agent_instance",
            "quorum_instance",
            "block_storage_per_gib_month",
            "kafka_ingest_bytes_per_second_per_vcpu",
        ] {
            old.as_object_mut().unwrap().remove(field);
        }
        let loaded: PriceProfile = serde_json::from_value(old).unwrap();
        assert_eq!(loaded, custom);
        assert_eq!(
            PriceProfile::resolve("auto", "s3-express").unwrap().name,
            "s3-express"
        );
        assert_eq!(
            PriceProfile::resolve("auto", "p50=1ms,p99=2ms")
                .unwrap()
                .name,
            "s3-standard"
        );
    }
}
