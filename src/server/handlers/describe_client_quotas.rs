//! DescribeClientQuotas (key 48): the client quotas set on the entities a filter matches
//! (`quotas::filter`), from the replicated state. Versions 0–1.
//!
//! As Kafka: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED for the whole
//! request; a bad filter is answered with its error and no entries; an entity's default name
//! is null.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_client_quotas_response::{
    EntityData, EntryData, ValueData,
};
use crate::protocol::messages::{DescribeClientQuotasRequest, DescribeClientQuotasResponse};
use crate::quotas::filter::Filter;
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

pub struct DescribeClientQuotas;

impl Api for DescribeClientQuotas {
    type Request = DescribeClientQuotasRequest;
    type Response = DescribeClientQuotasResponse;
    const KEY: ApiKey = ApiKey::DescribeClientQuotas;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE_CONFIGS]);

    fn coordinator(_: &DescribeClientQuotasRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeClientQuotasRequest,
        version: i16,
    ) -> Authorized<DescribeClientQuotasResponse> {
        Authorized::run_or_refuse(
            gate.on_cluster(Operation::DescribeConfigs),
            request,
            version,
            ErrorCode::ClusterAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeClientQuotasRequest,
    ) -> Reply<DescribeClientQuotasResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeClientQuotasRequest,
) -> DescribeClientQuotasResponse {
    let components: Vec<(String, i8, Option<String>)> = request
        .components
        .iter()
        .map(|c| (c.entity_type.clone(), c.match_type, c.r#match.clone()))
        .collect();
    let filter = match Filter::parse(&components, request.strict) {
        Ok(filter) => filter,
        Err((code, message)) => {
            return DescribeClientQuotasResponse {
                error_code: code.code(),
                error_message: Some(message),
                entries: None,
                ..Default::default()
            };
        }
    };
    let entries = broker.metadata.read(|s| {
        s.client_quotas()
            .entities()
            .filter(|(entity, _)| filter.matches(entity))
            .map(|(entity, quotas)| EntryData {
                entity: entity
                    .0
                    .iter()
                    .map(|(ty, name)| EntityData {
                        entity_type: ty.name().into(),
                        entity_name: name.clone(),
                        ..Default::default()
                    })
                    .collect(),
                values: quotas
                    .iter()
                    .map(|(key, value)| ValueData {
                        key: key.clone(),
                        value: value.0,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect()
    });
    DescribeClientQuotasResponse {
        entries: Some(entries),
        ..Default::default()
    }
}
