//! Which failure becomes which Kafka error code: the one mapping every handler uses for a
//! metadata write that did not complete, and for a state machine's refusal of a topic change.
//!
//! A failed write is retriable whatever went wrong; what the client should do next depends on
//! the role the request addressed, as in Kafka:
//!
//! | failure | `Role::Partition` (Produce) | `Role::Coordinator` (groups, InitProducerId) | `Role::Controller` (topics, configs) |
//! | --- | --- | --- | --- |
//! | no leader in time, not applied here in time, Raft failed on this node | `REQUEST_TIMED_OUT` | `COORDINATOR_NOT_AVAILABLE` | `REQUEST_TIMED_OUT` |
//! | larger than one Raft entry (`ENTRY_BYTES_MAX`) | `MESSAGE_TOO_LARGE` | `INVALID_REQUEST` | `INVALID_REQUEST` |
//! | the quorum answered another command's outcome (a bug) | `UNKNOWN_SERVER_ERROR` | `UNKNOWN_SERVER_ERROR` | `UNKNOWN_SERVER_ERROR` |

use crate::metadata::MetadataError;
use crate::metadata::quorum::WriteError;
use crate::metadata::state::{BatchOutcome, OffsetCommitError, TopicError, TxnError};
use crate::produce::ProduceError;
use crate::protocol::ErrorCode;
use crate::telemetry::ErrorChain;

/// The part a Kafka broker plays for a request, which decides how a client retries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The partition's leader (Produce): the client retries the same request.
    Partition,
    /// A group or transaction coordinator: the client looks the coordinator up again.
    Coordinator,
    /// The controller (topic and config changes): the admin client retries or reports.
    Controller,
}

/// A metadata write that did not complete, handled by a request's handler: logged here, once,
/// and answered with `metadata_error`'s code.
pub fn failed_write(error: &MetadataError, role: Role) -> ErrorCode {
    tracing::warn!(error = %ErrorChain(error), ?role, "metadata write failed");
    metadata_error(error, role)
}

/// The code for a metadata write that did not complete (the table above).
pub fn metadata_error(error: &MetadataError, role: Role) -> ErrorCode {
    match error {
        MetadataError::Write(
            WriteError::Unavailable { .. }
            | WriteError::NotApplied { .. }
            | WriteError::Failed(_)
            | WriteError::NotServed(_),
        ) => match role {
            Role::Partition | Role::Controller => ErrorCode::RequestTimedOut,
            Role::Coordinator => ErrorCode::CoordinatorNotAvailable,
        },
        // Offset commits are split to fit and objects are bounded by `object_bytes_max`, so
        // only a request with absurdly many changes gets here.
        MetadataError::Write(WriteError::TooLarge { .. }) => match role {
            Role::Partition => ErrorCode::MessageTooLarge,
            Role::Coordinator | Role::Controller => ErrorCode::InvalidRequest,
        },
        MetadataError::MismatchedOutcome { .. } => ErrorCode::UnknownServerError,
    }
}

/// The code for a batch the state machine did not append (`Appended` and `Duplicate` are
/// successes and answer NONE).
pub fn batch_refused(outcome: BatchOutcome) -> ErrorCode {
    match outcome {
        BatchOutcome::Appended { .. } | BatchOutcome::Duplicate { .. } => ErrorCode::None,
        BatchOutcome::UnknownTopicOrPartition => ErrorCode::UnknownTopicOrPartition,
        BatchOutcome::InvalidProducerEpoch => ErrorCode::InvalidProducerEpoch,
        BatchOutcome::OutOfOrderSequence => ErrorCode::OutOfOrderSequenceNumber,
        BatchOutcome::UnknownProducerId => ErrorCode::UnknownProducerId,
        BatchOutcome::Malformed => ErrorCode::CorruptMessage,
        BatchOutcome::InvalidTxnState => ErrorCode::InvalidTxnState,
    }
}

