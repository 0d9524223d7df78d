//! ACL enforcement around the handlers, Kafka's way (KafkaApis): before a handler runs, the
//! parts of a request the client may not touch are taken out (or the whole request is
//! answered with the authorization error in its own shape); after it runs, the parts taken
//! out are put back into the response with their error, and what the client may not
//! describe is hidden from listings.
//!
//! | API | needs | denied |
//! | --- | --- | --- |
//! | Produce | TransactionalId WRITE (transactional), Topic WRITE | 53 on every partition / 29 per topic |
//! | Fetch, OffsetCommit (topics) | Topic READ | 29 per topic |
//! | ListOffsets | Topic DESCRIBE | 29 per topic |
//! | Metadata | Topic DESCRIBE (CREATE to auto-create) | hidden when all are listed, 29 when named |
//! | JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetDelete, ConsumerGroupHeartbeat | Group READ | 30 |
//! | OffsetFetch, DescribeGroups, FindCoordinator (group) | Group DESCRIBE | 30 (OffsetFetch from v8: per group) |
//! | OffsetFetch (topics) | Topic DESCRIBE | 29 per named partition; hidden when all are listed |
//! | DeleteGroups | Group DELETE | 30 per group |
//! | ListGroups | Cluster DESCRIBE, or Group DESCRIBE per group | groups hidden |
//! | CreateTopics | Cluster CREATE or Topic CREATE | 29 per topic |
//! | DeleteTopics | Topic DELETE | 29 per topic |
//! | DeleteRecords | Topic DELETE | 29 on every topic when any is denied |
//! | CreatePartitions | Topic ALTER | 29 on every topic when any is denied |
//! | InitProducerId | TransactionalId WRITE; without one Cluster IDEMPOTENT_WRITE or any Topic WRITE | 53 / 31 |
//! | AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit | TransactionalId WRITE | 53 |
//! | FindCoordinator (transaction) | TransactionalId DESCRIBE | 53 |
//! | DescribeConfigs / AlterConfigs, IncrementalAlterConfigs | DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic or cluster | 29 / 31 on every resource when any is denied |
//! | OffsetForLeaderEpoch, DescribeTopicPartitions | Topic DESCRIBE | 29 on every item when any is denied |
//! | DescribeProducers | Topic READ | 29 on every item when any is denied |
//! | ConsumerGroupDescribe | Group DESCRIBE | 30 on every group when any is denied |
//! | DescribeLogDirs, DescribeTransactions, ListTransactions | Cluster DESCRIBE | 31 / 53 (whole request) |
//!
//! The ACL APIs and the SCRAM credential APIs check Cluster ALTER / DESCRIBE themselves.
//! ApiVersions, SaslHandshake, SaslAuthenticate and DescribeCluster need nothing.
//!
//! `produce` and `check` (`check.rs`) take the denied parts out, `coarse.rs` answers the APIs
//! refused whole, `restore_produce` and `restore` (`restore.rs`) put the errors back.

use crate::protocol::ErrorCode;
use crate::protocol::messages::*;
use crate::security::acl::{Operation, ResourceType};
use crate::server::broker::Broker;
use crate::server::handlers::{Client, offset_fetch};
use uuid::Uuid;

mod check;
mod coarse;
mod restore;

pub use check::check;
pub use restore::restore;

const TOPIC: i16 = ErrorCode::TopicAuthorizationFailed as i16;
const GROUP: i16 = ErrorCode::GroupAuthorizationFailed as i16;
const CLUSTER: i16 = ErrorCode::ClusterAuthorizationFailed as i16;
const TXN: i16 = ErrorCode::TransactionalIdAuthorizationFailed as i16;

/// What was taken out of a request, to be put back into its response.
#[derive(Default)]
pub struct Denied {
    /// Topics (name, id, partitions) answered with `code`.
    topics: Vec<(String, Uuid, Vec<i32>)>,
    code: i16,
    /// Topic names answered with 29 (Metadata, CreateTopics, DeleteTopics, ...).
    names: Vec<String>,
    /// Topics asked for by id alone, answered with 29 under their id (their name is not
    /// the client's to learn).
    ids: Vec<Uuid>,
    /// Groups answered with 30 (DeleteGroups, DescribeGroups, OffsetFetch from v8).
    groups: Vec<String>,
    /// OffsetFetch: topics (group, name, id, partitions) answered with 29; the group is the
    /// request's own below v8.
    offset_topics: Vec<(String, String, Uuid, Vec<i32>)>,
    /// Metadata/ListGroups: hide what may not be described.
    filter: bool,
}

/// The outcome of the check before a handler runs.
pub enum Check {
    /// Run the handler on what is left; then `restore`.
    Run(Denied),
    /// Answer this instead of running the handler.
    Answer(ResponseBody),
}

fn topic_name(broker: &Broker, name: &str, id: &Uuid) -> String {
    if !name.is_empty() || id.is_nil() {
        return name.to_string();
    }
    broker
        .metadata
        .read(|s| s.topic_by_id(id).map(|t| t.name.clone()))
        .unwrap_or_default()
}

impl Broker {
    fn topic_allowed(&self, client: &Client<'_>, operation: Operation, name: &str) -> bool {
        self.allowed(client, operation, ResourceType::Topic, name)
    }

    fn group_allowed(&self, client: &Client<'_>, operation: Operation, group: &str) -> bool {
        self.allowed(client, operation, ResourceType::Group, group)
    }

    fn txn_allowed(&self, client: &Client<'_>, operation: Operation, id: &str) -> bool {
        self.allowed(client, operation, ResourceType::TransactionalId, id)
    }
    /// Whether `client` may write to some topic (InitProducerId without a transactional id,
    /// KIP-679: idempotence needs only a topic it may write).
    fn any_topic_writable(&self, client: &Client<'_>) -> bool {
        let names: Vec<String> = self
            .metadata
            .read(|s| s.topics().map(|t| t.name.clone()).collect());
        names
            .iter()
            .any(|name| self.topic_allowed(client, Operation::Write, name))
    }
}

/// The check of a Produce request (it is queued before the others are routed).
pub fn produce(broker: &Broker, client: &Client<'_>, request: &mut ProduceRequest) -> Denied {
    let mut denied = Denied::default();
    if !broker.authorizes() {
        return denied;
    }
    let transactional = request.transactional_id.clone();
    let txn_ok = transactional
        .as_deref()
        .is_none_or(|id| broker.txn_allowed(client, Operation::Write, id));
    denied.code = if txn_ok { TOPIC } else { TXN };
    request.topic_data.retain(|t| {
        let name = topic_name(broker, &t.name, &t.topic_id);
        let keep = txn_ok && broker.topic_allowed(client, Operation::Write, &name);
        if !keep {
            let partitions = t.partition_data.iter().map(|p| p.index).collect();
            denied.topics.push((t.name.clone(), t.topic_id, partitions));
        }
        keep
    });
    denied
}

/// Puts a Produce request's denied topics back into its response.
pub fn restore_produce(denied: Denied, response: &mut ProduceResponse) {
    for (name, topic_id, partitions) in denied.topics {
        response
            .responses
            .push(produce_response::TopicProduceResponse {
                name,
                topic_id,
                partition_responses: partitions
                    .into_iter()
                    .map(|index| produce_response::PartitionProduceResponse {
                        index,
                        error_code: denied.code,
                        base_offset: -1,
                        log_append_time_ms: -1,
                        log_start_offset: -1,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            });
    }
}
