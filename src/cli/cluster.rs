//! `floe cluster info|quorum`: the brokers clients see (Kafka's DescribeCluster), and the
//! metadata quorum's members and progress (the admin API's `/v1/quorum`: Kafka's
//! DescribeQuorum speaks of KRaft controllers, which floe does not have).

use super::admin_client::AdminClient;
use super::table::{Output, Table, print};
use anyhow::{Context, bail};
use clap::Subcommand;
use serde_json::{Value, json};

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// The cluster id, the brokers clients see, and the topic count.
    Info,
    /// The metadata quorum as the admin API of --admin-addr sees it.
    Quorum,
}

/// Where the admin API is, its bearer token if it requires one, and how long a call may take.
pub struct AdminApi {
    pub addr: String,
    pub token: Option<String>,
    pub timeout: std::time::Duration,
}

pub async fn run(
    client: &AdminClient,
    admin: &AdminApi,
    output: Output,
    command: ClusterCommand,
) -> anyhow::Result<()> {
    match command {
        ClusterCommand::Info => {
            let cluster = client.describe_cluster().await?;
            let topics = client.metadata(None).await?.topics.len();
            let mut summary = Table::new("cluster", &["cluster id", "controller", "topics"]);
            summary.row(vec![
                json!(cluster.cluster_id),
                json!(cluster.controller_id),
                json!(topics),
            ]);
            let mut brokers = Table::new("brokers", &["id", "host", "port", "rack"]);
            for b in &cluster.brokers {
                brokers.row(vec![
                    json!(b.broker_id),
                    json!(b.host),
                    json!(b.port),
                    json!(b.rack),
                ]);
            }
            print(output, &[summary, brokers]);
        }
        ClusterCommand::Quorum => {
            let quorum = get_json(admin, "/v1/quorum").await?;
            let mut t = Table::new(
                "quorum",
                &[
                    "node state",
                    "term",
                    "leader",
                    "voters",
                    "learners",
                    "last log index",
                    "applied index",
                ],
            );
            let ids = |v: &Value| {
                v.as_array()
                    .map(|a| a.iter().map(Value::to_string).collect::<Vec<_>>().join(","))
                    .unwrap_or_default()
            };
            t.row(vec![
                quorum["state"].clone(),
                quorum["term"].clone(),
                quorum["leader"].clone(),
                json!(ids(&quorum["voters"])),
                json!(ids(&quorum["learners"])),
                quorum["last_log_index"].clone(),
                quorum["last_applied_index"].clone(),
            ]);
            print(output, &[t]);
        }
    }
    Ok(())
}

async fn get_json(admin: &AdminApi, path: &str) -> anyhow::Result<Value> {
    let url = format!("http://{}{path}", admin.addr);
    let client = reqwest::Client::builder()
        .timeout(admin.timeout)
        .build()
        .context("an HTTP client")?;
    let mut request = client.get(&url);
    if let Some(token) = &admin.token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.with_context(|| format!("GET {url}"))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .with_context(|| format!("GET {url}"))?;
    if !status.is_success() {
        bail!("GET {url}: {status}: {}", body.trim());
    }
    serde_json::from_str(&body).with_context(|| format!("GET {url}: not JSON"))
}
