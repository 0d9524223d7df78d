//! Client quotas as Kafka defines them (KIP-13, KIP-124, KIP-546, KIP-599, KIP-612): which
//! quota entities and keys exist, how AlterClientQuotas entries are checked (`alter`), how
//! DescribeClientQuotas filters match entities (`filter`), which quota binds a client
//! (`resolve`), how usage is measured (`token_bucket`), metered per account (`meter`) and
//! totalled per entity for metrics (`usage_by_entity`). The quotas themselves live in the
//! replicated state (`metadata::state::client_quotas`).

pub mod alter;
pub mod filter;
pub mod kind;
pub mod meter;
pub mod resolve;
pub mod token_bucket;
pub mod usage_by_entity;

/// Kafka's quota keys: the byte rates and request share of users and client ids, and the
/// connection rate of ips.
pub const PRODUCER_BYTE_RATE: &str = "producer_byte_rate";
pub const CONSUMER_BYTE_RATE: &str = "consumer_byte_rate";
pub const REQUEST_PERCENTAGE: &str = "request_percentage";
pub const CONTROLLER_MUTATION_RATE: &str = "controller_mutation_rate";
pub const CONNECTION_CREATION_RATE: &str = "connection_creation_rate";
