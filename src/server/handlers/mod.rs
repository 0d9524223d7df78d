//! One file per Kafka API: its declarations (`api::Api`) and its handler, which takes a
//! decoded request and returns its response.

pub mod acls;
pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod alter_client_quotas;
pub mod alter_configs;
pub mod alter_share_group_offsets;
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
pub mod delete_share_group_offsets;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_client_quotas;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_quorum;
pub mod describe_share_group_offsets;
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
pub mod share;
pub mod share_acknowledge;
pub mod share_fetch;
pub mod share_group_describe;
pub mod share_group_heartbeat;
pub mod sync_group;
#[cfg(test)]
pub mod testing;
pub mod txn_offset_commit;

use crate::protocol::ApiKey;
use crate::protocol::api_versions::ApiRange;
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
    Entry::of::<describe_quorum::DescribeQuorum>(),
    Entry::of::<describe_topic_partitions::DescribeTopicPartitions>(),
    Entry::of::<consumer_group_heartbeat::ConsumerGroupHeartbeat>(),
    Entry::of::<consumer_group_describe::ConsumerGroupDescribe>(),
    Entry::of::<share_group_heartbeat::ShareGroupHeartbeat>(),
    Entry::of::<share_group_describe::ShareGroupDescribe>(),
    Entry::of::<share_fetch::ShareFetch>(),
    Entry::of::<share_acknowledge::ShareAcknowledge>(),
    Entry::of::<describe_share_group_offsets::DescribeShareGroupOffsets>(),
    Entry::of::<alter_share_group_offsets::AlterShareGroupOffsets>(),
    Entry::of::<delete_share_group_offsets::DeleteShareGroupOffsets>(),
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
    Entry::of::<describe_client_quotas::DescribeClientQuotas>(),
    Entry::of::<alter_client_quotas::AlterClientQuotas>(),
    Entry::of::<describe_user_scram_credentials::DescribeUserScramCredentials>(),
    Entry::of::<alter_user_scram_credentials::AlterUserScramCredentials>(),
];

/// The API `key` at `version`, if floe serves it.
pub fn find(key: ApiKey, version: i16) -> Option<&'static Entry> {
    REGISTRY
        .iter()
        .find(|entry| entry.key == key && entry.serves(version))
}

/// What ApiVersions advertises: every registered API, in the registry's order.
pub fn supported() -> Vec<ApiRange> {
    REGISTRY
        .iter()
        .map(|entry| ApiRange {
            api_key: entry.key,
            min: entry.versions.0,
            max: entry.versions.1,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::authorize::Needs;
    use std::collections::BTreeSet;

    fn registered() -> BTreeSet<String> {
        REGISTRY.iter().map(|e| format!("{:?}", e.key)).collect()
    }

    #[test]
    fn each_api_is_registered_once_within_kafkas_versions() {
        assert_eq!(
            registered().len(),
            REGISTRY.len(),
            "an API registered twice"
        );
        for entry in REGISTRY {
            let (min, max) = entry.key.valid_versions();
            let (from, to) = entry.versions;
            assert!(
                min <= from && from <= to && to <= max,
                "{:?} serves {from}..={to}, Kafka defines {min}..={max}",
                entry.key
            );
            if let Needs::Acls(acls) | Needs::InHandler(acls) = entry.needs {
                assert!(!acls.is_empty(), "{:?} declares no ACLs", entry.key);
            }
        }
    }

    /// An `impl Api` that is not in `REGISTRY` would be neither advertised nor served.
    #[test]
    fn every_api_in_handlers_is_registered() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/server/handlers");
        let mut implemented = BTreeSet::new();
        for file in std::fs::read_dir(dir).expect("handlers") {
            let text = std::fs::read_to_string(file.expect("file").path()).expect("read");
            for line in text.lines() {
                if let Some(rest) = line.trim().strip_prefix("impl Api for ") {
                    implemented.insert(rest.trim_end_matches(" {").to_string());
                }
            }
        }
        assert_eq!(implemented, registered());
    }

    /// The README's table of Kafka APIs lists every served API with its versions.
    #[test]
    fn the_readme_lists_every_api_with_its_versions() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        let table = readme
            .split("## Kafka APIs")
            .nth(1)
            .expect("a Kafka APIs section")
            .split("\n## ")
            .next()
            .expect("the section");
        let mut listed = BTreeSet::new();
        for row in table.lines().filter(|l| l.starts_with("| ")).skip(2) {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let names: Vec<&str> = cells[1].split(" / ").collect();
            let versions: Vec<&str> = cells[2].split(" / ").collect();
            for (i, name) in names.iter().enumerate() {
                let version = versions.get(i).or(versions.first()).expect("versions");
                listed.insert(format!("{name} {version}"));
            }
        }
        let served: BTreeSet<String> = REGISTRY
            .iter()
            .map(|e| match e.versions {
                (a, b) if a == b => format!("{:?} {a}", e.key),
                (a, b) => format!("{:?} {a}–{b}", e.key),
            })
            .collect();
        assert_eq!(listed, served);
    }
}
