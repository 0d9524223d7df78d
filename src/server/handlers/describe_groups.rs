//! DescribeGroups (key 15): state, protocol and members of groups this agent coordinates.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::DescribeGroupsRequest;
use crate::protocol::messages::DescribeGroupsResponse;
use crate::protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::operations;
use crate::server::authorize::{Acl, Authorized, Gate, Needs, take_refused};
use crate::server::broker::Broker;

pub struct DescribeGroups;

impl Api for DescribeGroups {
    type Request = DescribeGroupsRequest;
    type Response = DescribeGroupsResponse;
    const KEY: ApiKey = ApiKey::DescribeGroups;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DESCRIBE]);

    fn coordinator(request: &DescribeGroupsRequest) -> Option<&str> {
        request.groups.first().map(String::as_str)
    }

    /// A group the client may not describe is answered with GROUP_AUTHORIZATION_FAILED.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeGroupsRequest,
        version: i16,
    ) -> Authorized<DescribeGroupsResponse> {
        let refused = DescribeGroupsRequest {
            groups: take_refused(&mut request.groups, |g| {
                gate.allowed(Acl::GROUP_DESCRIBE, g)
            }),
            ..Default::default()
        };
        Authorized::restoring_items(refused, version, ErrorCode::GroupAuthorizationFailed)
    }

    async fn handle(ctx: Ctx<'_>, request: DescribeGroupsRequest) -> Reply<DescribeGroupsResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(broker: &Broker, request: DescribeGroupsRequest) -> DescribeGroupsResponse {
    let operations = operations::if_asked(request.include_authorized_operations, operations::GROUP);
    let groups = request
        .groups
        .iter()
        .map(|id| {
            if !broker.coordinates(id) {
                return DescribedGroup {
                    error_code: ErrorCode::NotCoordinator.code(),
                    group_id: id.clone(),
                    ..Default::default()
                };
            }
            if broker.groups.is_consumer_group(id) {
                // As Kafka: DescribeGroups describes classic groups; ConsumerGroupDescribe the rest.
                return DescribedGroup {
                    error_code: ErrorCode::GroupIdNotFound.code(),
                    error_message: Some(format!("Group {id} is not a classic group.")),
                    group_id: id.clone(),
                    ..Default::default()
                };
            }
            match broker.groups.describe(id) {
                // A group with committed offsets and no members is Empty; Kafka describes an
                // unknown group as Dead with no members.
                None => DescribedGroup {
                    authorized_operations: operations,
                    group_id: id.clone(),
                    group_state: if broker
                        .metadata
                        .read(|s| s.group_offsets(id).next().is_some())
                    {
                        "Empty".into()
                    } else {
                        "Dead".into()
                    },
                    ..Default::default()
                },
                Some(view) => DescribedGroup {
                    authorized_operations: operations,
                    group_id: id.clone(),
                    group_state: view.state.name().into(),
                    protocol_type: view.protocol_type,
                    protocol_data: view.protocol,
                    members: view
                        .members
                        .into_iter()
                        .map(|m| DescribedGroupMember {
                            member_id: m.id,
                            group_instance_id: m.instance_id,
                            client_id: m.client_id,
                            client_host: m.client_host,
                            member_metadata: m.metadata,
                            member_assignment: m.assignment,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                },
            }
        })
        .collect();
    DescribeGroupsResponse {
        groups,
        ..Default::default()
    }
}
