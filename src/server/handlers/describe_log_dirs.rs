//! DescribeLogDirs (key 35): where partitions' data lives and how big it is. A floe agent
//! has no log directories of its own; every partition lives in the object store, so each
//! agent answers one "directory", the object store, holding every partition with the bytes
//! its index references.

use crate::protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use crate::protocol::messages::{DescribeLogDirsRequest, DescribeLogDirsResponse};
use crate::protocol::{ApiKey, ErrorCode};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

pub struct DescribeLogDirs;

impl Api for DescribeLogDirs {
    type Request = DescribeLogDirsRequest;
    type Response = DescribeLogDirsResponse;
    const KEY: ApiKey = ApiKey::DescribeLogDirs;
    const VERSIONS: (i16, i16) = (1, 4);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE]);

    fn coordinator(_: &DescribeLogDirsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeLogDirsRequest,
        version: i16,
    ) -> Authorized<DescribeLogDirsResponse> {
        let allowed = gate.on_cluster(Operation::Describe);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::ClusterAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeLogDirsRequest,
    ) -> Reply<DescribeLogDirsResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(broker: &Broker, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse {
    let topics = broker.metadata.read(|state| {
        let describe = |name: &str, wanted: Option<&[i32]>| {
            let topic = state.topic(name)?;
            let partitions = topic
                .partitions
                .iter()
                .enumerate()
                .map(|(i, p)| (i as i32, p))
                .filter(|(i, _)| wanted.is_none_or(|w| w.contains(i)))
                .map(|(i, p)| DescribeLogDirsPartition {
                    partition_index: i,
                    partition_size: p.bytes as i64,
                    offset_lag: 0,
                    is_future_key: false,
                    ..Default::default()
                })
                .collect();
            Some(DescribeLogDirsTopic {
                name: name.to_string(),
                partitions,
                ..Default::default()
            })
        };
        match &request.topics {
            // Null: every partition of every topic.
            None => state
                .topics()
                .filter_map(|t| describe(&t.name, None))
                .collect::<Vec<_>>(),
            Some(topics) => topics
                .iter()
                .filter_map(|t| describe(&t.topic, Some(&t.partitions)))
                .collect(),
        }
    });
    DescribeLogDirsResponse {
        results: vec![DescribeLogDirsResult {
            log_dir: broker.store.description().to_string(),
            topics,
            total_bytes: -1,
            usable_bytes: -1,
            ..Default::default()
        }],
        ..Default::default()
    }
}
