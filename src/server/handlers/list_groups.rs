//! ListGroups (key 16): the groups of the whole cluster, filtered by state and type.
//!
//! An agent lists the groups it coordinates: those live here, and those that only have
//! committed offsets in the replicated state (Kafka calls them "Empty"). Clients that see
//! every agent ask each and merge; behind a load balancer a client sees one broker, so the
//! agent it reached asks its siblings too (`siblings`). An agent's other lanes list nothing
//! (`ListGroups::handle` answers them).

use crate::placement;
use crate::protocol::ApiKey;
use crate::protocol::messages::list_groups_response::ListedGroup;
use crate::protocol::messages::{ListGroupsRequest, ListGroupsResponse, RequestBody};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::caller::Client;
use crate::server::siblings;
use std::collections::BTreeMap;

pub struct ListGroups;

impl Api for ListGroups {
    type Request = ListGroupsRequest;
    type Response = ListGroupsResponse;
    const KEY: ApiKey = ApiKey::ListGroups;
    const VERSIONS: (i16, i16) = (0, 5);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE, Acl::GROUP_DESCRIBE]);

    fn coordinator(_: &ListGroupsRequest) -> Option<&str> {
        None
    }

    /// A client that may not describe the cluster sees only the groups it may describe.
    fn authorize(
        gate: &Gate<'_>,
        _: &mut ListGroupsRequest,
        _: i16,
    ) -> Authorized<ListGroupsResponse> {
        if gate.on_cluster(Operation::Describe) {
            return Authorized::run();
        }
        Authorized::restoring(|gate, response: &mut ListGroupsResponse| {
            response
                .groups
                .retain(|g| gate.allowed_quietly(Acl::GROUP_DESCRIBE, &g.group_id));
        })
    }

    async fn handle(ctx: Ctx<'_>, request: ListGroupsRequest) -> Reply<ListGroupsResponse> {
        // The lists a client gathers from every broker and merges: an agent's other lanes
        // list nothing, since the client asks each of them as a broker of its own.
        if ctx.client.lane > 0 {
            return Reply::Now(Default::default());
        }
        Reply::Now(handle(ctx.broker, request, ctx.version, ctx.client).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: ListGroupsRequest,
    version: i16,
    client: Client<'_>,
) -> ListGroupsResponse {
    let mut groups: BTreeMap<String, ListedGroup> = coordinated_here(broker)
        .into_iter()
        .map(|g| (g.group_id.clone(), g))
        .collect();
    if !client.forwarded {
        let body = RequestBody::ListGroups(request.clone());
        let caller = client.caller();
        for answer in siblings::ask::<ListGroupsResponse>(broker, body, version, &caller).await {
            for group in answer.groups {
                groups.entry(group.group_id.clone()).or_insert(group);
            }
        }
    }
    let wanted = |filter: &[String], value: &str| {
        filter.is_empty() || filter.iter().any(|f| f.eq_ignore_ascii_case(value))
    };
    ListGroupsResponse {
        groups: groups
            .into_values()
            .filter(|g| {
                wanted(&request.states_filter, &g.group_state)
                    && wanted(&request.types_filter, &g.group_type)
            })
            .collect(),
        ..Default::default()
    }
}

/// The groups this agent answers for, unfiltered.
fn coordinated_here(broker: &Broker) -> Vec<ListedGroup> {
    let mut listed: BTreeMap<String, ListedGroup> = broker
        .groups
        .list()
        .into_iter()
        .map(|g| {
            let group = ListedGroup {
                group_id: g.id.clone(),
                protocol_type: g.protocol_type,
                group_state: g.state.into(),
                group_type: g.group_type.into(),
                ..Default::default()
            };
            (g.id, group)
        })
        .collect();
    let agents = broker.live_agents();
    let me = broker.node_id();
    let with_offsets: Vec<String> = broker.metadata.read(|state| {
        state
            .groups()
            .filter(|g| !listed.contains_key(*g))
            .filter(|g| placement::coordinator(&agents, g) == Some(me))
            .map(str::to_string)
            .collect()
    });
    // Share groups whose members all left keep their records' state: Empty, as Kafka lists
    // them.
    let shared: Vec<String> = broker.metadata.read(|state| {
        state
            .share()
            .groups()
            .into_iter()
            .filter(|g| !listed.contains_key(g))
            .filter(|g| placement::coordinator(&agents, g) == Some(me))
            .collect()
    });
    for id in shared {
        let group = ListedGroup {
            protocol_type: "share".into(),
            group_id: id.clone(),
            group_state: "Empty".into(),
            group_type: "share".into(),
            ..Default::default()
        };
        listed.insert(id, group);
    }
    for id in with_offsets {
        let group = ListedGroup {
            protocol_type: broker.groups.emptied_protocol_type(&id).unwrap_or_default(),
            group_id: id.clone(),
            group_state: "Empty".into(),
            group_type: "classic".into(),
            ..Default::default()
        };
        listed.insert(id, group);
    }
    listed.into_values().collect()
}
