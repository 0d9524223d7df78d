//! `floe group list|describe|delete|reset-offsets`, in the spirit of
//! `kafka-consumer-groups`, over the Kafka protocol. Resetting offsets is a dry run unless
//! `--execute` is given, and, as in Kafka, only allowed while the group has no member.

use super::admin_client::{AdminClient, EARLIEST, LATEST};
use super::table::{Output, Table, print};
use anyhow::bail;
use clap::Subcommand;
use floe::protocol::messages::ConsumerProtocolAssignment;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Subcommand)]
pub enum GroupCommand {
    /// List the groups of the cluster.
    List,
    /// A group's state, members (with their partitions) and committed offsets with lag.
    Describe { group: String },
    /// Delete a group that has no member, with its committed offsets.
    Delete { group: String },
    /// Move a group's committed offsets (a dry run without --execute).
    ResetOffsets {
        group: String,
        /// TOPIC, or TOPIC:0,1,2 for some partitions (repeatable).
        #[arg(long = "topic", required = true)]
        topics: Vec<String>,
        #[command(flatten)]
        to: ResetTarget,
        /// Commit the new offsets (without it, only print them).
        #[arg(long)]
        execute: bool,
    },
}

#[derive(clap::Args, Clone, Debug)]
#[group(required = true, multiple = false)]
pub struct ResetTarget {
    /// To each partition's log start.
    #[arg(long)]
    to_earliest: bool,
    /// To each partition's end (skip everything so far).
    #[arg(long)]
    to_latest: bool,
    /// To this offset in every partition.
    #[arg(long)]
    to_offset: Option<i64>,
    /// To the first record at or after this time (ms since the epoch).
    #[arg(long)]
    to_timestamp: Option<i64>,
    /// By this many records from the committed offset (negative: back).
    #[arg(long, allow_hyphen_values = true)]
    shift_by: Option<i64>,
}

/// Where to move offsets, decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Earliest,
    Latest,
    Offset(i64),
    Timestamp(i64),
    ShiftBy(i64),
}

impl ResetTarget {
    fn target(&self) -> Target {
        match (self.to_offset, self.to_timestamp, self.shift_by) {
            (Some(offset), _, _) => Target::Offset(offset),
            (_, Some(ms), _) => Target::Timestamp(ms),
            (_, _, Some(by)) => Target::ShiftBy(by),
            _ if self.to_latest => Target::Latest,
            _ => Target::Earliest,
        }
    }
}

/// What is known of one partition before a reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub partition: i32,
    pub committed: Option<i64>,
    pub earliest: i64,
    pub latest: i64,
    /// The first offset at or after the target time, if asked (`None`: no such record).
    pub at_time: Option<i64>,
}

/// The offset `target` moves a partition to, kept within its log as Kafka's tool keeps it (an
/// offset before the log start becomes the log start, one past the end becomes the end).
pub fn new_offset(target: Target, known: &Known) -> Result<i64, String> {
    let wanted = match target {
        Target::Earliest => known.earliest,
        Target::Latest => known.latest,
        Target::Offset(offset) => offset,
        // No record at or after the time: the end, as Kafka does.
        Target::Timestamp(_) => known.at_time.unwrap_or(known.latest),
        Target::ShiftBy(by) => match known.committed {
            Some(committed) => committed.saturating_add(by),
            None => {
                return Err(format!(
                    "partition {} has no committed offset to shift",
                    known.partition
                ));
            }
        },
    };
    Ok(wanted.clamp(known.earliest, known.latest.max(known.earliest)))
}

/// `TOPIC` or `TOPIC:0,1,2`.
fn parse_topic(text: &str) -> anyhow::Result<(String, Option<Vec<i32>>)> {
    match text.split_once(':') {
        None => Ok((text.to_string(), None)),
        Some((topic, list)) => {
            let partitions: Result<Vec<i32>, _> =
                list.split(',').map(|p| p.trim().parse::<i32>()).collect();
            match partitions {
                Ok(p) if !p.is_empty() => Ok((topic.to_string(), Some(p))),
                _ => bail!("--topic {text:?}: partitions are numbers, e.g. {topic}:0,1"),
            }
        }
    }
}

