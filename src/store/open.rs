//! Opening the configured object store: local filesystem, memory, S3 (and S3-compatible
//! stores such as MinIO, LocalStack, SeaweedFS), GCS and Azure, all through `object_store`.
//!
//! Retries are floe's (`ObjectClient`), so `object_store`'s own retries are switched off to
//! keep one bounded policy. Start-up probes the store and names the endpoint, bucket and the
//! store's error when it cannot be used.

use super::chaos::{FaultPlan, LatencyModel};
use super::client::{Chaos, ObjectClient, ObjectStoreError};
use super::retry::RetryPolicy;
use crate::clock::Clock;
use crate::random::Rng;
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::prefix::PrefixStore;
use object_store::{ClientOptions, ObjectStore, RetryConfig};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Default)]
pub struct ObjectStoreConfig {
    /// `""` (the data directory), `file:///dir`, `memory://`, `s3://bucket[/prefix]`,
    /// `gs://bucket[/prefix]`, `az://container[/prefix]`.
    pub url: String,
    pub s3_endpoint: Option<String>,
    pub s3_region: Option<String>,
    /// The shared config/credentials files' profile to use instead of `AWS_PROFILE`/`default`.
    pub s3_profile: Option<String>,
    /// Path-style requests (`endpoint/bucket/key`), needed by MinIO, LocalStack, SeaweedFS.
    pub s3_path_style: bool,
    pub s3_allow_http: bool,
    /// Create a missing bucket at start (local S3-compatible stores).
    pub create_bucket: bool,
    pub latency: Option<LatencyModel>,
    pub faults: Option<FaultPlan>,
    pub retry: RetryPolicy,
    /// Seed for injected latency, faults and retry jitter (experiments repeat exactly).
    pub chaos_seed: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("object store '{url}': {reason}")]
    Invalid { url: String, reason: String },
    #[error("cannot create bucket '{bucket}' at {endpoint}: {reason}")]
    CreateBucket {
        bucket: String,
        endpoint: String,
        reason: String,
    },
    #[error("the object store failed its start-up probe")]
    Probe(#[source] Box<ObjectStoreError>),
}

impl ObjectStoreConfig {
    /// True for stores billed per request over a network (they get a longer default flush).
    pub fn is_remote(&self) -> bool {
        ["s3://", "gs://", "az://"]
            .iter()
            .any(|s| self.url.starts_with(s))
    }
}

/// A directory with something in it: packs already written, or a data directory from before
/// packs, with a file per object.
fn has_files(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
}

/// Splits `scheme://bucket/prefix` into bucket and prefix.
fn bucket_and_prefix(rest: &str) -> (String, String) {
    match rest.split_once('/') {
        Some((bucket, prefix)) => (bucket.to_string(), prefix.trim_matches('/').to_string()),
        None => (rest.to_string(), String::new()),
    }
}

fn with_prefix(store: Arc<dyn ObjectStore>, prefix: &str) -> Arc<dyn ObjectStore> {
    if prefix.is_empty() {
        store
    } else {
        Arc::new(PrefixStore::new(store, prefix))
    }
}

