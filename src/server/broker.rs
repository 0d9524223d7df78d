//! `Broker`: what every handler shares (config, metadata, produce pipeline, object store).

use crate::config::Config;
use crate::fetch::cache::ObjectCache;
use crate::metadata::state::TopicError;
use crate::metadata::{Command, MetadataStore, Outcome};
use crate::object::ObjectClient;
use crate::produce::ProducePipeline;
use crate::protocol::ErrorCode;
use crate::telemetry::BrokerMetrics;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Leader epoch reported and written into fetched batches; there are no leader elections.
pub const LEADER_EPOCH: i32 = 0;

pub struct Broker {
    pub config: Config,
    pub metadata: MetadataStore,
    pub pipeline: ProducePipeline,
    pub store: Arc<ObjectClient>,
    pub cache: Arc<ObjectCache>,
    pub cluster_id: String,
    /// Permits for request bytes in flight (`Config::request_bytes_in_flight_max`).
    pub request_budget: Arc<tokio::sync::Semaphore>,
    pub metrics: Arc<BrokerMetrics>,
    pub started: std::time::Instant,
}

impl Broker {
    /// This node's Kafka broker id (its quorum node id).
    pub fn node_id(&self) -> i32 {
        self.config.node_id()
    }

    pub fn advertised(&self) -> (String, i32) {
        let addr = if self.config.advertised_addr.is_empty() {
            &self.config.kafka_addr
        } else {
            &self.config.advertised_addr
        };
        match addr.rsplit_once(':') {
            Some((host, port)) => (
                host.trim_matches(['[', ']']).to_string(),
                port.parse().unwrap_or(9092),
            ),
            None => (addr.clone(), 9092),
        }
    }

    /// Creates a topic; `Ok` also when another request created it first.
    pub async fn create_topic(
        &self,
        name: &str,
        partitions: i32,
        configs: BTreeMap<String, String>,
    ) -> Result<(), ErrorCode> {
        validate_topic_name(name)?;
        let outcome = self
            .metadata
            .apply_one(Command::CreateTopic {
                name: name.to_string(),
                id: uuid::Uuid::new_v4(),
                partitions,
                configs,
            })
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "metadata write failed");
                ErrorCode::KafkaStorageError
            })?;
        match outcome {
            Outcome::Topic(Ok(())) => Ok(()),
            Outcome::Topic(Err(e)) => Err(topic_error_code(e)),
            _ => Err(ErrorCode::UnknownServerError),
        }
    }
}

pub fn topic_error_code(e: TopicError) -> ErrorCode {
    match e {
        TopicError::AlreadyExists => ErrorCode::TopicAlreadyExists,
        TopicError::NotFound => ErrorCode::UnknownTopicOrPartition,
        TopicError::InvalidPartitions => ErrorCode::InvalidPartitions,
    }
}

/// Kafka's topic name rules: 1–249 characters of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub fn validate_topic_name(name: &str) -> Result<(), ErrorCode> {
    let legal = !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
    if legal {
        Ok(())
    } else {
        Err(ErrorCode::InvalidTopicException)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn topic_names() {
        assert!(super::validate_topic_name("orders.v1_x-2").is_ok());
        for bad in ["", ".", "..", "a b", "ä", &"x".repeat(250)] {
            assert!(super::validate_topic_name(bad).is_err(), "{bad}");
        }
    }
}
