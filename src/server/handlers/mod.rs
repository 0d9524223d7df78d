//! One file per Kafka API: its declarations (`api::Api`) and its handler, which takes a
//! decoded request and returns its response.

pub mod acls;
pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod alter_configs;
pub mod alter_user_scram_credentials;
pub mod api_versions;
pub mod configs;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_acls;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_topic_partitions;
pub mod describe_transactions;
pub mod describe_user_scram_credentials;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod list_transactions;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod sync_group;
pub mod txn_offset_commit;

use crate::server::api::Entry;

/// Every API floe serves, in the order ApiVersions lists them. An API's file declares the
/// rest (`api::Api`); this list is where it becomes advertised and routed.
pub const REGISTRY: &[Entry] = &[
    Entry::of::<produce::Produce>(),
    Entry::of::<fetch::Fetch>(),
    Entry::of::<list_offsets::ListOffsets>(),
    Entry::of::<metadata::Metadata>(),
    Entry::of::<offset_commit::OffsetCommit>(),
    Entry::of::<offset_fetch::OffsetFetch>(),
    Entry::of::<find_coordinator::FindCoordinator>(),
    Entry::of::<join_group::JoinGroup>(),
    Entry::of::<heartbeat::Heartbeat>(),
    Entry::of::<leave_group::LeaveGroup>(),
    Entry::of::<sync_group::SyncGroup>(),
    Entry::of::<describe_groups::DescribeGroups>(),
    Entry::of::<list_groups::ListGroups>(),
    Entry::of::<delete_groups::DeleteGroups>(),
    Entry::of::<offset_delete::OffsetDelete>(),
    Entry::of::<api_versions::ApiVersions>(),
    Entry::of::<create_topics::CreateTopics>(),
    Entry::of::<delete_topics::DeleteTopics>(),
    Entry::of::<init_producer_id::InitProducerId>(),
    Entry::of::<describe_configs::DescribeConfigs>(),
    Entry::of::<alter_configs::AlterConfigs>(),
    Entry::of::<create_partitions::CreatePartitions>(),
    Entry::of::<incremental_alter_configs::IncrementalAlterConfigs>(),
    Entry::of::<describe_cluster::DescribeCluster>(),
    Entry::of::<offset_for_leader_epoch::OffsetForLeaderEpoch>(),
    Entry::of::<describe_log_dirs::DescribeLogDirs>(),
    Entry::of::<delete_records::DeleteRecords>(),
    Entry::of::<describe_producers::DescribeProducers>(),
    Entry::of::<describe_topic_partitions::DescribeTopicPartitions>(),
    Entry::of::<consumer_group_heartbeat::ConsumerGroupHeartbeat>(),
    Entry::of::<consumer_group_describe::ConsumerGroupDescribe>(),
    Entry::of::<add_partitions_to_txn::AddPartitionsToTxn>(),
    Entry::of::<add_offsets_to_txn::AddOffsetsToTxn>(),
    Entry::of::<end_txn::EndTxn>(),
    Entry::of::<txn_offset_commit::TxnOffsetCommit>(),
    Entry::of::<describe_transactions::DescribeTransactions>(),
    Entry::of::<list_transactions::ListTransactions>(),
    Entry::of::<sasl_handshake::SaslHandshake>(),
    Entry::of::<sasl_authenticate::SaslAuthenticate>(),
    Entry::of::<describe_acls::DescribeAcls>(),
    Entry::of::<create_acls::CreateAcls>(),
    Entry::of::<delete_acls::DeleteAcls>(),
    Entry::of::<describe_user_scram_credentials::DescribeUserScramCredentials>(),
    Entry::of::<alter_user_scram_credentials::AlterUserScramCredentials>(),
];

/// Who sent a request: the client id from its header, its address as Kafka shows it
/// (`/127.0.0.1`), its principal (`User:alice`), the listener it came in on, and whether
/// another agent forwarded it (such a request is answered here alone, never passed on).
#[derive(Debug, Clone, Copy)]
pub struct Client<'a> {
    pub id: Option<&'a str>,
    pub host: &'a str,
    pub principal: &'a str,
    pub listener: &'a str,
    pub lane: u16,
    pub forwarded: bool,
}

impl Client<'_> {
    /// Who the client is, for a request sent on its behalf (forwarded to another agent).
    pub fn caller(&self) -> Caller {
        Caller {
            host: self.host.to_string(),
            principal: self.principal.to_string(),
            listener: self.listener.to_string(),
            lane: self.lane,
        }
    }
}

/// The principal of a client that did not authenticate (Kafka's `User:ANONYMOUS`).
pub const ANONYMOUS: &str = "User:ANONYMOUS";

/// Who a connection speaks for, as a request is routed: its address as Kafka shows it
/// (`/127.0.0.1`), its principal, the listener it came in on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub host: String,
    pub principal: String,
    pub listener: String,
    /// The lane of the agent the connection was opened for (`placement`; 0: the agent).
    pub lane: u16,
}

impl Caller {
    /// The caller as a request's client (without a client id).
    pub fn client(&self, origin: crate::server::router::Origin) -> Client<'_> {
        Client {
            id: None,
            host: &self.host,
            principal: &self.principal,
            listener: &self.listener,
            lane: self.lane,
            forwarded: origin == crate::server::router::Origin::Forwarded,
        }
    }

    /// The bare IP, as ACL hosts name it (`host` without Kafka's leading slash).
    pub fn ip(&self) -> &str {
        self.host.trim_start_matches('/')
    }
}