/// Opens, prepares (bucket creation) and probes the store.
pub async fn open(
    config: &ObjectStoreConfig,
    data_dir: &Path,
    clock: Clock,
    rng: Rng,
) -> Result<ObjectClient, OpenError> {
    let url = config.url.as_str();
    let invalid = |reason: String| OpenError::Invalid {
        url: url.to_string(),
        reason,
    };
    // object_store's own retries are off: `ObjectClient` retries every request itself.
    let no_retries = RetryConfig {
        max_retries: 0,
        ..Default::default()
    };
    let (store, description): (Arc<dyn ObjectStore>, String) = if url == "memory://" {
        (
            Arc::new(object_store::memory::InMemory::new()),
            url.to_string(),
        )
    } else if url.is_empty()
        && (has_files(&data_dir.join("packs")) || !has_files(&data_dir.join("objects")))
    {
        // The embedded default packs objects into a few files (`pack`). A data directory
        // written before packs, with a file per object, keeps being read that way (below).
        let dir = data_dir.join("packs");
        let store = crate::pack::PackStore::open(dir.clone(), clock.clone())
            .map_err(|e| invalid(e.to_string()))?;
        (Arc::new(store), format!("packs in {}", dir.display()))
    } else if url.is_empty() || url.starts_with("file://") {
        let dir = match url.strip_prefix("file://") {
            Some(path) if path.starts_with('/') => std::path::PathBuf::from(path),
            Some(_) => {
                return Err(invalid(
                    "file:// needs an absolute path, e.g. file:///var/lib/floe".into(),
                ));
            }
            None => data_dir.join("objects"),
        };
        std::fs::create_dir_all(&dir).map_err(|e| invalid(format!("{}: {e}", dir.display())))?;
        // fsync objects (and their directories) before a PUT returns: a producer is answered
        // only once its object is durable.
        let store = object_store::local::LocalFileSystem::new_with_prefix(&dir)
            .map_err(|e| invalid(e.to_string()))?
            .with_fsync(true);
        (Arc::new(store), format!("file://{}", dir.display()))
    } else if let Some(rest) = url.strip_prefix("s3://") {
        let (bucket, prefix) = bucket_and_prefix(rest);
        if bucket.is_empty() {
            return Err(invalid("s3:// needs a bucket name".into()));
        }
        // The AWS chain: region, a profile's endpoint, credentials (`aws_credentials`).
        let aws = super::aws_credentials::resolve(
            config.s3_region.as_deref(),
            config.s3_profile.as_deref(),
            clock.clone(),
        )
        .await;
        let region = aws.region.clone();
        let endpoint = config.s3_endpoint.clone().or(aws.endpoint_url.clone());
        // S3 Express One Zone: a directory bucket (`name--azid--x-s3`) is reached through its
        // zonal endpoint with session credentials, which object_store creates and renews.
        let express = bucket.ends_with("--x-s3");
        // with_client_options replaces allow_http, so it is set on the options too.
        let options = ClientOptions::new()
            .with_allow_http(config.s3_allow_http)
            .with_timeout(config.retry.request_timeout)
            .with_connect_timeout(Duration::from_secs(5));
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(&bucket)
            .with_region(&region)
            .with_credentials(aws.credentials.clone())
            .with_s3_express(express)
            .with_virtual_hosted_style_request(!config.s3_path_style)
            .with_client_options(options)
            .with_allow_http(config.s3_allow_http)
            .with_retry(no_retries);
        if let Some(endpoint) = &endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        if config.create_bucket {
            if express {
                return Err(invalid(
                    "--create-bucket cannot create a directory bucket (--x-s3); create it with the AWS console or CLI".into(),
                ));
            }
            create_bucket(
                config,
                endpoint.as_deref(),
                &bucket,
                &region,
                &aws.credentials,
                &clock,
            )
            .await?;
        }
        let store = builder.build().map_err(|e| invalid(e.to_string()))?;
        let at = endpoint.as_deref().unwrap_or("AWS S3");
        (
            with_prefix(Arc::new(store), &prefix),
            format!("{url} at {at} (region {region})"),
        )
    } else if let Some(rest) = url.strip_prefix("gs://") {
        let (bucket, prefix) = bucket_and_prefix(rest);
        let store = GoogleCloudStorageBuilder::from_env()
            .with_bucket_name(&bucket)
            .with_retry(no_retries)
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        (with_prefix(Arc::new(store), &prefix), url.to_string())
    } else if let Some(rest) = url.strip_prefix("az://") {
        let (container, prefix) = bucket_and_prefix(rest);
        let store = MicrosoftAzureBuilder::from_env()
            .with_container_name(&container)
            .with_retry(no_retries)
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        (with_prefix(Arc::new(store), &prefix), url.to_string())
    } else {
        return Err(invalid(
            "supported: file:///dir, memory://, s3://bucket[/prefix], gs://bucket[/prefix], az://container[/prefix]".into(),
        ));
    };
    let chaos = Chaos::new(config.latency, config.faults.clone(), config.chaos_seed);
    let client = ObjectClient::new(store, description, config.retry.clone(), chaos, clock, rng);
    client
        .probe()
        .await
        .map_err(|e| OpenError::Probe(Box::new(e)))?;
    Ok(client)
}

