//! AlterUserScramCredentials (key 51): sets or deletes users' salted SCRAM credentials in the
//! replicated state (KIP-554). The client salts the password; the broker keeps only the stored
//! and server keys derived from it, never the password. It needs Cluster ALTER.
//!
//! As in Kafka, results are per user (sorted, each user once): a user named twice for one
//! mechanism gets DUPLICATE_RESOURCE, an unknown mechanism UNSUPPORTED_SASL_MECHANISM, an
//! empty name or an iteration count out of range UNACCEPTABLE_CREDENTIAL, and a deletion of
//! a credential that does not exist RESOURCE_NOT_FOUND; a user with an error has none of its
//! changes applied.

use crate::metadata::state::AlterScramCredentials;
use crate::metadata::state::security::{ScramChange, ScramStateError};
use crate::protocol::ApiKey;
use crate::protocol::ErrorCode;
use crate::protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use crate::protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};
use crate::security::acl::Operation;
use crate::security::scram::{ScramCredential, ScramMechanism};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Acl, Authorized, Gate, Needs};
use crate::server::broker::Broker;
use crate::server::error_codes::{self, Role};
use std::collections::{BTreeMap, BTreeSet};

pub struct AlterUserScramCredentials;

impl Api for AlterUserScramCredentials {
    type Request = AlterUserScramCredentialsRequest;
    type Response = AlterUserScramCredentialsResponse;
    const KEY: ApiKey = ApiKey::AlterUserScramCredentials;
    const VERSIONS: (i16, i16) = (0, 0);
    const NEEDS: Needs = Needs::Acls(&[Acl::CLUSTER_ALTER]);

    fn coordinator(_: &AlterUserScramCredentialsRequest) -> Option<&str> {
        None
    }

    fn authorize(
        gate: &Gate<'_>,
        request: &mut AlterUserScramCredentialsRequest,
        version: i16,
    ) -> Authorized<AlterUserScramCredentialsResponse> {
        // Refused, each user is answered once, in name order (Kafka's getErrorResponse).
        let allowed = gate.on_cluster(Operation::Alter);
        Authorized::run_or_refuse(
            allowed,
            request,
            version,
            ErrorCode::ClusterAuthorizationFailed,
        )
    }

    async fn handle(
        ctx: Ctx<'_>,
        request: AlterUserScramCredentialsRequest,
    ) -> Reply<AlterUserScramCredentialsResponse> {
        Reply::Now(handle(ctx.broker, request).await)
    }
}

type Refusal = (ErrorCode, String);

/// What one user's part of the request asks, or why it is refused (pure).
fn validate(
    request: &AlterUserScramCredentialsRequest,
) -> BTreeMap<String, Result<Vec<ScramChange>, Refusal>> {
    let mut users: BTreeMap<String, Result<Vec<ScramChange>, Refusal>> = BTreeMap::new();
    let mut seen: BTreeSet<(String, i8)> = BTreeSet::new();
    let mut add = |user: &str, mechanism: i8, change: Result<ScramChange, Refusal>| {
        let entry = users.entry(user.to_string()).or_insert(Ok(Vec::new()));
        let Ok(changes) = entry else { return };
        let change = if !seen.insert((user.to_string(), mechanism)) {
            Err((
                ErrorCode::DuplicateResource,
                "A user credential cannot be altered twice in the same request".into(),
            ))
        } else {
            change
        };
        match change {
            Ok(change) => changes.push(change),
            Err(refusal) => *entry = Err(refusal),
        }
    };
    let mechanism_of = |code: i8| {
        ScramMechanism::from_code(code).ok_or((
            ErrorCode::UnsupportedSaslMechanism,
            "Unknown SCRAM mechanism".to_string(),
        ))
    };
    let named = |user: &str| {
        if user.is_empty() {
            Err((
                ErrorCode::UnacceptableCredential,
                "Username must not be empty".to_string(),
            ))
        } else {
            Ok(())
        }
    };
    for deletion in &request.deletions {
        let change = named(&deletion.name).and_then(|()| {
            Ok(ScramChange::Delete {
                user: deletion.name.clone(),
                mechanism: mechanism_of(deletion.mechanism)?,
            })
        });
        add(&deletion.name, deletion.mechanism, change);
    }
    for upsertion in &request.upsertions {
        let change = named(&upsertion.name).and_then(|()| {
            let mechanism = mechanism_of(upsertion.mechanism)?;
            let iterations = u32::try_from(upsertion.iterations).unwrap_or(0);
            if iterations < mechanism.min_iterations() {
                return Err((ErrorCode::UnacceptableCredential, "Too few iterations".into()));
            }
            if !mechanism.accepts_iterations(iterations) {
                return Err((ErrorCode::UnacceptableCredential, "Too many iterations".into()));
            }
            if upsertion.salt.is_empty() || upsertion.salted_password.len() != mechanism.output_len() {
                return Err((
                    ErrorCode::UnacceptableCredential,
                    "The salt must not be empty and the salted password must be the mechanism's hash length".into(),
                ));
            }
            Ok(ScramChange::Upsert {
                user: upsertion.name.clone(),
                mechanism,
                credential: ScramCredential::from_salted_password(
                    mechanism,
                    &upsertion.salted_password,
                    &upsertion.salt,
                    iterations,
                ),
            })
        });
        add(&upsertion.name, upsertion.mechanism, change);
    }
    users
}

fn state_refusal(e: ScramStateError) -> Refusal {
    let code = match e {
        ScramStateError::NotFound => ErrorCode::ResourceNotFound,
        ScramStateError::BadUser | ScramStateError::Unacceptable => {
            ErrorCode::UnacceptableCredential
        }
        ScramStateError::TooMany => ErrorCode::PolicyViolation,
    };
    let message = match e {
        ScramStateError::NotFound => {
            "Attempt to delete a user credential that does not exist".to_string()
        }
        other => other.to_string(),
    };
    (code, message)
}

pub async fn handle(
    broker: &Broker,
    request: AlterUserScramCredentialsRequest,
) -> AlterUserScramCredentialsResponse {
    let users = validate(&request);
    let result = |user: &str, refusal: Option<&Refusal>| AlterUserScramCredentialsResult {
        user: user.to_string(),
        error_code: refusal.map_or(0, |r| r.0.code()),
        error_message: refusal.map(|r| r.1.clone()),
        ..Default::default()
    };
    // The accepted users' changes go in one command, in user order.
    let mut owners = Vec::new();
    let mut changes = Vec::new();
    for (user, asked) in &users {
        if let Ok(asked) = asked {
            for change in asked {
                owners.push(user.clone());
                changes.push(change.clone());
            }
        }
    }
    let mut applied: BTreeMap<String, Option<Refusal>> = BTreeMap::new();
    if !changes.is_empty() {
        match broker
            .metadata
            .write(AlterScramCredentials { changes })
            .await
        {
            Ok(outcomes) => {
                for (user, outcome) in owners.into_iter().zip(outcomes) {
                    let slot = applied.entry(user).or_insert(None);
                    if let (None, Err(e)) = (&slot, outcome) {
                        *slot = Some(state_refusal(e));
                    }
                }
            }
            Err(e) => {
                let code = error_codes::failed_write(&e, Role::Controller);
                for user in owners {
                    applied.insert(user, Some((code, format!("{code:?}"))));
                }
            }
        }
    }
    AlterUserScramCredentialsResponse {
        results: users
            .iter()
            .map(|(user, asked)| match asked {
                Err(refusal) => result(user, Some(refusal)),
                Ok(_) => result(user, applied.get(user).and_then(Option::as_ref)),
            })
            .collect(),
        ..Default::default()
    }
}
