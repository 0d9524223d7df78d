//! ConsumerGroupDescribe (key 69): KIP-848 groups this agent coordinates — epochs, assignor,
//! and each member's subscription, current and target assignment.

use crate::groups::assignor::Partitions;
use crate::groups::consumer::TopicImage;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::ConsumerGroupDescribeRequest;
use crate::protocol::messages::ConsumerGroupDescribeResponse;
use crate::protocol::messages::consumer_group_describe_response::{
    Assignment, DescribedGroup, Member, TopicPartitions,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::operations;
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::Broker;

/// KIP-1099's member type of a consumer-protocol member.
const MEMBER_TYPE_CONSUMER: i8 = 1;

pub struct ConsumerGroupDescribe;

impl Api for ConsumerGroupDescribe {
    type Request = ConsumerGroupDescribeRequest;
    type Response = ConsumerGroupDescribeResponse;
    const KEY: ApiKey = ApiKey::ConsumerGroupDescribe;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DESCRIBE]);

    fn coordinator(request: &ConsumerGroupDescribeRequest) -> Option<&str> {
        request.group_ids.first().map(String::as_str)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut ConsumerGroupDescribeRequest,
        version: i16,
    ) -> Authorized<ConsumerGroupDescribeResponse> {
        let names = request.group_ids.iter().map(String::as_str);
        let error = ErrorCode::GroupAuthorizationFailed;
        all_or_refuse(gate, Acl::GROUP_DESCRIBE, names, request, version, error)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: ConsumerGroupDescribeRequest,
    ) -> Reply<ConsumerGroupDescribeResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.version))
    }
}

pub fn handle(
    broker: &Broker,
    request: ConsumerGroupDescribeRequest,
    version: i16,
) -> ConsumerGroupDescribeResponse {
    let groups = request
        .group_ids
        .iter()
        .map(|id| {
            let error = |code: ErrorCode, message: String| DescribedGroup {
                group_id: id.clone(),
                error_code: code.code(),
                error_message: Some(message),
                ..Default::default()
            };
            if id.is_empty() {
                return error(ErrorCode::InvalidGroupId, "the group id is empty".into());
            }
            if !broker.coordinates(id) {
                return error(
                    ErrorCode::NotCoordinator,
                    format!("this agent does not coordinate group {id}"),
                );
            }
            let Some(group) = broker.groups.consumer_group(id) else {
                // Clients describe classic groups with DescribeGroups after this answer.
                let message = if broker.groups.is_classic_group(id) {
                    format!("Group {id} is not a consumer group.")
                } else {
                    format!("Group {id} not found.")
                };
                return error(ErrorCode::GroupIdNotFound, message);
            };
            broker.metadata.read(|topics| DescribedGroup {
                authorized_operations: operations::if_asked(
                    request.include_authorized_operations,
                    operations::GROUP,
                ),
                group_id: id.clone(),
                group_state: group.state_name().into(),
                group_epoch: group.epoch,
                assignment_epoch: group.assignment_epoch,
                assignor_name: group.assignor.map(|a| a.name()).unwrap_or_default().into(),
                members: group
                    .members
                    .values()
                    .map(|m| Member {
                        member_id: m.id.clone(),
                        instance_id: m.instance_id.clone(),
                        rack_id: m.rack_id.clone(),
                        member_epoch: m.epoch,
                        client_id: m.client_id.clone(),
                        client_host: m.client_host.clone(),
                        subscribed_topic_names: m.subscribed_names.to_vec(),
                        subscribed_topic_regex: m.subscribed_regex.clone(),
                        assignment: assignment(&m.assigned, topics),
                        target_assignment: assignment(
                            group.target.get(&m.id).unwrap_or(&Partitions::new()),
                            topics,
                        ),
                        member_type: if version >= 1 {
                            MEMBER_TYPE_CONSUMER
                        } else {
                            -1
                        },
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        })
        .collect();
    ConsumerGroupDescribeResponse {
        groups,
        ..Default::default()
    }
}

fn assignment(partitions: &Partitions, topics: &dyn TopicImage) -> Assignment {
    Assignment {
        topic_partitions: partitions
            .iter()
            .map(|(id, ps)| TopicPartitions {
                topic_id: *id,
                topic_name: topics.name_of(id).unwrap_or_default(),
                partitions: ps.iter().copied().collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
