//! The kinds of client quota floe enforces, by Kafka's keys and names.

use super::{
    CONNECTION_CREATION_RATE, CONSUMER_BYTE_RATE, CONTROLLER_MUTATION_RATE, PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
};

/// The quotas floe enforces, each a rate per second of its own unit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum QuotaKind {
    /// Bytes of produce requests.
    Produce,
    /// Bytes of fetch responses.
    Fetch,
    /// Partitions created or deleted (CreateTopics, CreatePartitions, DeleteTopics).
    ControllerMutation,
    /// Connections opened from one ip.
    ConnectionCreation,
    /// The time requests keep the agent busy, as a percentage of one thread (Kafka's request
    /// handler time).
    Request,
}

impl QuotaKind {
    pub const ALL: [QuotaKind; 5] = [
        QuotaKind::Produce,
        QuotaKind::Fetch,
        QuotaKind::ControllerMutation,
        QuotaKind::ConnectionCreation,
        QuotaKind::Request,
    ];

    /// The quota key that bounds it.
    pub fn key(self) -> &'static str {
        match self {
            QuotaKind::Produce => PRODUCER_BYTE_RATE,
            QuotaKind::Fetch => CONSUMER_BYTE_RATE,
            QuotaKind::ControllerMutation => CONTROLLER_MUTATION_RATE,
            QuotaKind::ConnectionCreation => CONNECTION_CREATION_RATE,
            QuotaKind::Request => REQUEST_PERCENTAGE,
        }
    }

    /// Kafka's name of the quota type, as its metrics name it.
    pub fn name(self) -> &'static str {
        match self {
            QuotaKind::Produce => "produce",
            QuotaKind::Fetch => "fetch",
            QuotaKind::ControllerMutation => "controller_mutation",
            QuotaKind::ConnectionCreation => "connection_creation",
            QuotaKind::Request => "request",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}