/// The code for a transactional command that answers nothing but success: NONE, the state
/// machine's refusal (`txn_refused`), or a write that did not complete (as a coordinator's).
pub fn txn_answer(
    result: Result<Result<(), TxnError>, MetadataError>,
    fenced_is_epoch: bool,
) -> ErrorCode {
    match result {
        Ok(Ok(())) => ErrorCode::None,
        Ok(Err(e)) => txn_refused(e, fenced_is_epoch),
        Err(e) => failed_write(&e, Role::Coordinator),
    }
}

/// The code for a transactional request the state machine refused. `fenced_is_epoch`: the
/// request's version predates PRODUCER_FENCED, and a fenced producer hears
/// INVALID_PRODUCER_EPOCH instead (Kafka's own down-conversion).
pub fn txn_refused(error: TxnError, fenced_is_epoch: bool) -> ErrorCode {
    match error {
        TxnError::InvalidProducerIdMapping => ErrorCode::InvalidProducerIdMapping,
        TxnError::ProducerFenced if fenced_is_epoch => ErrorCode::InvalidProducerEpoch,
        TxnError::ProducerFenced => ErrorCode::ProducerFenced,
        TxnError::InvalidTxnState => ErrorCode::InvalidTxnState,
        TxnError::InvalidTransactionalId => ErrorCode::InvalidRequest,
        TxnError::InvalidTransactionTimeout => ErrorCode::InvalidTransactionTimeout,
        // Retriable: an idle id expires and frees a place.
        TxnError::TooManyTransactions | TxnError::TooManyProducers => {
            ErrorCode::CoordinatorNotAvailable
        }
        // Not retriable: the client aborts the transaction.
        TxnError::TransactionTooLarge => ErrorCode::InvalidRequest,
        TxnError::UnknownTopicOrPartition => ErrorCode::UnknownTopicOrPartition,
        TxnError::OperationNotAttempted => ErrorCode::OperationNotAttempted,
        TxnError::InvalidGroupId => ErrorCode::InvalidGroupId,
        TxnError::OffsetMetadataTooLarge => ErrorCode::OffsetMetadataTooLarge,
    }
}

/// The code for a batch the produce pipeline could not confirm (a failed PUT committed
/// nothing; a timed-out commit may still land, and an idempotent retry is recognised).
/// Logged by the committer, once per object.
pub fn produce_error(error: &ProduceError) -> ErrorCode {
    match error {
        ProduceError::Storage(_) => ErrorCode::KafkaStorageError,
        ProduceError::Metadata(e) => metadata_error(e, Role::Partition),
        ProduceError::ShuttingDown => ErrorCode::RequestTimedOut,
    }
}

/// The code for the state machine's refusal of a topic change.
pub fn topic_error(error: TopicError) -> ErrorCode {
    match error {
        TopicError::AlreadyExists => ErrorCode::TopicAlreadyExists,
        TopicError::NotFound => ErrorCode::UnknownTopicOrPartition,
        TopicError::InvalidPartitions => ErrorCode::InvalidPartitions,
        TopicError::InvalidName => ErrorCode::InvalidTopicException,
        TopicError::TooManyPartitions => ErrorCode::PolicyViolation,
        TopicError::InvalidConfig => ErrorCode::InvalidConfig,
    }
}

/// The code for the state machine's refusal of an offset commit.
pub fn offset_commit_error(error: OffsetCommitError) -> ErrorCode {
    match error {
        OffsetCommitError::UnknownTopicOrPartition => ErrorCode::UnknownTopicOrPartition,
        OffsetCommitError::InvalidGroupId => ErrorCode::InvalidGroupId,
        OffsetCommitError::MetadataTooLarge => ErrorCode::OffsetMetadataTooLarge,
        // Kafka has no code for a full offsets store; the client retries later.
        OffsetCommitError::TooManyGroups => ErrorCode::CoordinatorNotAvailable,
    }
}

/// `Ok(())` → NONE; a refusal or a failed write → its code.
pub fn topic_change(result: Result<Result<(), TopicError>, MetadataError>) -> ErrorCode {
    match result {
        Ok(Ok(())) => ErrorCode::None,
        Ok(Err(e)) => topic_error(e),
        Err(e) => failed_write(&e, Role::Controller),
    }
}
