//! Kafka error codes that floe returns (the subset it can produce, by name).

/// A Kafka protocol error code. Values are Kafka's; names follow Kafka's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ErrorCode {
    UnknownServerError = -1,
    None = 0,
    OffsetOutOfRange = 1,
    CorruptMessage = 2,
    UnknownTopicOrPartition = 3,
    InvalidFetchSize = 4,
    LeaderNotAvailable = 5,
    NotLeaderOrFollower = 6,
    RequestTimedOut = 7,
    MessageTooLarge = 10,
    OffsetMetadataTooLarge = 12,
    NetworkException = 13,
    CoordinatorLoadInProgress = 14,
    CoordinatorNotAvailable = 15,
    NotCoordinator = 16,
    InvalidTopicException = 17,
    RecordListTooLarge = 18,
    NotEnoughReplicas = 19,
    InvalidRequiredAcks = 21,
    IllegalGeneration = 22,
    InconsistentGroupProtocol = 23,
    InvalidGroupId = 24,
    UnknownMemberId = 25,
    InvalidSessionTimeout = 26,
    RebalanceInProgress = 27,
    InvalidCommitOffsetSize = 28,
    TopicAuthorizationFailed = 29,
    GroupAuthorizationFailed = 30,
    ClusterAuthorizationFailed = 31,
    InvalidTimestamp = 32,
    UnsupportedSaslMechanism = 33,
    IllegalSaslState = 34,
    UnsupportedVersion = 35,
    TopicAlreadyExists = 36,
    InvalidPartitions = 37,
    InvalidReplicationFactor = 38,
    InvalidReplicaAssignment = 39,
    InvalidConfig = 40,
    NotController = 41,
    InvalidRequest = 42,
    UnsupportedForMessageFormat = 43,
    PolicyViolation = 44,
    OutOfOrderSequenceNumber = 45,
    DuplicateSequenceNumber = 46,
    InvalidProducerEpoch = 47,
    InvalidTxnState = 48,
    InvalidProducerIdMapping = 49,
    InvalidTransactionTimeout = 50,
    ConcurrentTransactions = 51,
    TransactionCoordinatorFenced = 52,
    TransactionalIdAuthorizationFailed = 53,
    SecurityDisabled = 54,
    OperationNotAttempted = 55,
    KafkaStorageError = 56,
    SaslAuthenticationFailed = 58,
    UnknownProducerId = 59,
    NonEmptyGroup = 68,
    GroupIdNotFound = 69,
    FetchSessionIdNotFound = 70,
    InvalidFetchSessionEpoch = 71,
    FencedLeaderEpoch = 74,
    UnknownLeaderEpoch = 75,
    UnsupportedCompressionType = 76,
    OffsetNotAvailable = 78,
    MemberIdRequired = 79,
    GroupMaxSizeReached = 81,
    FencedInstanceId = 82,
    GroupSubscribedToTopic = 86,
    InvalidRecord = 87,
    UnstableOffsetCommit = 88,
    ThrottlingQuotaExceeded = 89,
    ProducerFenced = 90,
    ResourceNotFound = 91,
    DuplicateResource = 92,
    UnacceptableCredential = 93,
    UnknownTopicId = 100,
    InconsistentTopicId = 103,
    TransactionalIdNotFound = 105,
    FencedMemberEpoch = 110,
    UnreleasedInstanceId = 111,
    UnsupportedAssignor = 112,
    StaleMemberEpoch = 113,
    TransactionAbortable = 120,
    InvalidRecordState = 121,
    ShareSessionNotFound = 122,
    InvalidShareSessionEpoch = 123,
    InvalidRegularExpression = 128,
    ShareSessionLimitReached = 133,
}

impl ErrorCode {
    pub fn code(self) -> i16 {
        self as i16
    }

