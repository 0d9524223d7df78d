//! OffsetDelete (key 47): forgets some of a group's committed offsets. In a KIP-848 group
//! with members, as in Kafka, offsets of topics the group subscribes to stay
//! (GROUP_SUBSCRIBED_TO_TOPIC) and the others go. A classic group must be empty (Kafka reads
//! subscriptions out of the members' protocol metadata; floe does not).

use crate::groups::consumer::TopicImage;
use crate::groups::coordinator::ClassicSubscriptions;
use crate::metadata::state::DeleteGroupOffsets;
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::OffsetDeleteRequest;
use crate::protocol::messages::OffsetDeleteResponse;
use crate::protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};
use std::collections::BTreeSet;

pub struct OffsetDelete;

impl Api for OffsetDelete {
    type Request = OffsetDeleteRequest;
    type Response = OffsetDeleteResponse;
    const KEY: ApiKey = ApiKey::OffsetDelete;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::GROUP_DELETE]);

    fn coordinator(request: &OffsetDeleteRequest) -> Option<&str> {
        Some(&request.group_id)
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut OffsetDeleteRequest,
        version: i16,
    ) -> Authorized<OffsetDeleteResponse> {
        let allowed = gate.allowed(Acl::GROUP_DELETE, &request.group_id);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::GroupAuthorizationFailed,
        )
    }

    async fn handle(ctx: Ctx<'_>, request: OffsetDeleteRequest) -> Reply<OffsetDeleteResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(broker: &Broker, request: OffsetDeleteRequest) -> OffsetDeleteResponse {
    let refuse = |code: ErrorCode| OffsetDeleteResponse {
        error_code: code.code(),
        ..Default::default()
    };
    if !broker.coordinates(&request.group_id) {
        return refuse(ErrorCode::NotCoordinator);
    }
    // A live classic group keeps the offsets of the topics its members subscribe to (Kafka:
    // GROUP_SUBSCRIBED_TO_TOPIC); one whose members do not speak the consumer protocol keeps
    // them all.
    let mut keep_all = false;
    let classic_topics = match broker.groups.classic_subscriptions(&request.group_id) {
        ClassicSubscriptions::NotConsumer => return refuse(ErrorCode::NonEmptyGroup),
        ClassicSubscriptions::Topics(topics) => topics,
        ClassicSubscriptions::Everything => {
            keep_all = true;
            BTreeSet::new()
        }
        ClassicSubscriptions::NotLive => BTreeSet::new(),
    };
    let known = broker
        .metadata
        .read(|s| s.groups().any(|g| g == request.group_id));
    if !known {
        return refuse(ErrorCode::GroupIdNotFound);
    }
    let subscribed: BTreeSet<String> = {
        let ids = broker.groups.subscribed_topic_ids(&request.group_id);
        broker
            .metadata
            .read(|state| {
                ids.iter()
                    .filter_map(|id| state.name_of(id))
                    .collect::<BTreeSet<_>>()
            })
            .into_iter()
            .chain(classic_topics)
            .chain(
                keep_all
                    .then(|| request.topics.iter().map(|t| t.name.clone()))
                    .into_iter()
                    .flatten(),
            )
            .collect()
    };
    let partitions: Vec<(String, i32)> = request
        .topics
        .iter()
        .filter(|t| !subscribed.contains(&t.name))
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.clone(), p.partition_index))
        })
        .collect();
    let code = match broker
        .metadata
        .write(DeleteGroupOffsets {
            group: request.group_id.clone(),
            partitions: Some(partitions),
        })
        .await
    {
        // Deleting offsets a group never had is no error.
        Ok(_had_offsets) => ErrorCode::None,
        Err(e) => return refuse(failed_write(&e, Role::Coordinator)),
    };
    OffsetDeleteResponse {
        topics: request
            .topics
            .iter()
            .map(|t| OffsetDeleteResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| OffsetDeleteResponsePartition {
                        partition_index: p.partition_index,
                        error_code: if subscribed.contains(&t.name) {
                            ErrorCode::GroupSubscribedToTopic.code()
                        } else {
                            code.code()
                        },
                    })
                    .collect(),
            })
            .collect(),
        ..Default::default()
    }
}
