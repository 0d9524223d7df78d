//! DescribeTransactions (key 65): each transactional id's state, producer, timeout and the
//! partitions of its open transaction, from this agent's copy of the replicated state.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_transactions_response::{TopicData, TransactionState};
use crate::protocol::messages::{DescribeTransactionsRequest, DescribeTransactionsResponse};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

pub struct DescribeTransactions;

impl Api for DescribeTransactions {
    type Request = DescribeTransactionsRequest;
    type Response = DescribeTransactionsResponse;
    const KEY: ApiKey = ApiKey::DescribeTransactions;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE]);

    fn coordinator(_: &DescribeTransactionsRequest) -> Option<&str> {
        None
    }

    /// Without Cluster DESCRIBE every id is answered with 53.
    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeTransactionsRequest,
        version: i16,
    ) -> Authorized<DescribeTransactionsResponse> {
        let allowed = gate.on_cluster(Operation::Describe);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::TransactionalIdAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: DescribeTransactionsRequest,
    ) -> Reply<DescribeTransactionsResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeTransactionsRequest,
) -> DescribeTransactionsResponse {
    let transaction_states = broker.metadata.read(|s| {
        request
            .transactional_ids
            .iter()
            .map(|id| {
                let mut out = TransactionState {
                    transactional_id: id.clone(),
                    transaction_start_time_ms: -1,
                    producer_id: -1,
                    producer_epoch: -1,
                    ..Default::default()
                };
                let Some(t) = s.transactions().get(id).filter(|_| !id.is_empty()) else {
                    out.error_code = if id.is_empty() {
                        ErrorCode::InvalidRequest
                    } else {
                        ErrorCode::TransactionalIdNotFound
                    }
                    .code();
                    return out;
                };
                out.transaction_state = t.status.name().to_string();
                out.transaction_timeout_ms = i32::try_from(t.timeout_ms).unwrap_or(i32::MAX);
                out.producer_id = t.producer_id.0;
                out.producer_epoch = t.producer_epoch.0;
                if t.status == crate::metadata::state::TxnStatus::Ongoing {
                    out.transaction_start_time_ms = t.started_ms;
                }
                for tp in &t.partitions {
                    let Some(topic) = s.topic_by_id(&tp.topic_id) else {
                        continue;
                    };
                    match out.topics.iter_mut().find(|d| d.topic == topic.name) {
                        Some(d) => d.partitions.push(tp.partition),
                        None => out.topics.push(TopicData {
                            topic: topic.name.clone(),
                            partitions: vec![tp.partition],
                            ..Default::default()
                        }),
                    }
                }
                out
            })
            .collect()
    });
    DescribeTransactionsResponse {
        transaction_states,
        ..Default::default()
    }
}
