//! ApiVersions (key 18): the table in `server::supported`, with KIP-511's fallback.

use crate::protocol::api_versions::api_versions_response;
use crate::protocol::messages::ApiVersionsResponse;
use crate::server::supported::SUPPORTED;

pub fn handle(version: i16) -> (ApiVersionsResponse, i16) {
    api_versions_response(SUPPORTED, version)
}