/// Kafka's states of a group that has no member.
const INACTIVE: [&str; 2] = ["Empty", "Dead"];

pub async fn run(
    client: &AdminClient,
    output: Output,
    command: GroupCommand,
) -> anyhow::Result<()> {
    match command {
        GroupCommand::List => {
            let mut t = Table::new("groups", &["group", "state", "type", "protocol type"]);
            for g in client.list_groups().await? {
                t.row(vec![
                    json!(g.group_id),
                    json!(g.group_state),
                    json!(g.group_type),
                    json!(g.protocol_type),
                ]);
            }
            print(output, &[t]);
        }
        GroupCommand::Describe { group } => print(output, &describe(client, &group).await?),
        GroupCommand::Delete { group } => {
            client.delete_group(&group).await?;
            let mut t = Table::new("deleted", &["group"]);
            t.row(vec![json!(group)]);
            print(output, &[t]);
        }
        GroupCommand::ResetOffsets {
            group,
            topics,
            to,
            execute,
        } => {
            let target = to.target();
            if execute {
                let described = client.describe_group(&group).await?;
                if !INACTIVE.contains(&described.group_state.as_str()) {
                    bail!(
                        "offsets can only be reset while group {group} has no member; it is {} \
                         with {} member(s): stop its consumers first",
                        described.group_state,
                        described.members.len()
                    );
                }
            }
            let committed = client.committed_offsets(&group).await?;
            let mut t = Table::new(
                if execute {
                    "reset"
                } else {
                    "planned (dry run: add --execute)"
                },
                &[
                    "group",
                    "topic",
                    "partition",
                    "current offset",
                    "new offset",
                ],
            );
            for spec in &topics {
                let (topic, chosen) = parse_topic(spec)?;
                let metadata = client.metadata(Some(vec![topic.clone()])).await?;
                let Some(found) = metadata
                    .topics
                    .iter()
                    .find(|t| t.name.as_deref() == Some(topic.as_str()) && t.error_code == 0)
                else {
                    bail!("topic {topic} does not exist");
                };
                let all: BTreeSet<i32> =
                    found.partitions.iter().map(|p| p.partition_index).collect();
                let partitions: Vec<i32> = match chosen {
                    Some(chosen) => {
                        if let Some(missing) = chosen.iter().find(|p| !all.contains(p)) {
                            bail!("topic {topic} has no partition {missing}");
                        }
                        chosen
                    }
                    None => all.into_iter().collect(),
                };
                let earliest = client
                    .list_offsets(&metadata, &topic, &partitions, EARLIEST)
                    .await?;
                let latest = client
                    .list_offsets(&metadata, &topic, &partitions, LATEST)
                    .await?;
                let at_time = match target {
                    Target::Timestamp(ms) => {
                        client
                            .list_offsets(&metadata, &topic, &partitions, ms)
                            .await?
                    }
                    _ => BTreeMap::new(),
                };
                let mut moves = BTreeMap::new();
                for &p in &partitions {
                    let known = Known {
                        partition: p,
                        committed: committed.get(&(topic.clone(), p)).copied(),
                        earliest: earliest.get(&p).copied().unwrap_or(0),
                        latest: latest.get(&p).copied().unwrap_or(0),
                        at_time: at_time.get(&p).copied().filter(|o| *o >= 0),
                    };
                    let new = new_offset(target, &known).map_err(anyhow::Error::msg)?;
                    moves.insert(p, new);
                    t.row(vec![
                        json!(group),
                        json!(topic),
                        json!(p),
                        json!(known.committed),
                        json!(new),
                    ]);
                }
                if execute {
                    client.commit_offsets(&group, &topic, &moves).await?;
                }
            }
            print(output, &[t]);
        }
    }
    Ok(())
}

