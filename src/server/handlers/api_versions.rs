//! ApiVersions (key 18): the table in `server::supported`, with KIP-511's fallback, and the
//! `transaction.version` feature (v3+): supported up to 2 (KIP-890 part 2); finalized at 2,
//! which makes Kafka 4 clients use transaction version 2, only when the broker is configured
//! so (`--transaction-version 2`).

use crate::protocol::api_versions::api_versions_response;
use crate::protocol::messages::ApiVersionsResponse;
use crate::protocol::messages::api_versions_response::{FinalizedFeatureKey, SupportedFeatureKey};
use crate::server::supported::SUPPORTED;

const TRANSACTION_VERSION: &str = "transaction.version";

pub fn handle(version: i16, transaction_version: i16) -> (ApiVersionsResponse, i16) {
    let (mut response, version) = api_versions_response(SUPPORTED, version);
    if response.error_code == 0 && version >= 3 {
        response.supported_features = vec![SupportedFeatureKey {
            name: TRANSACTION_VERSION.into(),
            min_version: 0,
            max_version: 2,
            ..Default::default()
        }];
        // The level is set by configuration, the same on every agent; it never changes while
        // a process runs, so its epoch is constant.
        response.finalized_features_epoch = 0;
        response.finalized_features = vec![FinalizedFeatureKey {
            name: TRANSACTION_VERSION.into(),
            max_version_level: transaction_version,
            min_version_level: transaction_version,
            ..Default::default()
        }];
    }
    (response, version)
}
