//! `floe topic create|list|describe|delete|alter-config`, in the spirit of `kafka-topics` and
//! `rpk topic`, over the Kafka protocol.

use super::admin_client::{AdminClient, EARLIEST, LATEST, check};
use super::table::{Output, Table, print};
use anyhow::{Context, bail};
use clap::Subcommand;
use serde_json::json;
use std::collections::BTreeMap;

#[derive(Subcommand)]
pub enum TopicCommand {
    /// Create a topic.
    Create {
        name: String,
        /// Partitions (default: the broker's --default-partitions).
        #[arg(long, short, default_value_t = -1, allow_hyphen_values = true)]
        partitions: i32,
        /// A topic config, name=value (repeatable), e.g. retention.ms=86400000.
        #[arg(long = "config", short, value_parser = parse_config)]
        configs: Vec<(String, String)>,
    },
    /// List the topics.
    List,
    /// A topic's partitions (leader, log start, high watermark) and its own configs.
    Describe { name: String },
    /// Delete a topic and its records.
    Delete { name: String },
    /// Set or remove a topic's configs.
    AlterConfig {
        name: String,
        /// name=value to set (repeatable).
        #[arg(long = "set", value_parser = parse_config)]
        set: Vec<(String, String)>,
        /// A config to remove, back to the broker's default (repeatable).
        #[arg(long = "delete")]
        delete: Vec<String>,
    },
}

/// `name=value`.
pub fn parse_config(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("{text:?} is not name=value")),
    }
}

pub async fn run(
    client: &AdminClient,
    output: Output,
    command: TopicCommand,
) -> anyhow::Result<()> {
    match command {
        TopicCommand::Create {
            name,
            partitions,
            configs,
        } => {
            let configs: BTreeMap<String, String> = configs.into_iter().collect();
            let created = client.create_topic(&name, partitions, &configs).await?;
            check(
                created.error_code,
                created.error_message.as_deref(),
                &format!("creating topic {name}"),
            )?;
            let mut t = Table::new("created", &["topic", "id", "partitions"]);
            t.row(vec![
                json!(created.name),
                json!(created.topic_id.to_string()),
                json!(created.num_partitions),
            ]);
            print(output, &[t]);
        }
        TopicCommand::List => {
            let metadata = client.metadata(None).await?;
            let mut t = Table::new("topics", &["topic", "id", "partitions"]);
            let mut topics = metadata.topics;
            topics.sort_by(|a, b| a.name.cmp(&b.name));
            for topic in topics.iter().filter(|t| t.error_code == 0) {
                t.row(vec![
                    json!(topic.name),
                    json!(topic.topic_id.to_string()),
                    json!(topic.partitions.len()),
                ]);
            }
            print(output, &[t]);
        }
        TopicCommand::Describe { name } => print(output, &describe(client, &name).await?),
        TopicCommand::Delete { name } => {
            let deleted = client.delete_topic(&name).await?;
            check(
                deleted.error_code,
                deleted.error_message.as_deref(),
                &format!("deleting topic {name}"),
            )?;
            let mut t = Table::new("deleted", &["topic"]);
            t.row(vec![json!(name)]);
            print(output, &[t]);
        }
        TopicCommand::AlterConfig { name, set, delete } => {
            if set.is_empty() && delete.is_empty() {
                bail!("nothing to alter: give --set name=value or --delete name");
            }
            let set: BTreeMap<String, String> = set.into_iter().collect();
            let altered = client.alter_topic_configs(&name, &set, &delete).await?;
            check(
                altered.error_code,
                altered.error_message.as_deref(),
                &format!("altering the configs of topic {name}"),
            )?;
            print(output, &describe(client, &name).await?[1..]);
        }
    }
    Ok(())
}

/// Kafka's config source of a topic's own (dynamic) config.
const DYNAMIC_TOPIC_CONFIG: i8 = 1;

/// A topic's partitions and its own configs, as two tables.
async fn describe(client: &AdminClient, name: &str) -> anyhow::Result<Vec<Table>> {
    let metadata = client.metadata(Some(vec![name.to_string()])).await?;
    let topic = metadata
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
        .context("Metadata answered no such topic")?;
    check(topic.error_code, None, &format!("topic {name}"))?;
    let partitions: Vec<i32> = topic.partitions.iter().map(|p| p.partition_index).collect();
    let earliest = client
        .list_offsets(&metadata, name, &partitions, EARLIEST)
        .await?;
    let latest = client
        .list_offsets(&metadata, name, &partitions, LATEST)
        .await?;
    let mut table = Table::new(
        "partitions",
        &[
            "topic",
            "partition",
            "leader",
            "log start",
            "high watermark",
        ],
    );
    let mut sorted: Vec<_> = topic.partitions.iter().collect();
    sorted.sort_by_key(|p| p.partition_index);
    for p in sorted {
        table.row(vec![
            json!(name),
            json!(p.partition_index),
            json!(p.leader_id),
            json!(earliest.get(&p.partition_index)),
            json!(latest.get(&p.partition_index)),
        ]);
    }
    let described = client.describe_topic_configs(name).await?;
    check(
        described.error_code,
        described.error_message.as_deref(),
        &format!("the configs of topic {name}"),
    )?;
    let mut configs = Table::new("configs", &["name", "value"]);
    for c in described
        .configs
        .iter()
        .filter(|c| c.config_source == DYNAMIC_TOPIC_CONFIG)
    {
        let value = if c.is_sensitive {
            None
        } else {
            c.value.clone()
        };
        configs.row(vec![json!(c.name), json!(value)]);
    }
    Ok(vec![table, configs])
}
