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
    InvalidRegularExpression = 128,
}

impl ErrorCode {
    pub fn code(self) -> i16 {
        self as i16
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
