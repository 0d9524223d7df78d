//! What an API declares it needs from the authorizer.

use crate::security::acl::{Operation, ResourceType};

/// One ACL an API may check: an operation on a resource type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acl {
    pub resource: ResourceType,
    pub operation: Operation,
}

impl Acl {
    pub const fn new(resource: ResourceType, operation: Operation) -> Acl {
        Acl {
            resource,
            operation,
        }
    }
    pub const TOPIC_READ: Acl = Acl::new(ResourceType::Topic, Operation::Read);
    pub const TOPIC_WRITE: Acl = Acl::new(ResourceType::Topic, Operation::Write);
    pub const TOPIC_CREATE: Acl = Acl::new(ResourceType::Topic, Operation::Create);
    pub const TOPIC_DELETE: Acl = Acl::new(ResourceType::Topic, Operation::Delete);
    pub const TOPIC_ALTER: Acl = Acl::new(ResourceType::Topic, Operation::Alter);
    pub const TOPIC_DESCRIBE: Acl = Acl::new(ResourceType::Topic, Operation::Describe);
    pub const TOPIC_DESCRIBE_CONFIGS: Acl =
        Acl::new(ResourceType::Topic, Operation::DescribeConfigs);
    pub const TOPIC_ALTER_CONFIGS: Acl = Acl::new(ResourceType::Topic, Operation::AlterConfigs);
    pub const GROUP_READ: Acl = Acl::new(ResourceType::Group, Operation::Read);
    pub const GROUP_DESCRIBE: Acl = Acl::new(ResourceType::Group, Operation::Describe);
    pub const GROUP_DELETE: Acl = Acl::new(ResourceType::Group, Operation::Delete);
    pub const GROUP_DESCRIBE_CONFIGS: Acl =
        Acl::new(ResourceType::Group, Operation::DescribeConfigs);
    pub const GROUP_ALTER_CONFIGS: Acl = Acl::new(ResourceType::Group, Operation::AlterConfigs);
    pub const TXN_WRITE: Acl = Acl::new(ResourceType::TransactionalId, Operation::Write);
    pub const TXN_DESCRIBE: Acl = Acl::new(ResourceType::TransactionalId, Operation::Describe);
    pub const CLUSTER_CREATE: Acl = Acl::new(ResourceType::Cluster, Operation::Create);
    pub const CLUSTER_ALTER: Acl = Acl::new(ResourceType::Cluster, Operation::Alter);
    pub const CLUSTER_ACTION: Acl = Acl::new(ResourceType::Cluster, Operation::ClusterAction);
    pub const CLUSTER_DESCRIBE: Acl = Acl::new(ResourceType::Cluster, Operation::Describe);
    pub const CLUSTER_IDEMPOTENT_WRITE: Acl =
        Acl::new(ResourceType::Cluster, Operation::IdempotentWrite);
    pub const CLUSTER_DESCRIBE_CONFIGS: Acl =
        Acl::new(ResourceType::Cluster, Operation::DescribeConfigs);
    pub const CLUSTER_ALTER_CONFIGS: Acl = Acl::new(ResourceType::Cluster, Operation::AlterConfigs);
}

/// What an API needs from the authorizer.
#[derive(Debug, Clone, Copy)]
pub enum Needs {
    /// Answered to anyone, for the reason given.
    Nothing(&'static str),
    /// These ACLs, checked by the API's `authorize` before its handler runs.
    Acls(&'static [Acl]),
    /// These ACLs, checked by the handler itself: the ACL APIs (which answer
    /// SECURITY_DISABLED when no authorizer runs) and the SCRAM APIs (whose refusals are
    /// shaped by what the handler finds).
    InHandler(&'static [Acl]),
}

impl Needs {
    /// The ACLs declared.
    pub const fn acls(self) -> &'static [Acl] {
        match self {
            Needs::Nothing(_) => &[],
            Needs::Acls(acls) | Needs::InHandler(acls) => acls,
        }
    }
}
