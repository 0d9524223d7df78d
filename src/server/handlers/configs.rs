//! What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs share: Kafka's config
//! resource types, floe's coarse authorization of the resources a request names, and the
//! checks and the topic change both alter APIs make.
//!
//! Topic configs are Kafka's (`topic_config`): every name accepted and validated with Kafka's
//! messages, described with defaults, sources and synonyms. The broker resource shows floe's
//! effective settings under Kafka's names; they are set on floe's command line, so they are
//! read-only here.

use crate::groups::group_config;
use crate::metadata::state::{AlterGroupConfigs, AlterTopicConfigs};
use crate::protocol::ErrorCode;
use crate::server::authorize::access::CLUSTER;
use crate::server::authorize::{Acl, Authorized, Gate};
use crate::server::broker::{Broker, validate_topic_name};
use crate::server::error_codes::topic_change;
use crate::topic_config::alter::{self, Refusal};
use std::collections::BTreeMap;

pub(super) const RESOURCE_TOPIC: i8 = 2;
pub(super) const RESOURCE_BROKER: i8 = 4;
pub(super) const RESOURCE_GROUP: i8 = 32;

/// floe's coarse rule for the config APIs: a topic resource needs `topic` on the topic, a
/// group resource `group` on the group, any other `cluster` on the cluster; when any is
/// denied (the checks stop at the first), the whole request is answered with `refusal`
/// (Kafka answers resource by resource).
pub(super) fn all_or_refuse<'r, R>(
    gate: &Gate<'_>,
    (topic, cluster, group): (Acl, Acl, Acl),
    mut resources: impl Iterator<Item = (i8, &'r str)>,
    refusal: impl FnOnce() -> R,
) -> Authorized<R> {
    let allowed = resources.all(|(resource_type, name)| match resource_type {
        RESOURCE_TOPIC => gate.allowed(topic, name),
        RESOURCE_GROUP => gate.allowed(group, name),
        _ => gate.allowed(cluster, CLUSTER),
    });
    if allowed {
        Authorized::run()
    } else {
        Authorized::Answer(refusal())
    }
}

/// The error a resource of a refused request is answered with.
pub(super) fn refused_code(resource_type: i8) -> i16 {
    match resource_type {
        RESOURCE_TOPIC => ErrorCode::TopicAuthorizationFailed.code(),
        RESOURCE_GROUP => ErrorCode::GroupAuthorizationFailed.code(),
        _ => ErrorCode::ClusterAuthorizationFailed.code(),
    }
}

/// Checks shared by both alter APIs before a resource's configs are looked at.
pub(super) fn check_resources<'a>(
    resources: impl Iterator<Item = (i8, &'a str)>,
) -> Option<Refusal> {
    let mut seen = std::collections::BTreeSet::new();
    for resource in resources {
        if !seen.insert(resource) {
            return Some((
                ErrorCode::InvalidRequest,
                "Each resource must appear at most once.".into(),
            ));
        }
    }
    None
}

/// Proposes a topic's new configs (or only checks them), answering Kafka's error if any.
pub(super) async fn apply_topic(
    broker: &Broker,
    name: &str,
    validate_only: bool,
    compute: impl FnOnce(&BTreeMap<String, String>) -> Result<BTreeMap<String, String>, Refusal>,
) -> Result<(), Refusal> {
    if name.is_empty() {
        return Err((
            ErrorCode::InvalidRequest,
            "Default topic resources are not allowed.".into(),
        ));
    }
    if validate_topic_name(name).is_err() {
        return Err((
            ErrorCode::InvalidTopicException,
            format!("Topic name is invalid: '{name}'"),
        ));
    }
    let current = broker
        .metadata
        .read(|s| s.topic(name).map(|t| t.configs.clone()));
    // Kafka checks the configs first, then that the topic exists.
    let wanted = compute(current.as_ref().unwrap_or(&BTreeMap::new()))?;
    let Some(current) = current else {
        return Err((
            ErrorCode::UnknownTopicOrPartition,
            format!("The topic '{name}' does not exist."),
        ));
    };
    let changes = alter::changes(&current, &wanted);
    if validate_only || changes.is_empty() {
        return Ok(());
    }
    let code = topic_change(
        broker
            .metadata
            .write(AlterTopicConfigs {
                name: name.to_string(),
                changes,
            })
            .await,
    );
    match code {
        ErrorCode::None => Ok(()),
        code => Err((
            code,
            format!("the configs of topic '{name}' could not be changed"),
        )),
    }
}

/// Checks a group's config changes (Kafka's group configs, `groups::group_config`) and stores
/// them. A group need not exist: its configs wait for it, as Kafka's do.
pub(super) async fn apply_group(
    broker: &Broker,
    group: &str,
    ops: &[(String, i8, Option<String>)],
    validate_only: bool,
) -> Result<(), Refusal> {
    if group.is_empty() {
        return Err((
            ErrorCode::InvalidRequest,
            "Default group resources are not allowed.".into(),
        ));
    }
    let current: BTreeMap<String, String> = broker.metadata.read(|s| {
        s.group_configs(group)
            .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    });
    let min_lock_ms = broker.config.share.min_record_lock_duration.as_millis() as i64;
    let changes = group_config::incremental(&current, ops, min_lock_ms)?;
    if validate_only || changes.is_empty() {
        return Ok(());
    }
    let command = AlterGroupConfigs {
        group: group.to_string(),
        changes,
    };
    match broker.metadata.write(command).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err((
            ErrorCode::PolicyViolation,
            format!("group {group} would exceed floe's bounds on group configs"),
        )),
        Err(e) => Err((
            ErrorCode::RequestTimedOut,
            format!("the configs of group {group} could not be changed: {e}"),
        )),
    }
}

pub(super) fn broker_alter_refusal(name: &str) -> Refusal {
    (
        ErrorCode::InvalidRequest,
        format!(
            "broker {name:?}: floe's broker settings are static (command-line flags and \
             environment); restart the agent with new values to change them"
        ),
    )
}

pub(super) fn split(result: Result<(), Refusal>) -> (ErrorCode, Option<String>) {
    match result {
        Ok(()) => (ErrorCode::None, None),
        Err((code, message)) => (code, Some(message)),
    }
}
