//! DescribeCluster (key 60): this agent (by the id clients know it by) as broker and controller.

use crate::protocol::messages::DescribeClusterRequest;
use crate::protocol::messages::DescribeClusterResponse;
use crate::protocol::messages::describe_cluster_response::DescribeClusterBroker;
use crate::server::broker::Broker;

pub fn handle(broker: &Broker, request: DescribeClusterRequest) -> DescribeClusterResponse {
    let (host, port) = broker.advertised();
    DescribeClusterResponse {
        endpoint_type: request.endpoint_type,
        cluster_id: broker.cluster_id(),
        controller_id: broker.shown_id(),
        brokers: vec![DescribeClusterBroker {
            broker_id: broker.shown_id(),
            host,
            port,
            ..Default::default()
        }],
        ..Default::default()
    }
}