/// Creates the bucket with one signed `PUT /bucket` (object_store cannot create buckets).
/// An existing bucket is fine.
async fn create_bucket(
    config: &ObjectStoreConfig,
    endpoint: Option<&str>,
    bucket: &str,
    region: &str,
    chain: &super::aws_credentials::ChainCredentials,
    clock: &Clock,
) -> Result<(), OpenError> {
    let endpoint = endpoint
        .map(str::to_string)
        .unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"));
    let fail = |reason: String| OpenError::CreateBucket {
        bucket: bucket.to_string(),
        endpoint: endpoint.clone(),
        reason,
    };
    let found = chain
        .current()
        .await
        .map_err(|e| fail(crate::telemetry::ErrorChain(&e).to_string()))?;
    let credentials = match &found.token {
        Some(token) => rusty_s3::Credentials::new_with_token(
            found.key_id.clone(),
            found.secret_key.clone(),
            token.clone(),
        ),
        None => rusty_s3::Credentials::new(found.key_id.clone(), found.secret_key.clone()),
    };
    let style = if config.s3_path_style {
        rusty_s3::UrlStyle::Path
    } else {
        rusty_s3::UrlStyle::VirtualHost
    };
    let parsed = url::Url::parse(&endpoint).map_err(|e| fail(e.to_string()))?;
    let target = rusty_s3::Bucket::new(parsed, style, bucket.to_string(), region.to_string())
        .map_err(|e| fail(e.to_string()))?;
    let action = target.create_bucket(&credentials);
    let signed = rusty_s3::S3Action::sign(&action, Duration::from_secs(60));
    let client = reqwest::Client::builder()
        .timeout(config.retry.request_timeout)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let body = action.body();
    // A store that is still starting (a container next to floe) may refuse or reset
    // connections for a moment: retry sending within the object-store deadline.
    let deadline = clock.now() + config.retry.deadline;
    let mut backoff = config.retry.backoff_base;
    let response = loop {
        let sent = client
            .put(signed.as_str())
            // Some servers (moto) insist on a Content-Length even for an empty body.
            .header(reqwest::header::CONTENT_LENGTH, body.len())
            .body(body.clone())
            .send()
            .await;
        match sent {
            Ok(response) => break response,
            Err(e) if clock.now() + backoff < deadline => {
                tracing::info!(error = %crate::telemetry::ErrorChain(&e), "the object store is not answering yet; retrying");
                clock.sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
            Err(e) => return Err(fail(e.to_string())),
        }
    };
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if status.is_success()
        || text.contains("BucketAlreadyOwnedByYou")
        || text.contains("BucketAlreadyExists")
    {
        return Ok(());
    }
    Err(fail(format!(
        "HTTP {status}: {}",
        text.chars().take(300).collect::<String>()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_bucket_and_prefix() {
        assert_eq!(bucket_and_prefix("b/p/q/"), ("b".into(), "p/q".into()));
        assert_eq!(bucket_and_prefix("b"), ("b".into(), String::new()));
    }

    #[tokio::test]
    async fn local_and_memory_stores_open_and_probe() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().to_path_buf();
        let open_at = |config: &ObjectStoreConfig, dir: &std::path::Path| {
            let (config, dir) = (config.clone(), dir.to_path_buf());
            async move { open(&config, &dir, Clock::system(), Rng::seeded(1)).await }
        };
        for url in ["", "memory://"] {
            let config = ObjectStoreConfig {
                url: url.into(),
                ..Default::default()
            };
            open_at(&config, &dir).await.unwrap();
        }
        let bad = ObjectStoreConfig {
            url: "ftp://x".into(),
            ..Default::default()
        };
        assert!(matches!(
            open_at(&bad, &dir).await,
            Err(OpenError::Invalid { .. })
        ));
    }
}
