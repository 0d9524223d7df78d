//! One handler per Kafka API; each takes a decoded request and returns its response.

pub mod acls;
pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod api_versions;
pub mod configs;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_cluster;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_topic_partitions;
pub mod describe_transactions;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
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
pub mod scram_credentials;
pub mod sync_group;
pub mod txn_offset_commit;

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
    /// The bare IP, as ACL hosts name it (`host` without Kafka's leading slash).
    pub fn ip(&self) -> &str {
        self.host.trim_start_matches('/')
    }
}
