//! ApiVersions negotiation, including KIP-511's answer to a version the broker does not know.
//!
//! A client sends its newest ApiVersions version first. If the broker does not support it, the
//! broker answers in version 0 format with UNSUPPORTED_VERSION and the ApiVersions range it
//! does support, so the client can retry with a version both understand (kafka-python and
//! franz-go depend on this).

use super::error_code::ErrorCode;
use super::messages::{ApiKey, ApiVersionsResponse, api_versions_response::ApiVersion};

/// One API the broker serves, and the versions of it that it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRange {
    pub api_key: ApiKey,
    pub min: i16,
    pub max: i16,
}

impl ApiRange {
    pub fn contains(&self, version: i16) -> bool {
        (self.min..=self.max).contains(&version)
    }
}

/// The response to an ApiVersions request of `request_version`, and the version to encode it at.
pub fn api_versions_response(
    supported: &[ApiRange],
    request_version: i16,
) -> (ApiVersionsResponse, i16) {
    let entry = |r: &ApiRange| ApiVersion {
        api_key: r.api_key as i16,
        min_version: r.min,
        max_version: r.max,
        ..Default::default()
    };
    let own = supported.iter().find(|r| r.api_key == ApiKey::ApiVersions);
    match own {
        Some(range) if range.contains(request_version) => (
            ApiVersionsResponse {
                error_code: ErrorCode::None.code(),
                api_keys: supported.iter().map(entry).collect(),
                ..Default::default()
            },
            request_version,
        ),
        _ => (
            ApiVersionsResponse {
                error_code: ErrorCode::UnsupportedVersion.code(),
                api_keys: own.iter().map(|r| entry(r)).collect(),
                ..Default::default()
            },
            0,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::wire::Message;
    use bytes::BytesMut;

    const SUPPORTED: &[ApiRange] = &[
        ApiRange {
            api_key: ApiKey::Produce,
            min: 3,
            max: 11,
        },
        ApiRange {
            api_key: ApiKey::ApiVersions,
            min: 0,
            max: 4,
        },
    ];

    #[test]
    fn a_supported_version_lists_every_api() {
        let (response, version) = api_versions_response(SUPPORTED, 3);
        assert_eq!(version, 3);
        assert_eq!(response.error_code, 0);
        assert_eq!(response.api_keys.len(), 2);
    }

    #[test]
    fn an_unknown_version_gets_a_v0_unsupported_version_answer() {
        let (response, version) = api_versions_response(SUPPORTED, 9);
        assert_eq!(version, 0);
        assert_eq!(response.error_code, 35);
        assert_eq!(response.api_keys.len(), 1);
        assert_eq!(response.api_keys[0].max_version, 4);
        let mut buf = BytesMut::new();
        response.encode(&mut buf, version).expect("v0 encodes");
        // error code, array of one (key, min, max): the layout a v0-only parser reads.
        assert_eq!(&buf[..], &[0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 4]);
    }
}