    /// The error code `code` names, if it is one floe knows (clients report the number
    /// otherwise).
    pub fn from_code(code: i16) -> Option<ErrorCode> {
        Some(match code {
            -1 => ErrorCode::UnknownServerError,
            0 => ErrorCode::None,
            1 => ErrorCode::OffsetOutOfRange,
            2 => ErrorCode::CorruptMessage,
            3 => ErrorCode::UnknownTopicOrPartition,
            4 => ErrorCode::InvalidFetchSize,
            5 => ErrorCode::LeaderNotAvailable,
            6 => ErrorCode::NotLeaderOrFollower,
            7 => ErrorCode::RequestTimedOut,
            10 => ErrorCode::MessageTooLarge,
            12 => ErrorCode::OffsetMetadataTooLarge,
            13 => ErrorCode::NetworkException,
            14 => ErrorCode::CoordinatorLoadInProgress,
            15 => ErrorCode::CoordinatorNotAvailable,
            16 => ErrorCode::NotCoordinator,
            17 => ErrorCode::InvalidTopicException,
            18 => ErrorCode::RecordListTooLarge,
            19 => ErrorCode::NotEnoughReplicas,
            21 => ErrorCode::InvalidRequiredAcks,
            22 => ErrorCode::IllegalGeneration,
            23 => ErrorCode::InconsistentGroupProtocol,
            24 => ErrorCode::InvalidGroupId,
            25 => ErrorCode::UnknownMemberId,
            26 => ErrorCode::InvalidSessionTimeout,
            27 => ErrorCode::RebalanceInProgress,
            28 => ErrorCode::InvalidCommitOffsetSize,
            29 => ErrorCode::TopicAuthorizationFailed,
            30 => ErrorCode::GroupAuthorizationFailed,
            31 => ErrorCode::ClusterAuthorizationFailed,
            32 => ErrorCode::InvalidTimestamp,
            33 => ErrorCode::UnsupportedSaslMechanism,
            34 => ErrorCode::IllegalSaslState,
            35 => ErrorCode::UnsupportedVersion,
            36 => ErrorCode::TopicAlreadyExists,
            37 => ErrorCode::InvalidPartitions,
            38 => ErrorCode::InvalidReplicationFactor,
            39 => ErrorCode::InvalidReplicaAssignment,
            40 => ErrorCode::InvalidConfig,
            41 => ErrorCode::NotController,
            42 => ErrorCode::InvalidRequest,
            43 => ErrorCode::UnsupportedForMessageFormat,
            44 => ErrorCode::PolicyViolation,
            45 => ErrorCode::OutOfOrderSequenceNumber,
            46 => ErrorCode::DuplicateSequenceNumber,
            47 => ErrorCode::InvalidProducerEpoch,
            48 => ErrorCode::InvalidTxnState,
            49 => ErrorCode::InvalidProducerIdMapping,
            50 => ErrorCode::InvalidTransactionTimeout,
            51 => ErrorCode::ConcurrentTransactions,
            52 => ErrorCode::TransactionCoordinatorFenced,
            53 => ErrorCode::TransactionalIdAuthorizationFailed,
            54 => ErrorCode::SecurityDisabled,
            55 => ErrorCode::OperationNotAttempted,
            56 => ErrorCode::KafkaStorageError,
            58 => ErrorCode::SaslAuthenticationFailed,
            59 => ErrorCode::UnknownProducerId,
            68 => ErrorCode::NonEmptyGroup,
            69 => ErrorCode::GroupIdNotFound,
            70 => ErrorCode::FetchSessionIdNotFound,
            71 => ErrorCode::InvalidFetchSessionEpoch,
            74 => ErrorCode::FencedLeaderEpoch,
            75 => ErrorCode::UnknownLeaderEpoch,
            76 => ErrorCode::UnsupportedCompressionType,
            78 => ErrorCode::OffsetNotAvailable,
            79 => ErrorCode::MemberIdRequired,
            81 => ErrorCode::GroupMaxSizeReached,
            82 => ErrorCode::FencedInstanceId,
            86 => ErrorCode::GroupSubscribedToTopic,
            87 => ErrorCode::InvalidRecord,
            88 => ErrorCode::UnstableOffsetCommit,
            89 => ErrorCode::ThrottlingQuotaExceeded,
            90 => ErrorCode::ProducerFenced,
            91 => ErrorCode::ResourceNotFound,
            92 => ErrorCode::DuplicateResource,
            93 => ErrorCode::UnacceptableCredential,
            100 => ErrorCode::UnknownTopicId,
            103 => ErrorCode::InconsistentTopicId,
            105 => ErrorCode::TransactionalIdNotFound,
            110 => ErrorCode::FencedMemberEpoch,
            111 => ErrorCode::UnreleasedInstanceId,
            112 => ErrorCode::UnsupportedAssignor,
            113 => ErrorCode::StaleMemberEpoch,
            120 => ErrorCode::TransactionAbortable,
            121 => ErrorCode::InvalidRecordState,
            122 => ErrorCode::ShareSessionNotFound,
            123 => ErrorCode::InvalidShareSessionEpoch,
            128 => ErrorCode::InvalidRegularExpression,
            133 => ErrorCode::ShareSessionLimitReached,
            _ => return None,
        })
    }

    /// Whether a client may retry the same request (Kafka's `RetriableException` family).
    pub fn is_retriable(self) -> bool {
        matches!(
            self,
            ErrorCode::CorruptMessage
                | ErrorCode::UnknownTopicOrPartition
                | ErrorCode::LeaderNotAvailable
                | ErrorCode::NotLeaderOrFollower
                | ErrorCode::RequestTimedOut
                | ErrorCode::NetworkException
                | ErrorCode::CoordinatorLoadInProgress
                | ErrorCode::CoordinatorNotAvailable
                | ErrorCode::NotCoordinator
                | ErrorCode::KafkaStorageError
                | ErrorCode::OffsetNotAvailable
                | ErrorCode::ThrottlingQuotaExceeded
                | ErrorCode::UnknownTopicId
        )
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn codes_read_back_as_their_names() {
        for code in [
            ErrorCode::UnknownServerError,
            ErrorCode::None,
            ErrorCode::UnknownTopicOrPartition,
            ErrorCode::GroupIdNotFound,
            ErrorCode::InvalidRegularExpression,
        ] {
            assert_eq!(ErrorCode::from_code(code.code()), Some(code));
        }
        assert_eq!(ErrorCode::from_code(9_999), None);
    }
}
