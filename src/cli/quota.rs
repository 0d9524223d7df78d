//! `floe quota describe|alter`, in the spirit of `kafka-client-quotas` and
//! `kafka-configs --entity-type users|clients|ips`: client quotas on a user, a client id, both,
//! an ip, or each one's default, over DescribeClientQuotas and AlterClientQuotas.

use super::admin_client::AdminClient;
use super::table::{Output, Table, print};
use anyhow::{Context, bail};
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand)]
pub enum QuotaCommand {
    /// The quotas of the entities with these parts (every entity without any).
    Describe {
        #[command(flatten)]
        entity: EntityArgs,
    },
    /// Set and remove quotas of one entity.
    Alter {
        #[command(flatten)]
        entity: EntityArgs,
        /// KEY=VALUE, such as producer_byte_rate=1048576 (repeatable).
        #[arg(long = "add")]
        add: Vec<String>,
        /// A key to remove (repeatable).
        #[arg(long = "delete")]
        delete: Vec<String>,
    },
}

/// A quota entity, as Kafka's tools name it.
#[derive(clap::Args)]
pub struct EntityArgs {
    /// A user, by principal name (without `User:`).
    #[arg(long, conflicts_with = "user_default")]
    user: Option<String>,
    /// The default user: every user without a quota of their own.
    #[arg(long)]
    user_default: bool,
    /// A client id.
    #[arg(long, conflicts_with = "client_id_default")]
    client_id: Option<String>,
    /// The default client id.
    #[arg(long)]
    client_id_default: bool,
    /// An ip (connection_creation_rate only).
    #[arg(long, conflicts_with = "ip_default")]
    ip: Option<String>,
    /// The default ip.
    #[arg(long)]
    ip_default: bool,
}

impl EntityArgs {
    /// `(type, name)` pairs, `None` for a default, in Kafka's type names.
    fn parts(&self) -> Vec<(String, Option<String>)> {
        let mut parts = Vec::new();
        let mut part = |ty: &str, name: &Option<String>, default: bool| {
            if name.is_some() || default {
                parts.push((ty.to_string(), name.clone()));
            }
        };
        part("user", &self.user, self.user_default);
        part("client-id", &self.client_id, self.client_id_default);
        part("ip", &self.ip, self.ip_default);
        parts
    }
}

pub async fn run(
    client: &AdminClient,
    output: Output,
    command: QuotaCommand,
) -> anyhow::Result<()> {
    match command {
        QuotaCommand::Describe { entity } => {
            let entries = client
                .describe_client_quotas(&entity.parts(), false)
                .await?;
            let mut t = Table::new("quotas", &["entity", "key", "value"]);
            for entry in entries {
                let name = entry
                    .entity
                    .iter()
                    .map(|e| {
                        let name = e.entity_name.as_deref().unwrap_or("<default>");
                        format!("{}={name}", e.entity_type)
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                for value in entry.values {
                    t.row(vec![json!(name), json!(value.key), json!(value.value)]);
                }
            }
            print(output, &[t]);
        }
        QuotaCommand::Alter {
            entity,
            add,
            delete,
        } => {
            let parts = entity.parts();
            if parts.is_empty() {
                bail!("name an entity: --user, --client-id, --ip or their --*-default");
            }
            if add.is_empty() && delete.is_empty() {
                bail!("nothing to change: give --add KEY=VALUE or --delete KEY");
            }
            let mut changes = Vec::new();
            for pair in &add {
                let (key, value) = pair
                    .split_once('=')
                    .with_context(|| format!("--add {pair}: not KEY=VALUE"))?;
                let value: f64 = value
                    .parse()
                    .with_context(|| format!("--add {pair}: not a number"))?;
                changes.push((key.to_string(), Some(value)));
            }
            changes.extend(delete.iter().map(|key| (key.clone(), None)));
            client.alter_client_quotas(&parts, &changes).await?;
            let mut t = Table::new("altered", &["key", "value"]);
            for (key, value) in changes {
                t.row(vec![json!(key), json!(value)]);
            }
            print(output, &[t]);
        }
    }
    Ok(())
}
