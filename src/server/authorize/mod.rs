//! ACL enforcement around the handlers, Kafka's way (KafkaApis): before a handler runs, the
//! parts of a request the client may not touch are taken out (or the whole request is
//! answered with the authorization error, in the shape Kafka's generated `getErrorResponse`
//! gives it: [`Authorized::refuse`]); after it runs, the parts taken out are put back into
//! the response with their error ([`Authorized::restoring_items`]), and what the client may
//! not describe is hidden from listings.
//!
//! Each API declares what it needs (`Api::NEEDS`, as data) and how it refuses
//! (`Api::authorize`) in its own file under `handlers/`; `api::serve` runs them around every
//! handler. An API checks ACLs through a [`Gate`], which denies any ACL the API did not
//! declare, so the declarations are what is enforced. `floe_authorization_denied_total`
//! counts each denial once.
//!
//! Where floe is coarser than Kafka: the APIs that name several topics or groups to describe
//! or alter (configs, CreatePartitions, DeleteRecords, DescribeProducers,
//! OffsetForLeaderEpoch, DescribeTopicPartitions, ConsumerGroupDescribe) are refused whole
//! when any item is denied ([`all_or_refuse`]), where Kafka answers item by item.

pub mod access;
mod gate;
mod needs;
pub mod operations;
pub use gate::Gate;
pub use needs::{Acl, Needs};

use crate::protocol::ErrorCode;
use crate::protocol::error_response::{ErrorResponse, ItemErrors};

/// What authorization decided before a handler runs.
pub enum Authorized<R> {
    /// Run the handler on what is left of the request; then put back what was refused.
    Run(Refused<R>),
    /// Answer this (the request refused whole, in its own shape) instead.
    Answer(R),
}

impl<R> Authorized<R> {
    /// Run the handler on the whole request.
    pub fn run() -> Self {
        Authorized::Run(Refused::default())
    }

    /// Run the handler when `allowed`; else answer the whole request with `error`, in the
    /// shape Kafka's broker answers it (`getErrorResponse`, generated).
    pub fn run_or_refuse<Q>(allowed: bool, request: &Q, version: i16, error: ErrorCode) -> Self
    where
        Q: ErrorResponse<Response = R>,
    {
        match allowed {
            true => Authorized::run(),
            false => Authorized::refuse(request, version, error),
        }
    }

    /// Answer the whole request with `error`, in Kafka's shape.
    pub fn refuse<Q>(request: &Q, version: i16, error: ErrorCode) -> Self
    where
        Q: ErrorResponse<Response = R>,
    {
        Authorized::Answer(request.error_response(version, error))
    }

    /// Run the handler on what is left of the request, then answer each item of `refused`
    /// (the part taken out) with `error`, beside the handler's answer.
    pub fn restoring_items<Q>(refused: Q, version: i16, error: ErrorCode) -> Self
    where
        Q: ItemErrors<Response = R> + Send + 'static,
    {
        Authorized::restoring(move |_, response| {
            Q::append_items(response, refused.item_errors(version, error))
        })
    }

    /// Run the handler, then `restore` the refused parts into its response.
    pub fn restoring(restore: impl FnOnce(&Gate<'_>, &mut R) + Send + 'static) -> Self {
        Authorized::Run(Refused(Some(Box::new(restore))))
    }
}

/// How the parts of a request taken out before its handler ran go back into the response
/// (with their error), and how a listing hides what the client may not see.
pub struct Refused<R>(Option<Restore<R>>);

type Restore<R> = Box<dyn FnOnce(&Gate<'_>, &mut R) + Send>;

impl<R> Default for Refused<R> {
    fn default() -> Self {
        Refused(None)
    }
}

impl<R> Refused<R> {
    pub fn restore(self, gate: &Gate<'_>, response: &mut R) {
        if let Some(restore) = self.0 {
            restore(gate, response);
        }
    }
}

/// The refusal of a request that adds to a transaction's offsets (AddOffsetsToTxn,
/// TxnOffsetCommit): the transactional id WRITE first, and only then the group READ.
pub fn transactional_offsets_refusal(
    gate: &Gate<'_>,
    transactional_id: &str,
    group: &str,
) -> Option<ErrorCode> {
    if !gate.allowed(Acl::TXN_WRITE, transactional_id) {
        Some(ErrorCode::TransactionalIdAuthorizationFailed)
    } else if !gate.allowed(Acl::GROUP_READ, group) {
        Some(ErrorCode::GroupAuthorizationFailed)
    } else {
        None
    }
}

/// Takes out of `items` those `keep` refuses, in order, and returns them.
pub fn take_refused<T>(items: &mut Vec<T>, mut keep: impl FnMut(&T) -> bool) -> Vec<T> {
    let (kept, refused) = std::mem::take(items).into_iter().partition(|t| keep(t));
    *items = kept;
    refused
}

/// floe's coarse rule for the APIs that name several resources of one kind: when any of
/// them is denied, the whole request is answered with `error` (Kafka answers item by item).
pub fn all_or_refuse<'n, Q: ErrorResponse>(
    gate: &Gate<'_>,
    acl: Acl,
    mut names: impl Iterator<Item = &'n str>,
    request: &Q,
    version: i16,
    error: ErrorCode,
) -> Authorized<Q::Response> {
    let allowed = names.all(|name| gate.allowed(acl, name));
    Authorized::run_or_refuse(allowed, request, version, error)
}