/// The partitions a member's assignment names, as `topic-partition`s.
fn assigned(assignment: &bytes::Bytes) -> Vec<String> {
    use floe::protocol::wire::Message;
    let mut rest = assignment.clone();
    if rest.len() < 2 {
        return Vec::new();
    }
    let version = i16::from_be_bytes([rest[0], rest[1]]);
    let _ = bytes::Buf::get_i16(&mut rest);
    let version = version.clamp(0, ConsumerProtocolAssignment::VALID_VERSIONS.1);
    ConsumerProtocolAssignment::decode(&mut rest, version)
        .map(|a| {
            a.assigned_partitions
                .iter()
                .flat_map(|t| t.partitions.iter().map(move |p| format!("{}-{p}", t.topic)))
                .collect()
        })
        .unwrap_or_default()
}

/// A group's state, members and offsets (with the lag behind each partition's end).
async fn describe(client: &AdminClient, group: &str) -> anyhow::Result<Vec<Table>> {
    let described = client.describe_group(group).await?;
    let mut state = Table::new(
        "group",
        &["group", "state", "protocol type", "protocol", "members"],
    );
    state.row(vec![
        json!(group),
        json!(described.group_state),
        json!(described.protocol_type),
        json!(described.protocol_data),
        json!(described.members.len()),
    ]);
    let mut members = Table::new("members", &["member id", "client id", "host", "partitions"]);
    for m in &described.members {
        members.row(vec![
            json!(m.member_id),
            json!(m.client_id),
            json!(m.client_host),
            json!(assigned(&m.member_assignment).join(",")),
        ]);
    }
    let committed = client.committed_offsets(group).await?;
    let topics: BTreeSet<String> = committed.keys().map(|(t, _)| t.clone()).collect();
    let mut offsets = Table::new(
        "offsets",
        &[
            "topic",
            "partition",
            "current offset",
            "log end offset",
            "lag",
        ],
    );
    for topic in topics {
        let partitions: Vec<i32> = committed
            .keys()
            .filter(|(t, _)| *t == topic)
            .map(|(_, p)| *p)
            .collect();
        let metadata = client.metadata(Some(vec![topic.clone()])).await?;
        // A deleted topic's offsets have no end to compare with.
        let ends = client
            .list_offsets(&metadata, &topic, &partitions, LATEST)
            .await
            .unwrap_or_default();
        for p in partitions {
            let current = committed[&(topic.clone(), p)];
            let end = ends.get(&p).copied();
            offsets.row(vec![
                json!(topic),
                json!(p),
                json!(current),
                json!(end),
                json!(end.map(|e| (e - current).max(0))),
            ]);
        }
    }
    Ok(vec![state, members, offsets])
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: Known = Known {
        partition: 0,
        committed: Some(50),
        earliest: 10,
        latest: 100,
        at_time: Some(70),
    };

    #[test]
    fn targets_move_within_the_log() {
        let to = |target| new_offset(target, &KNOWN);
        assert_eq!(to(Target::Earliest), Ok(10));
        assert_eq!(to(Target::Latest), Ok(100));
        assert_eq!(to(Target::Offset(42)), Ok(42));
        assert_eq!(to(Target::Timestamp(0)), Ok(70));
        assert_eq!(to(Target::ShiftBy(-20)), Ok(30));
        // Out of the log: clamped to its start or end, as Kafka's tool does.
        assert_eq!(to(Target::Offset(3)), Ok(10));
        assert_eq!(to(Target::Offset(1_000)), Ok(100));
        assert_eq!(to(Target::ShiftBy(i64::MAX)), Ok(100));
        assert_eq!(to(Target::ShiftBy(-1_000)), Ok(10));
    }

    #[test]
    fn a_time_after_every_record_is_the_end() {
        let known = Known {
            at_time: None,
            ..KNOWN
        };
        assert_eq!(new_offset(Target::Timestamp(i64::MAX), &known), Ok(100));
    }

    #[test]
    fn shifting_needs_a_committed_offset() {
        let known = Known {
            committed: None,
            ..KNOWN
        };
        assert!(new_offset(Target::ShiftBy(1), &known).is_err());
    }

    #[test]
    fn topics_name_their_partitions_or_all() {
        assert_eq!(parse_topic("t").ok(), Some(("t".to_string(), None)));
        assert_eq!(
            parse_topic("t:0,2").ok(),
            Some(("t".to_string(), Some(vec![0, 2])))
        );
        assert!(parse_topic("t:x").is_err());
    }
}
