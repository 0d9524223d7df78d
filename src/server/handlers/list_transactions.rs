//! ListTransactions (key 66): the transactional ids, filtered by state, producer id, how long
//! their transaction has been open (v1) and an id pattern (v2, a regular expression Kafka
//! matches whole; floe matches it as a literal prefix or exact id, see below).

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::list_transactions_response::TransactionState;
use crate::protocol::messages::{ListTransactionsRequest, ListTransactionsResponse};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;

/// The state names `StateFilters` may hold (Kafka's; floe never rests in the others).
const STATES: &[&str] = &[
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "PrepareEpochFence",
];

pub struct ListTransactions;

impl Api for ListTransactions {
    type Request = ListTransactionsRequest;
    type Response = ListTransactionsResponse;
    const KEY: ApiKey = ApiKey::ListTransactions;
    const VERSIONS: (i16, i16) = (0, 2);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE]);

    fn coordinator(_: &ListTransactionsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut ListTransactionsRequest,
        version: i16,
    ) -> Authorized<ListTransactionsResponse> {
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
        request: ListTransactionsRequest,
    ) -> Reply<ListTransactionsResponse> {
        // The lists a client gathers from every broker and merges: an agent's other lanes
        // list nothing, since the client asks each of them as a broker of its own.
        if ctx.client.lane > 0 {
            return Reply::Now(Default::default());
        }
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(broker: &Broker, request: ListTransactionsRequest) -> ListTransactionsResponse {
    let unknown_state_filters: Vec<String> = request
        .state_filters
        .iter()
        .filter(|f| !STATES.contains(&f.as_str()))
        .cloned()
        .collect();
    let pattern = request.transactional_id_pattern.as_deref().unwrap_or("");
    let matches_pattern = |id: &str| match pattern.strip_suffix(".*") {
        _ if pattern.is_empty() => true,
        Some(prefix) if !has_regex_syntax(prefix) => id.starts_with(prefix),
        _ if !has_regex_syntax(pattern) => id == pattern,
        // A pattern floe cannot read lists nothing rather than everything.
        _ => false,
    };
    let transaction_states = broker.metadata.read(|s| {
        let now_ms = s.now_ms();
        s.transactions()
            .iter()
            .filter(|(_, t)| {
                request.state_filters.is_empty()
                    || request.state_filters.iter().any(|f| f == t.status.name())
            })
            .filter(|(_, t)| {
                request.producer_id_filters.is_empty()
                    || request.producer_id_filters.contains(&t.producer_id.0)
            })
            .filter(|(_, t)| {
                request.duration_filter < 0
                    || t.status == crate::metadata::state::TxnStatus::Ongoing
                        && now_ms.saturating_sub(t.started_ms) > request.duration_filter
            })
            .filter(|(id, _)| matches_pattern(id))
            .map(|(id, t)| TransactionState {
                transactional_id: id.clone(),
                producer_id: t.producer_id.0,
                transaction_state: t.status.name().to_string(),
                ..Default::default()
            })
            .collect()
    });
    ListTransactionsResponse {
        error_code: ErrorCode::None.code(),
        unknown_state_filters,
        transaction_states,
        ..Default::default()
    }
}

fn has_regex_syntax(s: &str) -> bool {
    s.chars().any(|c| "\\^$.|?*+()[]{}".contains(c))
}
