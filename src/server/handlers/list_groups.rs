//! ListGroups (key 16): the live groups this agent coordinates, filtered by state and type.

use crate::protocol::messages::ListGroupsRequest;
use crate::protocol::messages::ListGroupsResponse;
use crate::protocol::messages::list_groups_response::ListedGroup;
use crate::server::broker::Broker;

pub fn handle(broker: &Broker, request: ListGroupsRequest) -> ListGroupsResponse {
    let wanted_state = |s: &str| {
        request.states_filter.is_empty()
            || request
                .states_filter
                .iter()
                .any(|f| f.eq_ignore_ascii_case(s))
    };
    let wanted_type = |t: &str| {
        request.types_filter.is_empty()
            || request
                .types_filter
                .iter()
                .any(|f| f.eq_ignore_ascii_case(t))
    };
    let groups = broker
        .groups
        .list()
        .into_iter()
        .filter(|g| wanted_state(g.state) && wanted_type(g.group_type))
        .map(|g| ListedGroup {
            group_id: g.id,
            protocol_type: g.protocol_type,
            group_state: g.state.into(),
            group_type: g.group_type.into(),
            ..Default::default()
        })
        .collect();
    ListGroupsResponse {
        groups,
        ..Default::default()
    }
}
