//! ApiVersions (key 18): the APIs and versions registered (`handlers::REGISTRY`, as the broker
//! advertises them), with KIP-511's fallback, and Kafka's features (KIP-584), which
//! `Admin.describeFeatures` shows:
//! - `metadata.version` at 4.0-IV3, the Kafka release whose protocol floe serves;
//! - `group.version` 1: the consumer group protocol (KIP-848) is served;
//! - `transaction.version` at `--transaction-version`: at 2, Kafka 4 clients use transaction
//!   version 2 (KIP-890 part 2); at 1 they use version 1.
//!
//! Supported ranges that start at 0 are listed from v4 only: Kafka 3.3–3.8 clients send v3 and
//! refuse such a range (KAFKA-17011), as Kafka's brokers avoid.

use crate::protocol::ApiKey;
use crate::protocol::api_versions::ApiRange;
use crate::protocol::api_versions::api_versions_response;
use crate::protocol::messages::api_versions_response::{FinalizedFeatureKey, SupportedFeatureKey};
use crate::protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Authorized, Gate, Needs};

const TRANSACTION_VERSION: &str = "transaction.version";
const METADATA_VERSION: &str = "metadata.version";
const GROUP_VERSION: &str = "group.version";

/// Kafka 4.0's metadata versions: 3.3-IV3 (the first KRaft-only one) to 4.0-IV3.
const METADATA_VERSIONS: (i16, i16) = (7, 25);

pub struct ApiVersions;

impl Api for ApiVersions {
    type Request = ApiVersionsRequest;
    type Response = ApiVersionsResponse;
    const KEY: ApiKey = ApiKey::ApiVersions;
    const VERSIONS: (i16, i16) = (0, 4);
    const NEEDS: Needs =
        Needs::Nothing("every client must learn the versions before anything else (KIP-511)");

    fn coordinator(_: &ApiVersionsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut ApiVersionsRequest,
        _: i16,
    ) -> Authorized<ApiVersionsResponse> {
        Authorized::run()
    }

    /// The router answers ApiVersions itself before decoding, at any version (KIP-511: a
    /// client asks before it knows the versions served, and an unknown version gets the
    /// fallback); this serves the versions registered here, at which the answer's version is
    /// the request's.
    async fn handle(ctx: Ctx<'_>, _: ApiVersionsRequest) -> Reply<ApiVersionsResponse> {
        let broker = ctx.broker;
        Reply::Now(
            handle(
                ctx.version,
                &broker.advertised_apis,
                broker.config.transaction_version,
            )
            .0,
        )
    }
}

pub fn handle(
    version: i16,
    advertised: &[ApiRange],
    transaction_version: i16,
) -> (ApiVersionsResponse, i16) {
    let (mut response, version) = api_versions_response(advertised, version);
    if response.error_code != 0 {
        return (response, version);
    }
    // (name, supported range, finalized level).
    let features = [
        (METADATA_VERSION, METADATA_VERSIONS, METADATA_VERSIONS.1),
        (GROUP_VERSION, (0, 1), 1),
        (TRANSACTION_VERSION, (0, 2), transaction_version),
    ];
    if version >= 3 {
        response.supported_features = features
            .iter()
            .filter(|(_, (min, _), _)| version >= 4 || *min > 0)
            .map(
                |&(name, (min_version, max_version), _)| SupportedFeatureKey {
                    name: name.into(),
                    min_version,
                    max_version,
                    ..Default::default()
                },
            )
            .collect();
        // Kafka never lists a level of 0.
        response.finalized_features = features
            .iter()
            .filter(|(_, _, level)| *level > 0)
            .map(|&(name, _, level)| FinalizedFeatureKey {
                name: name.into(),
                max_version_level: level,
                min_version_level: level,
                ..Default::default()
            })
            .collect();
        // Clients adopt finalized features only from a larger epoch than they saw: the
        // transaction version serves (set by configuration, the same on every agent, constant
        // while a process runs), so moving it to 2 is seen.
        response.finalized_features_epoch = i64::from(transaction_version);
    }
    (response, version)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADVERTISED: &[ApiRange] = &[ApiRange {
        api_key: ApiKey::ApiVersions,
        min: 0,
        max: 4,
    }];

    #[test]
    fn features_are_listed_where_each_version_can_carry_them() {
        let names = |features: Vec<String>| features.join(",");
        let (v3, _) = handle(3, ADVERTISED, 1);
        let supported = v3
            .supported_features
            .iter()
            .map(|f| f.name.clone())
            .collect();
        assert_eq!(
            names(supported),
            "metadata.version",
            "ranges from 0 wait for v4"
        );
        let (v4, _) = handle(4, ADVERTISED, 1);
        let supported = v4
            .supported_features
            .iter()
            .map(|f| f.name.clone())
            .collect();
        assert_eq!(
            names(supported),
            "metadata.version,group.version,transaction.version"
        );
        let finalized = |r: &ApiVersionsResponse| -> Vec<(String, i16)> {
            let f = r.finalized_features.iter();
            f.map(|f| (f.name.clone(), f.max_version_level)).collect()
        };
        assert_eq!(
            finalized(&v4),
            [
                ("metadata.version".into(), 25),
                ("group.version".into(), 1),
                ("transaction.version".into(), 1)
            ]
        );
        let (v3, _) = handle(3, ADVERTISED, 2);
        assert_eq!(finalized(&v3)[2], ("transaction.version".into(), 2));
        assert_eq!(v3.finalized_features_epoch, 2);
        let (v2, _) = handle(2, ADVERTISED, 2);
        assert!(v2.supported_features.is_empty() && v2.finalized_features.is_empty());
    }
}
