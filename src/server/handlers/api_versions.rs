//! ApiVersions (key 18): the APIs and versions registered (`handlers::REGISTRY`, as the broker advertises them), with KIP-511's
//! fallback, and the `transaction.version` feature: finalized at 2 (v3+), which makes Kafka 4
//! clients use transaction version 2 (KIP-890 part 2), only when the broker is configured so
//! (`--transaction-version 2`); at 1 no feature is finalized and clients use version 1.
//!
//! The supported range (0–2) is listed from v4 only: Kafka 3.3–3.8 clients send v3 and
//! refuse a supported range that starts at 0 (KAFKA-17011), as Kafka's brokers avoid.

use crate::protocol::ApiKey;
use crate::protocol::api_versions::ApiRange;
use crate::protocol::api_versions::api_versions_response;
use crate::protocol::messages::api_versions_response::{FinalizedFeatureKey, SupportedFeatureKey};
use crate::protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Authorized, Gate, Needs};

const TRANSACTION_VERSION: &str = "transaction.version";

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
    if version >= 4 {
        response.supported_features = vec![SupportedFeatureKey {
            name: TRANSACTION_VERSION.into(),
            min_version: 0,
            max_version: 2,
            ..Default::default()
        }];
    }
    if version >= 3 && transaction_version >= 2 {
        // Clients adopt finalized features only from a larger epoch than they saw: the level
        // itself serves (set by configuration, the same on every agent, constant while a
        // process runs).
        response.finalized_features_epoch = i64::from(transaction_version);
        response.finalized_features = vec![FinalizedFeatureKey {
            name: TRANSACTION_VERSION.into(),
            max_version_level: transaction_version,
            min_version_level: transaction_version,
            ..Default::default()
        }];
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
    fn the_feature_is_listed_where_each_version_can_carry_it() {
        let (v3, _) = handle(3, ADVERTISED, 1);
        assert!(v3.supported_features.is_empty() && v3.finalized_features.is_empty());
        let (v4, _) = handle(4, ADVERTISED, 1);
        assert_eq!(v4.supported_features.len(), 1);
        assert!(
            v4.finalized_features.is_empty(),
            "level 1 finalizes nothing"
        );
        let (v3, _) = handle(3, ADVERTISED, 2);
        assert_eq!(v3.finalized_features[0].max_version_level, 2);
        assert_eq!(v3.finalized_features_epoch, 2);
        assert!(v3.supported_features.is_empty());
    }
}
