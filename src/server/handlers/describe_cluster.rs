//! DescribeCluster (key 60): this agent as the cluster's one broker and controller.

use crate::protocol::messages::DescribeClusterRequest;
use crate::protocol::messages::DescribeClusterResponse;
use crate::protocol::messages::describe_cluster_response::DescribeClusterBroker;
use crate::server::broker::Broker;

pub fn handle(broker: &Broker, request: DescribeClusterRequest) -> DescribeClusterResponse {
    let (host, port) = broker.advertised();
    DescribeClusterResponse {
        endpoint_type: request.endpoint_type,
        cluster_id: broker.cluster_id.clone(),
        controller_id: broker.node_id(),
        brokers: vec![DescribeClusterBroker {
            broker_id: broker.node_id(),
            host,
            port,
            ..Default::default()
        }],
        ..Default::default()
    }
}
