//! AWS credentials, region and endpoint the way AWS users expect: the SDK's standard chain
//! (environment, the shared config and credentials files with profiles, SSO, credential
//! processes, web identity, ECS container and EC2 instance metadata) from `aws-config`,
//! handed to object_store as its credential provider.
//!
//! The region comes from `--s3-region`, then the environment, then the profile, then
//! us-east-1; unlike the SDK's own region chain it never asks instance metadata, so a start
//! away from EC2 does not wait on a link-local address that does not answer.

use crate::clock::Clock;
use aws_config::BehaviorVersion;
use aws_config::meta::region::RegionProviderChain;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use object_store::aws::AwsCredential;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use tokio::sync::Mutex;

/// Credentials are fetched again this long before they expire, or halfway through their
/// life when that is shorter.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(300);

/// The region used when nothing names one.
const DEFAULT_REGION: &str = "us-east-1";

/// What the chain resolved for an s3:// store.
pub struct AwsSettings {
    pub region: String,
    /// A profile's `endpoint_url` (or `AWS_ENDPOINT_URL`), for S3-compatible stores.
    pub endpoint_url: Option<String>,
    pub credentials: Arc<ChainCredentials>,
}

/// Resolves region, endpoint and the credential chain, with `profile` instead of
/// `AWS_PROFILE` / `default` when given.
pub async fn resolve(region: Option<&str>, profile: Option<&str>, clock: Clock) -> AwsSettings {
    use aws_config::environment::EnvironmentVariableRegionProvider;
    use aws_config::profile::ProfileFileRegionProvider;
    let mut profile_region = ProfileFileRegionProvider::builder();
    if let Some(profile) = profile {
        profile_region = profile_region.profile_name(profile);
    }
    let chain =
        RegionProviderChain::first_try(region.map(|r| aws_config::Region::new(r.to_string())))
            .or_else(EnvironmentVariableRegionProvider::new())
            .or_else(profile_region.build())
            .or_else(DEFAULT_REGION);
    let mut loader = aws_config::defaults(BehaviorVersion::latest()).region(chain);
    if let Some(profile) = profile {
        loader = loader.profile_name(profile);
    }
    let sdk = loader.load().await;
    AwsSettings {
        region: sdk
            .region()
            .map_or_else(|| DEFAULT_REGION.to_string(), ToString::to_string),
        endpoint_url: sdk.endpoint_url().map(str::to_string),
        credentials: Arc::new(ChainCredentials {
            provider: sdk.credentials_provider(),
            cached: Mutex::new(None),
            clock,
        }),
    }
}

/// object_store's credential provider over the SDK's chain, caching what the chain gives
/// until shortly before it expires (the chain itself fetches anew on every call).
pub struct ChainCredentials {
    provider: Option<SharedCredentialsProvider>,
    cached: Mutex<Option<Cached>>,
    clock: Clock,
}

impl std::fmt::Debug for ChainCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChainCredentials")
    }
}

/// Credentials from the chain: until when they are fresh, and when they expire (ms).
struct Cached {
    credential: Arc<AwsCredential>,
    refresh_at_ms: Option<i64>,
    expires_ms: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile in ~/.aws (--s3-profile), or run with an instance or task role"
    )]
    NoChain,
    #[error("the AWS credential chain found no credentials")]
    Chain(#[source] aws_credential_types::provider::error::CredentialsError),
}

impl ChainCredentials {
    /// Current credentials: the cached ones while fresh, else the chain's; when the chain
    /// fails, the cached ones until they actually expire (a moment without the instance
    /// metadata service or STS must not fail every request).
    pub async fn current(&self) -> Result<Arc<AwsCredential>, CredentialsError> {
        let mut cached = self.cached.lock().await;
        let now_ms = self.clock.now_ms();
        if let Some(c) = cached.as_ref()
            && c.refresh_at_ms.is_none_or(|at| now_ms < at)
        {
            return Ok(c.credential.clone());
        }
        let provider = self.provider.as_ref().ok_or(CredentialsError::NoChain)?;
        let fresh = match provider.provide_credentials().await {
            Ok(fresh) => fresh,
            Err(e) => {
                return match cached.as_ref() {
                    Some(c) if c.expires_ms.is_none_or(|at| now_ms < at) => {
                        tracing::warn!(error = %crate::telemetry::ErrorChain(&e), "cannot refresh AWS credentials; using the current ones until they expire");
                        Ok(c.credential.clone())
                    }
                    _ => Err(CredentialsError::Chain(e)),
                };
            }
        };
        let expires_ms = fresh.expiry().map(|at| {
            at.duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64)
        });
        let before = REFRESH_BEFORE_EXPIRY.as_millis() as i64;
        let refresh_at_ms = expires_ms.map(|at| (at - before).max(now_ms + (at - now_ms) / 2));
        let credential = Arc::new(AwsCredential {
            key_id: fresh.access_key_id().to_string(),
            secret_key: fresh.secret_access_key().to_string(),
            token: fresh.session_token().map(str::to_string),
        });
        *cached = Some(Cached {
            credential: credential.clone(),
            refresh_at_ms,
            expires_ms,
        });
        Ok(credential)
    }
}

#[async_trait::async_trait]
impl object_store::CredentialProvider for ChainCredentials {
    type Credential = AwsCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        self.current()
            .await
            .map_err(|e| object_store::Error::Generic {
                store: "S3",
                source: Box::new(e),
            })
    }
}
