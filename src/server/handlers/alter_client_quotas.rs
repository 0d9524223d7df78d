//! AlterClientQuotas (key 49): sets and removes client quotas in the replicated state, entity
//! by entity (`quotas::alter` checks each as Kafka's controller does). Versions 0–1.
//!
//! As Kafka: ALTER_CONFIGS on the cluster, else every entry is CLUSTER_AUTHORIZATION_FAILED;
//! each entry is answered on its own (INVALID_REQUEST with Kafka's message when its entity or
//! an operation is refused, nothing of it applied), echoing its entity; `validate_only`
//! checks without writing. An entity named again in one request is refused the second time.

use crate::metadata::state::AlterClientQuotas as AlterCommand;
use crate::metadata::state::client_quotas::{ClientQuotaError, QUOTA_ENTITIES_MAX};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::alter_client_quotas_response::{EntityData, EntryData};
use crate::protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};
use crate::quotas::alter;
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{Role, failed_write};

pub struct AlterClientQuotas;

impl Api for AlterClientQuotas {
    type Request = AlterClientQuotasRequest;
    type Response = AlterClientQuotasResponse;
    const KEY: ApiKey = ApiKey::AlterClientQuotas;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_ALTER_CONFIGS]);

    fn coordinator(_: &AlterClientQuotasRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut AlterClientQuotasRequest,
        version: i16,
    ) -> Authorized<AlterClientQuotasResponse> {
        Authorized::run_or_refuse(
            gate.on_cluster(Operation::AlterConfigs),
            request,
            version,
            ErrorCode::ClusterAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: AlterClientQuotasRequest,
    ) -> Reply<AlterClientQuotasResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

pub async fn handle(
    broker: &Broker,
    request: AlterClientQuotasRequest,
) -> AlterClientQuotasResponse {
    let mut answers: Vec<EntryData> = Vec::with_capacity(request.entries.len());
    // The entries to write, and where each one's answer is.
    let mut command = AlterCommand {
        entries: Vec::new(),
    };
    let mut slots = Vec::new();
    for entry in &request.entries {
        let echo: Vec<EntityData> = entry
            .entity
            .iter()
            .map(|e| EntityData {
                entity_type: e.entity_type.clone(),
                entity_name: e.entity_name.clone(),
                ..Default::default()
            })
            .collect();
        let parts: Vec<(String, Option<String>)> = entry
            .entity
            .iter()
            .map(|e| (e.entity_type.clone(), e.entity_name.clone()))
            .collect();
        let ops: Vec<(String, f64, bool)> = entry
            .ops
            .iter()
            .map(|o| (o.key.clone(), o.value, o.remove))
            .collect();
        let checked = alter::entity(&parts).and_then(|entity| {
            if command.entries.iter().any(|(e, _)| *e == entity) {
                return Err("Ignoring duplicate entity".to_string());
            }
            Ok((entity.clone(), alter::changes(&entity, &ops)?))
        });
        let (code, message) = match checked {
            Ok(change) => {
                slots.push(answers.len());
                command.entries.push(change);
                (ErrorCode::None, None)
            }
            Err(message) => (ErrorCode::InvalidRequest, Some(message)),
        };
        answers.push(EntryData {
            error_code: code.code(),
            error_message: message,
            entity: echo,
            ..Default::default()
        });
    }
    if request.validate_only || command.entries.is_empty() {
        return AlterClientQuotasResponse {
            entries: answers,
            ..Default::default()
        };
    }
    match broker.metadata.write(command).await {
        Ok(results) => {
            for (slot, result) in slots.into_iter().zip(results) {
                if let Err(ClientQuotaError::OutOfBounds) = result {
                    let answer = &mut answers[slot];
                    answer.error_code = ErrorCode::PolicyViolation.code();
                    answer.error_message = Some(format!(
                        "at most {QUOTA_ENTITIES_MAX} entities with quotas, names of at most \
                         255 bytes"
                    ));
                }
            }
        }
        Err(e) => {
            let code = failed_write(&e, Role::Controller);
            for slot in slots {
                answers[slot].error_code = code.code();
                answers[slot].error_message = Some("the quotas were not written".into());
            }
        }
    }
    AlterClientQuotasResponse {
        entries: answers,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::DescribeClientQuotasRequest;
    use crate::protocol::messages::alter_client_quotas_request::{
        EntityData as Part, EntryData as Entry, OpData,
    };
    use crate::protocol::messages::describe_client_quotas_request::ComponentData;
    use crate::server::handlers::describe_client_quotas::DescribeClientQuotas;
    use crate::server::handlers::testing::TestNode;

    fn entry(parts: &[(&str, Option<&str>)], ops: &[(&str, f64, bool)]) -> Entry {
        Entry {
            entity: parts
                .iter()
                .map(|(t, n)| Part {
                    entity_type: t.to_string(),
                    entity_name: n.map(str::to_string),
                    ..Default::default()
                })
                .collect(),
            ops: ops
                .iter()
                .map(|(k, v, remove)| OpData {
                    key: k.to_string(),
                    value: *v,
                    remove: *remove,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn alter(entries: Vec<Entry>, validate_only: bool) -> AlterClientQuotasRequest {
        AlterClientQuotasRequest {
            entries,
            validate_only,
            ..Default::default()
        }
    }

    /// (entity as "type=name" pairs, values) of what a filter matches.
    async fn described(
        node: &TestNode,
        components: &[(&str, i8, Option<&str>)],
        strict: bool,
    ) -> Vec<(Vec<String>, Vec<(String, f64)>)> {
        let request = DescribeClientQuotasRequest {
            components: components
                .iter()
                .map(|(t, m, n)| ComponentData {
                    entity_type: t.to_string(),
                    match_type: *m,
                    r#match: n.map(str::to_string),
                    ..Default::default()
                })
                .collect(),
            strict,
            ..Default::default()
        };
        let response = node.call::<DescribeClientQuotas>(&request, 1).await;
        assert_eq!(response.error_code, 0, "{response:?}");
        response
            .entries
            .unwrap_or_default()
            .into_iter()
            .map(|e| {
                let entity = e
                    .entity
                    .iter()
                    .map(|p| {
                        format!(
                            "{}={}",
                            p.entity_type,
                            p.entity_name.as_deref().unwrap_or("<default>")
                        )
                    })
                    .collect();
                let values = e.values.into_iter().map(|v| (v.key, v.value)).collect();
                (entity, values)
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn quotas_are_set_described_and_removed_entity_by_entity() {
        let node = TestNode::start().await;
        let entries = vec![
            entry(
                &[("user", Some("alice"))],
                &[("producer_byte_rate", 1024.0, false)],
            ),
            entry(
                &[("client-id", None)],
                &[("consumer_byte_rate", 2048.0, false)],
            ),
            entry(
                &[("ip", Some("10.0.0"))],
                &[("connection_creation_rate", 5.0, false)],
            ),
            entry(
                &[("user", Some("alice"))],
                &[("request_percentage", 10.0, false)],
            ),
        ];
        let answered = node
            .call::<AlterClientQuotas>(&alter(entries, false), 1)
            .await;
        let codes: Vec<i16> = answered.entries.iter().map(|e| e.error_code).collect();
        let invalid = ErrorCode::InvalidRequest.code();
        // The bad ip and the second alice are refused; each answer echoes its entity.
        assert_eq!(codes, vec![0, 0, invalid, invalid], "{answered:?}");
        assert_eq!(answered.entries[1].entity[0].entity_name, None);
        let expected = |entity: &str, key: &str, value: f64| {
            (vec![entity.to_string()], vec![(key.to_string(), value)])
        };
        assert_eq!(
            described(&node, &[], false).await,
            vec![
                expected("user=alice", "producer_byte_rate", 1024.0),
                expected("client-id=<default>", "consumer_byte_rate", 2048.0),
            ]
        );
        assert_eq!(
            described(&node, &[("client-id", 1, None)], true)
                .await
                .len(),
            1
        );
        assert!(
            described(&node, &[("user", 0, Some("bob"))], false)
                .await
                .is_empty()
        );

        // Checked, not written.
        let bob = vec![entry(
            &[("user", Some("bob"))],
            &[("producer_byte_rate", 1.0, false)],
        )];
        let checked = node.call::<AlterClientQuotas>(&alter(bob, true), 1).await;
        assert_eq!(checked.entries[0].error_code, 0);
        assert!(
            described(&node, &[("user", 0, Some("bob"))], false)
                .await
                .is_empty()
        );

        // Removed: alice has no quotas left and is gone.
        let remove = vec![entry(
            &[("user", Some("alice"))],
            &[("producer_byte_rate", 0.0, true)],
        )];
        node.call::<AlterClientQuotas>(&alter(remove, false), 1)
            .await;
        assert!(
            described(&node, &[("user", 2, None)], false)
                .await
                .is_empty()
        );
        node.stop().await;
    }
}
