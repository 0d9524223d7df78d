//! DescribeCluster (key 60): every live agent as clients see them (agents behind one load
//! balancer are one broker; each with its lanes, as in Metadata), with their zones as racks. The controller named is the agent
//! asked: every agent serves admin requests (they go through the quorum), so it is as good
//! a controller as any.

use crate::protocol::ApiKey;
use crate::protocol::messages::DescribeClusterRequest;
use crate::protocol::messages::DescribeClusterResponse;
use crate::protocol::messages::describe_cluster_response::DescribeClusterBroker;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::operations;
use crate::server::authorize::{Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;

pub struct DescribeCluster;

impl Api for DescribeCluster {
    type Request = DescribeClusterRequest;
    type Response = DescribeClusterResponse;
    const KEY: ApiKey = ApiKey::DescribeCluster;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Nothing(
        "Kafka answers it to anyone; only cluster_authorized_operations depends on the ACLs",
    );

    fn coordinator(_: &DescribeClusterRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut DescribeClusterRequest,
        _: i16,
    ) -> Authorized<DescribeClusterResponse> {
        Authorized::run()
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeClusterRequest,
    ) -> Reply<DescribeClusterResponse> {
        Reply::Now(handle(ctx.broker, request, ctx.client))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeClusterRequest,
    client: Client<'_>,
) -> DescribeClusterResponse {
    let shown = broker.shown_brokers();
    DescribeClusterResponse {
        endpoint_type: request.endpoint_type,
        cluster_id: broker.cluster_id(),
        controller_id: broker.shown_id_in(&shown),
        cluster_authorized_operations: operations::if_asked(
            request.include_cluster_authorized_operations,
            if broker.authorizes() {
                broker.authorized_operations(
                    &client,
                    crate::security::acl::ResourceType::Cluster,
                    crate::server::authorize::access::CLUSTER,
                )
            } else {
                operations::CLUSTER
            },
        ),
        brokers: broker
            .on_listener(broker.with_lanes(shown), client.listener)
            .into_iter()
            .map(|s| DescribeClusterBroker {
                broker_id: s.id,
                host: s.host,
                port: s.port,
                rack: s.zone,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::handlers::testing::TestNode;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lists_this_agent_at_its_listener_and_asks_nothing_of_the_authorizer() {
        let node = TestNode::start().await;
        let port = i32::from(node.running.local_addr.port());
        for version in DescribeCluster::VERSIONS.0..=DescribeCluster::VERSIONS.1 {
            let request = DescribeClusterRequest {
                include_cluster_authorized_operations: true,
                ..Default::default()
            };
            let answer = node.call::<DescribeCluster>(&request, version).await;
            assert_eq!(answer.error_code, 0, "v{version}: {answer:?}");
            assert!(!answer.cluster_id.is_empty(), "v{version}: {answer:?}");
            let ports: Vec<i32> = answer.brokers.iter().map(|b| b.port).collect();
            assert_eq!(ports, [port], "v{version}: {answer:?}");
            assert_eq!(answer.controller_id, answer.brokers[0].broker_id);
        }
        node.stop().await;
    }
}
