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
        Reply::Now(handle(ctx.broker, request, ctx.version))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeGroupsRequest,
    version: i16,
) -> DescribeGroupsResponse {
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
            if broker.groups.is_consumer_group(id) || broker.groups.is_share_group(id) {
                // As Kafka: DescribeGroups describes classic groups; ConsumerGroupDescribe and
                // ShareGroupDescribe the rest.
                return DescribedGroup {
                    error_code: ErrorCode::GroupIdNotFound.code(),
                    // The message is on the wire from v6 only.
                    error_message: (version >= 6)
                        .then(|| format!("Group {id} is not a classic group.")),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::ConsumerGroupHeartbeatRequest;
    use crate::server::handlers::consumer_group_heartbeat::ConsumerGroupHeartbeat;
    use crate::server::handlers::testing::TestNode;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_consumer_protocol_group_is_not_found_at_every_version() {
        let node = TestNode::start().await;
        node.create_topic("events", 1).await;
        let join = ConsumerGroupHeartbeatRequest {
            group_id: "new-protocol".into(),
            member_id: "m1".into(),
            member_epoch: 0,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["events".into()]),
            topic_partitions: Some(Vec::new()),
            ..Default::default()
        };
        let joined = node.call::<ConsumerGroupHeartbeat>(&join, 0).await;
        assert_eq!(joined.error_code, 0, "{joined:?}");
        let request = DescribeGroupsRequest {
            groups: vec!["new-protocol".into(), "nobody".into()],
            ..Default::default()
        };
        for version in DescribeGroups::VERSIONS.0..=DescribeGroups::VERSIONS.1 {
            let answer = node.call::<DescribeGroups>(&request, version).await;
            let [consumer, unknown] = &answer.groups[..] else {
                panic!("v{version}: {answer:?}");
            };
            assert_eq!(
                consumer.error_code,
                ErrorCode::GroupIdNotFound.code(),
                "v{version}"
            );
            assert_eq!(consumer.error_message.is_some(), version >= 6, "v{version}");
            // As Kafka: a group nobody joined is Dead, without an error.
            assert_eq!(
                (unknown.error_code, unknown.group_state.as_str()),
                (0, "Dead")
            );
        }
        node.stop().await;
    }
}
