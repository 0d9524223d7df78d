//! The APIs and versions floe serves: what ApiVersions advertises and the router accepts.

use crate::protocol::ApiKey;
use crate::protocol::api_versions::ApiRange;

const fn range(api_key: ApiKey, min: i16, max: i16) -> ApiRange {
    ApiRange { api_key, min, max }
}

/// The APIs and versions floe serves (never beyond what the handlers implement).
pub const SUPPORTED: &[ApiRange] = &[
    range(ApiKey::Produce, 3, 12),
    range(ApiKey::Fetch, 4, 18),
    range(ApiKey::ListOffsets, 1, 11),
    range(ApiKey::Metadata, 0, 12),
    range(ApiKey::OffsetCommit, 2, 9),
    range(ApiKey::OffsetFetch, 1, 9),
    range(ApiKey::FindCoordinator, 0, 4),
    range(ApiKey::JoinGroup, 0, 9),
    range(ApiKey::Heartbeat, 0, 4),
    range(ApiKey::LeaveGroup, 0, 5),
    range(ApiKey::SyncGroup, 0, 5),
    range(ApiKey::DescribeGroups, 0, 5),
    range(ApiKey::ListGroups, 0, 5),
    range(ApiKey::DeleteGroups, 0, 2),
    range(ApiKey::OffsetDelete, 0, 0),
    range(ApiKey::ApiVersions, 0, 4),
    range(ApiKey::CreateTopics, 2, 7),
    range(ApiKey::DeleteTopics, 1, 6),
    range(ApiKey::InitProducerId, 0, 5),
    range(ApiKey::DescribeConfigs, 1, 4),
    range(ApiKey::AlterConfigs, 0, 2),
    range(ApiKey::CreatePartitions, 0, 3),
    range(ApiKey::IncrementalAlterConfigs, 0, 1),
    range(ApiKey::DescribeCluster, 0, 1),
    range(ApiKey::OffsetForLeaderEpoch, 2, 4),
    range(ApiKey::DescribeLogDirs, 1, 4),
    range(ApiKey::DeleteRecords, 0, 2),
    range(ApiKey::DescribeProducers, 0, 0),
    range(ApiKey::DescribeTopicPartitions, 0, 0),
    range(ApiKey::ConsumerGroupHeartbeat, 0, 1),
    range(ApiKey::ConsumerGroupDescribe, 0, 1),
    range(ApiKey::AddPartitionsToTxn, 0, 5),
    range(ApiKey::AddOffsetsToTxn, 0, 4),
    range(ApiKey::EndTxn, 0, 5),
    range(ApiKey::TxnOffsetCommit, 0, 5),
    range(ApiKey::DescribeTransactions, 0, 0),
    range(ApiKey::ListTransactions, 0, 2),
    range(ApiKey::SaslHandshake, 0, 1),
    range(ApiKey::SaslAuthenticate, 0, 2),
    range(ApiKey::DescribeAcls, 1, 3),
    range(ApiKey::CreateAcls, 1, 3),
    range(ApiKey::DeleteAcls, 1, 3),
    range(ApiKey::DescribeUserScramCredentials, 0, 0),
    range(ApiKey::AlterUserScramCredentials, 0, 0),
];
