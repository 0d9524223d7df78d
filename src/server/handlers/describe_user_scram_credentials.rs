//! DescribeUserScramCredentials (key 50): which users have SCRAM credentials in the replicated
//! state (KIP-554), with each one's mechanisms and iteration counts, never the keys. It needs
//! Cluster DESCRIBE.
//!
//! As in Kafka, a user named twice gets DUPLICATE_RESOURCE (answered once), a user without
//! credentials RESOURCE_NOT_FOUND; a null or empty list describes every user with credentials.

use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResult,
};
use crate::protocol::messages::{
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use crate::security::acl::Operation;
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use std::collections::{BTreeMap, BTreeSet};

pub struct DescribeUserScramCredentials;

impl Api for DescribeUserScramCredentials {
    type Request = DescribeUserScramCredentialsRequest;
    type Response = DescribeUserScramCredentialsResponse;
    const KEY: ApiKey = ApiKey::DescribeUserScramCredentials;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_DESCRIBE]);

    fn coordinator(_: &DescribeUserScramCredentialsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut DescribeUserScramCredentialsRequest,
        version: i16,
    ) -> Authorized<DescribeUserScramCredentialsResponse> {
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
        request: DescribeUserScramCredentialsRequest,
    ) -> Reply<DescribeUserScramCredentialsResponse> {
        Reply::Now(handle(ctx.broker, request))
    }
}

pub fn handle(
    broker: &Broker,
    request: DescribeUserScramCredentialsRequest,
) -> DescribeUserScramCredentialsResponse {
    let held: BTreeMap<String, Vec<CredentialInfo>> = broker.metadata.read(|s| {
        let mut held: BTreeMap<String, Vec<CredentialInfo>> = BTreeMap::new();
        for (user, mechanism, iterations) in s.security().scram_users() {
            held.entry(user.to_string())
                .or_default()
                .push(CredentialInfo {
                    mechanism: mechanism.code(),
                    iterations: i32::try_from(iterations).unwrap_or(i32::MAX),
                    ..Default::default()
                });
        }
        held
    });
    let results = match request.users {
        // Null or empty: every user with credentials.
        None => held
            .into_iter()
            .map(
                |(user, credential_infos)| DescribeUserScramCredentialsResult {
                    user,
                    credential_infos,
                    ..Default::default()
                },
            )
            .collect(),
        Some(users) if users.is_empty() => held
            .into_iter()
            .map(
                |(user, credential_infos)| DescribeUserScramCredentialsResult {
                    user,
                    credential_infos,
                    ..Default::default()
                },
            )
            .collect(),
        Some(users) => {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for u in &users {
                *counts.entry(u.name.as_str()).or_default() += 1;
            }
            let mut done = BTreeSet::new();
            users
                .iter()
                .filter(|u| done.insert(u.name.clone()))
                .map(|u| {
                    let (code, message) = if counts.get(u.name.as_str()).copied().unwrap_or(0) > 1 {
                        (ErrorCode::DuplicateResource, Some(format!("Cannot describe SCRAM credentials for the same user twice in a single request: {}", u.name)))
                    } else if !held.contains_key(&u.name) {
                        (ErrorCode::ResourceNotFound, Some(format!("Attempt to describe a user credential that does not exist: {}", u.name)))
                    } else {
                        (ErrorCode::None, None)
                    };
                    DescribeUserScramCredentialsResult {
                        user: u.name.clone(),
                        error_code: code.code(),
                        error_message: message,
                        credential_infos: if code == ErrorCode::None {
                            held.get(&u.name).cloned().unwrap_or_default()
                        } else {
                            Vec::new()
                        },
                        ..Default::default()
                    }
                })
                .collect()
        }
    };
    DescribeUserScramCredentialsResponse {
        results,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::AlterUserScramCredentialsRequest;
    use crate::protocol::messages::alter_user_scram_credentials_request::{
        ScramCredentialDeletion, ScramCredentialUpsertion,
    };
    use crate::protocol::messages::describe_user_scram_credentials_request::UserName;
    use crate::server::handlers::alter_user_scram_credentials::AlterUserScramCredentials;
    use crate::server::handlers::testing::TestNode;

    const SHA_512: i8 = 2;

    fn describing(user: &str) -> DescribeUserScramCredentialsRequest {
        DescribeUserScramCredentialsRequest {
            users: Some(vec![UserName {
                name: user.into(),
                ..Default::default()
            }]),
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_user_whose_last_credential_is_deleted_is_not_found() {
        let node = TestNode::start().await;
        let upsert = AlterUserScramCredentialsRequest {
            upsertions: vec![ScramCredentialUpsertion {
                name: "alice".into(),
                mechanism: SHA_512,
                iterations: 8192,
                salt: bytes::Bytes::from_static(b"salt-salt-salt"),
                salted_password: bytes::Bytes::from(vec![7u8; 64]),
                ..Default::default()
            }],
            ..Default::default()
        };
        let altered = node.call::<AlterUserScramCredentials>(&upsert, 0).await;
        assert_eq!(altered.results[0].error_code, 0, "{altered:?}");
        let described = node
            .call::<DescribeUserScramCredentials>(&describing("alice"), 0)
            .await;
        let result = &described.results[0];
        assert_eq!(result.error_code, 0, "{described:?}");
        assert_eq!(result.credential_infos[0].iterations, 8192);

        let delete = AlterUserScramCredentialsRequest {
            deletions: vec![ScramCredentialDeletion {
                name: "alice".into(),
                mechanism: SHA_512,
                ..Default::default()
            }],
            ..Default::default()
        };
        let deleted = node.call::<AlterUserScramCredentials>(&delete, 0).await;
        assert_eq!(deleted.results[0].error_code, 0, "{deleted:?}");
        let described = node
            .call::<DescribeUserScramCredentials>(&describing("alice"), 0)
            .await;
        assert_eq!(
            described.results[0].error_code,
            ErrorCode::ResourceNotFound.code(),
            "{described:?}"
        );
        node.stop().await;
    }
}
