//! CreatePartitions (key 37): grows a topic's partition count.

use crate::metadata::state;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::CreatePartitionsRequest;
use crate::protocol::messages::CreatePartitionsResponse;
use crate::protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs, all_or_refuse};
use crate::server::broker::Broker;
use crate::server::error_codes::topic_change;
use crate::server::mutation_quota::{Mutations, THROTTLED_MESSAGE};

pub struct CreatePartitions;

impl Api for CreatePartitions {
    type Request = CreatePartitionsRequest;
    type Response = CreatePartitionsResponse;
    const KEY: ApiKey = ApiKey::CreatePartitions;
    const VERSIONS: (i16, i16) = (0, 3);
    const NEEDS: Needs = Needs::Acls(&[Acl::TOPIC_ALTER]);

    fn coordinator(_: &CreatePartitionsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut CreatePartitionsRequest,
        version: i16,
    ) -> Authorized<CreatePartitionsResponse> {
        let names = request.topics.iter().map(|t| t.name.as_str());
        let error = ErrorCode::TopicAuthorizationFailed;
        all_or_refuse(gate, Acl::TOPIC_ALTER, names, request, version, error)
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: CreatePartitionsRequest,
    ) -> Reply<CreatePartitionsResponse> {
        // Under a `controller_mutation_rate` quota (strict from v3, as in Kafka).
        let mut response = handle(ctx.broker, request, &Mutations::of(&ctx, 3)).await;
        response.throttle_time_ms = ctx.throttle.field();
        Reply::Now(response)
    }
}

pub async fn handle(
    broker: &Broker,
    request: CreatePartitionsRequest,
    mutations: &Mutations<'_>,
) -> CreatePartitionsResponse {
    let mut results = Vec::new();
    for topic in &request.topics {
        let (current, limits, cluster_partitions) = broker.metadata.read(|s| {
            (
                s.topic(&topic.name).map(|t| t.partitions.len() as i64),
                s.limits(),
                s.partition_count(),
            )
        });
        let count = i64::from(topic.count);
        let (code, message) = match current {
            None => (ErrorCode::UnknownTopicOrPartition, None),
            Some(n) if count <= n => (
                ErrorCode::InvalidPartitions,
                Some(format!(
                    "topic has {n} partitions; the new count must be larger"
                )),
            ),
            Some(_) if !limits.partitions_per_topic_allow(count) => (
                ErrorCode::InvalidPartitions,
                Some(format!(
                    "a topic has at most {} partitions",
                    limits.partitions_per_topic_max
                )),
            ),
            Some(n) if !limits.partitions_allow(cluster_partitions, (count - n) as u64) => (
                ErrorCode::PolicyViolation,
                Some(format!(
                    "the cluster has {cluster_partitions} partitions and holds at most {}",
                    limits.partitions_max
                )),
            ),
            Some(_) if request.validate_only => (ErrorCode::None, None),
            Some(n) if !mutations.admit((count - n) as u64) => (
                ErrorCode::ThrottlingQuotaExceeded,
                Some(THROTTLED_MESSAGE.to_string()),
            ),
            Some(_) => {
                let grown = broker
                    .metadata
                    .write(state::CreatePartitions {
                        name: topic.name.clone(),
                        total: topic.count,
                    })
                    .await;
                (topic_change(grown), None)
            }
        };
        results.push(CreatePartitionsTopicResult {
            name: topic.name.clone(),
            error_code: code.code(),
            error_message: message,
            ..Default::default()
        });
    }
    CreatePartitionsResponse {
        results,
        ..Default::default()
    }
}
