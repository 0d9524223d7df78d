//! ShareGroupDescribe (key 77): share groups this agent coordinates (KIP-932) — epochs, the
//! assignor, and each member's subscription and assignment. Version 1 (Kafka 4.1's).
//!
//! As Kafka's `handleShareGroupDescribe`: each group needs DESCRIBE (else
//! GROUP_AUTHORIZATION_FAILED for that group alone), and a group some of whose assigned topics
//! the client may not describe is answered TOPIC_AUTHORIZATION_FAILED without its members.
//! A share group whose members all left is Empty while its records' state lasts.

use super::share::group_refusal;
use crate::groups::assignor::Partitions;
use crate::groups::consumer::TopicImage;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ShareGroupDescribeRequest;
use crate::protocol::messages::ShareGroupDescribeResponse;
use crate::protocol::messages::share_group_describe_response::{
    Assignment, DescribedGroup, Member, TopicPartitions,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::operations;
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

/// The assignor share groups use (Kafka's `SimpleAssignor`).
pub const ASSIGNOR: &str = "simple";

pub struct ShareGroupDescribe;

impl Api for ShareGroupDescribe {
    type Request = ShareGroupDescribeRequest;
    type Response = ShareGroupDescribeResponse;
    const KEY: ApiKey = ApiKey::ShareGroupDescribe;
    const VERSIONS: (i16, i16) = (1, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DESCRIBE, Acl::TOPIC_DESCRIBE]);

    fn coordinator(request: &ShareGroupDescribeRequest) -> Option<&str> {
        request.group_ids.first().map(String::as_str)
    }

    /// Group by group, in the handler.
    fn authorize(
        _: &Gate<'_>,
        _: &mut ShareGroupDescribeRequest,
        _: i16,
    ) -> Authorized<ShareGroupDescribeResponse> {
        Authorized::run()
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: ShareGroupDescribeRequest,
    ) -> Reply<ShareGroupDescribeResponse> {
        let gate = Gate::new(ctx.broker, &ctx.client, Self::NEEDS);
        Reply::Now(handle(ctx.broker, request, &gate))
    }
}

pub fn handle(
    broker: &Broker,
    request: ShareGroupDescribeRequest,
    gate: &Gate<'_>,
) -> ShareGroupDescribeResponse {
    let groups = request
        .group_ids
        .iter()
        .map(|id| describe(broker, gate, id, request.include_authorized_operations))
        .collect();
    ShareGroupDescribeResponse {
        groups,
        ..Default::default()
    }
}

fn describe(broker: &Broker, gate: &Gate<'_>, id: &str, with_operations: bool) -> DescribedGroup {
    let error = |code: ErrorCode, message: String| DescribedGroup {
        group_id: id.to_string(),
        error_code: code.code(),
        error_message: Some(message),
        ..Default::default()
    };
    if let Some((code, message)) = group_refusal(broker, id, gate.allowed(Acl::GROUP_DESCRIBE, id))
    {
        return error(code, message);
    }
    let live = broker.groups.share_group(id);
    let other_kind = broker.groups.is_consumer_group(id) || broker.groups.is_classic_group(id);
    let (has_records, has_offsets) = broker
        .metadata
        .read(|s| (s.share().has_group(id), s.groups().any(|g| g == id)));
    if live.is_none() && (other_kind || (has_offsets && !has_records)) {
        let code = ErrorCode::GroupIdNotFound;
        return error(code, format!("Group {id} is not a share group."));
    }
    if live.is_none() && !has_records {
        return error(ErrorCode::GroupIdNotFound, format!("Group {id} not found."));
    }
    let topics = broker.metadata.read(|state| broker.groups.topics.of(state));
    let mut described = DescribedGroup {
        group_id: id.to_string(),
        group_state: "Empty".into(),
        assignor_name: ASSIGNOR.into(),
        authorized_operations: operations::if_asked(with_operations, operations::GROUP),
        ..Default::default()
    };
    let Some(group) = live else {
        return described;
    };
    described.group_state = group.state_name().into();
    described.group_epoch = group.epoch;
    described.assignment_epoch = group.assignment_epoch;
    described.members = group
        .members
        .values()
        .map(|m| Member {
            member_id: m.id.clone(),
            rack_id: m.rack_id.clone(),
            member_epoch: m.epoch,
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            subscribed_topic_names: m.subscribed.clone(),
            assignment: assignment(&m.assigned, &*topics),
            ..Default::default()
        })
        .collect();
    // Kafka hides a group whose assignment names a topic the client may not describe.
    let hidden = gate.enforced()
        && described.members.iter().any(|m| {
            m.assignment
                .topic_partitions
                .iter()
                .any(|t| !gate.allowed(Acl::TOPIC_DESCRIBE, &t.topic_name))
        });
    if hidden {
        return error(
            ErrorCode::TopicAuthorizationFailed,
            "The group has described topic(s) that the client is not authorized to describe."
                .into(),
        );
    }
    described
}

/// A member's partitions, by topic; topics deleted since are left out, as Kafka does.
fn assignment(partitions: &Partitions, topics: &dyn TopicImage) -> Assignment {
    Assignment {
        topic_partitions: partitions
            .iter()
            .filter_map(|(id, ps)| {
                Some(TopicPartitions {
                    topic_id: *id,
                    topic_name: topics.name_of(id)?,
                    partitions: ps.iter().copied().collect(),
                    ..Default::default()
                })
            })
            .collect(),
        ..Default::default()
    }
}
