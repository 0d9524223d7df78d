//! The operations a client may perform on a resource, as Kafka reports them when a client
//! asks (KIP-430: Metadata, DescribeCluster, DescribeGroups, ConsumerGroupDescribe,
//! DescribeTopicPartitions). Without an authorizer every client may do everything, and Kafka
//! then reports every operation the resource type supports; with one, Metadata and
//! DescribeCluster report what the ACLs allow (`Broker::authorized_operations`).

/// Kafka's `AclOperation` codes.
const READ: i32 = 3;
const WRITE: i32 = 4;
const CREATE: i32 = 5;
const DELETE: i32 = 6;
const ALTER: i32 = 7;
const DESCRIBE: i32 = 8;
const CLUSTER_ACTION: i32 = 9;
const DESCRIBE_CONFIGS: i32 = 10;
const ALTER_CONFIGS: i32 = 11;
const IDEMPOTENT_WRITE: i32 = 12;

/// Kafka's value when the client did not ask.
pub const NOT_ASKED: i32 = i32::MIN;

const fn bits(operations: &[i32]) -> i32 {
    let mut field = 0;
    let mut i = 0;
    while i < operations.len() {
        field |= 1 << operations[i];
        i += 1;
    }
    field
}

pub const TOPIC: i32 = bits(&[
    READ,
    WRITE,
    CREATE,
    DELETE,
    ALTER,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    ALTER_CONFIGS,
]);
pub const CLUSTER: i32 = bits(&[
    CREATE,
    ALTER,
    DESCRIBE,
    CLUSTER_ACTION,
    DESCRIBE_CONFIGS,
    ALTER_CONFIGS,
    IDEMPOTENT_WRITE,
]);
pub const GROUP: i32 = bits(&[READ, DELETE, DESCRIBE]);

/// `operations` when the client asked for them, Kafka's "not asked" value otherwise.
pub fn if_asked(asked: bool, operations: i32) -> i32 {
    if asked { operations } else { NOT_ASKED }
}
