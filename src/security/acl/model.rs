//! The nouns of an ACL, as Kafka's `org.apache.kafka.common.acl` and
//! `org.apache.kafka.common.resource` define them: the four code enums, a binding (a resource
//! pattern and an access control entry), the filter DescribeAcls and DeleteAcls carry, and the
//! rules a binding must pass before it is stored (`AclControlManager.validateNewAcl`, plus the
//! broker's own checks in `AclApis.handleCreateAcls`).

use crate::protocol::ErrorCode;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A literal resource name that matches every resource of its type (`ResourcePattern.WILDCARD_RESOURCE`).
pub const WILDCARD_RESOURCE: &str = "*";
/// The principal that matches every principal (`StandardAuthorizerData.WILDCARD_PRINCIPAL`).
pub const WILDCARD_PRINCIPAL: &str = "User:*";
/// The host that matches every host (`StandardAuthorizerData.WILDCARD`).
pub const WILDCARD_HOST: &str = "*";
/// The only name a CLUSTER resource has (`AuthorizerUtils.isClusterResource`).
pub const CLUSTER_NAME: &str = "kafka-cluster";
/// A stored binding's resource name, principal and host, each. Kafka sets none; replicated
/// state must, or `ACLS_MAX` bindings of a request's size each would not fit in memory. Far
/// above what a resource name can be (topics 249 bytes, group and transactional ids 1 KiB by
/// default) and above a certificate's distinguished name.
pub const ACL_FIELD_BYTES_MAX: usize = 4096;
/// ACL bindings the replicated state holds; a create beyond it is refused.
pub const ACLS_MAX: usize = 100_000;

/// One of Kafka's code enums: the variants in code order, each with its code and Java name.
/// Every one has `Unknown = 0`, what a code Kafka does not define decodes to.
macro_rules! kafka_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $variant:ident = $code:literal => $kafka:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $variant, )+
        }

        impl $name {
            /// The value of a wire code; a code Kafka does not define is `Unknown`, as
            /// Kafka's `fromCode` answers.
            pub fn from_code(code: i8) -> Self {
                match code {
                    $( $code => $name::$variant, )+
                    _ => $name::Unknown,
                }
            }

            pub fn code(self) -> i8 {
                match self {
                    $( $name::$variant => $code, )+
                }
            }

            /// Kafka's name for the value, as its messages print it.
            pub fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $kafka, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

kafka_enum! {
    /// Kafka's `ResourceType`. `Any` appears only in filters.
    ResourceType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Topic = 2 => "TOPIC",
        Group = 3 => "GROUP",
        Cluster = 4 => "CLUSTER",
        TransactionalId = 5 => "TRANSACTIONAL_ID",
        DelegationToken = 6 => "DELEGATION_TOKEN",
        User = 7 => "USER",
    }
}

kafka_enum! {
    /// Kafka's `PatternType`. A stored pattern is `Literal` or `Prefixed`; `Any` and `Match`
    /// appear only in filters.
    PatternType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Match = 2 => "MATCH",
        Literal = 3 => "LITERAL",
        Prefixed = 4 => "PREFIXED",
    }
}

kafka_enum! {
    /// Kafka's `AclOperation`. `Any` appears only in filters; `All` in an entry covers every
    /// operation. The codes are bit positions in KIP-430's authorized-operations field.
    Operation {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        All = 2 => "ALL",
        Read = 3 => "READ",
        Write = 4 => "WRITE",
        Create = 5 => "CREATE",
        Delete = 6 => "DELETE",
        Alter = 7 => "ALTER",
        Describe = 8 => "DESCRIBE",
        ClusterAction = 9 => "CLUSTER_ACTION",
        DescribeConfigs = 10 => "DESCRIBE_CONFIGS",
        AlterConfigs = 11 => "ALTER_CONFIGS",
        IdempotentWrite = 12 => "IDEMPOTENT_WRITE",
        CreateTokens = 13 => "CREATE_TOKENS",
        DescribeTokens = 14 => "DESCRIBE_TOKENS",
    }
}

kafka_enum! {
    /// Kafka's `AclPermissionType`. `Any` appears only in filters.
    Permission {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Deny = 2 => "DENY",
        Allow = 3 => "ALLOW",
    }
}

/// What a binding guards: resources of one type whose name is `name` (`Literal`; `"*"` is
/// every name) or begins with it (`Prefixed`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ResourcePattern {
    pub resource_type: ResourceType,
    pub name: String,
    pub pattern_type: PatternType,
}

/// Who may (or may not) do what from where: `principal` is `"Type:name"` (`"User:*"` is
/// everyone), `host` an IP address as text (`"*"` is every host).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AccessControlEntry {
    pub principal: String,
    pub host: String,
    pub operation: Operation,
    pub permission: Permission,
}

/// One ACL: an entry on a pattern.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AclBinding {
    pub pattern: ResourcePattern,
    pub entry: AccessControlEntry,
}

impl AclBinding {
    /// The filter that matches exactly this binding (Kafka's `AclBinding.toFilter`).
    pub fn to_filter(&self) -> AclBindingFilter {
        AclBindingFilter {
            pattern: ResourcePatternFilter {
                resource_type: self.pattern.resource_type,
                name: Some(self.pattern.name.clone()),
                pattern_type: self.pattern.pattern_type,
            },
            entry: AccessControlEntryFilter {
                principal: Some(self.entry.principal.clone()),
                host: Some(self.entry.host.clone()),
                operation: self.entry.operation,
                permission: self.entry.permission,
            },
        }
    }
}

/// Which patterns a DescribeAcls or DeleteAcls means (Kafka's `ResourcePatternFilter`): a
/// `None` name is any name; `Any` types are any type; pattern type `Match` means every pattern
/// that applies to a resource called `name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResourcePatternFilter {
    pub resource_type: ResourceType,
    pub name: Option<String>,
    pub pattern_type: PatternType,
}

impl ResourcePatternFilter {
    pub const ANY: ResourcePatternFilter = ResourcePatternFilter {
        resource_type: ResourceType::Any,
        name: None,
        pattern_type: PatternType::Any,
    };

    pub fn matches(&self, pattern: &ResourcePattern) -> bool {
        self.matches_parts(pattern.resource_type, &pattern.name, pattern.pattern_type)
    }

    /// `matches` on a pattern's parts, so a store can ask without building one.
    pub fn matches_parts(
        &self,
        resource_type: ResourceType,
        name: &str,
        pattern_type: PatternType,
    ) -> bool {
        if self.resource_type != ResourceType::Any && self.resource_type != resource_type {
            return false;
        }
        if !matches!(self.pattern_type, PatternType::Any | PatternType::Match)
            && self.pattern_type != pattern_type
        {
            return false;
        }
        let Some(wanted) = &self.name else {
            return true;
        };
        if self.pattern_type == PatternType::Any || self.pattern_type == pattern_type {
            return wanted == name;
        }
        // MATCH: every pattern the authorizer would apply to a resource called `wanted`.
        match pattern_type {
            PatternType::Literal => wanted == name || name == WILDCARD_RESOURCE,
            PatternType::Prefixed => wanted.starts_with(name),
            // Kafka throws here ("Unsupported PatternType"); no stored pattern has these.
            PatternType::Unknown | PatternType::Any | PatternType::Match => false,
        }
    }

    /// A type Kafka refuses in a filter (`ResourcePatternFilter.isUnknown`).
    pub fn is_unknown(&self) -> bool {
        self.resource_type == ResourceType::Unknown || self.pattern_type == PatternType::Unknown
    }

    /// Why the filter may match more than one pattern, if it may (`findIndefiniteField`).
    pub fn indefinite_field(&self) -> Option<&'static str> {
        match (self.resource_type, &self.name, self.pattern_type) {
            (ResourceType::Any, _, _) => Some("Resource type is ANY."),
            (ResourceType::Unknown, _, _) => Some("Resource type is UNKNOWN."),
            (_, None, _) => Some("Resource name is NULL."),
            (_, _, PatternType::Match) => Some("Resource pattern type is MATCH."),
            (_, _, PatternType::Unknown) => Some("Resource pattern type is UNKNOWN."),
            _ => None,
        }
    }

    pub fn matches_at_most_one(&self) -> bool {
        self.indefinite_field().is_none()
    }
}

/// Which entries a DescribeAcls or DeleteAcls means (Kafka's `AccessControlEntryFilter`): a
/// `None` principal or host is any, `Any` operation or permission is any. Exact otherwise:
/// the filter `"User:*"` means the entries for everyone, not every entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AccessControlEntryFilter {
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: Operation,
    pub permission: Permission,
}

impl AccessControlEntryFilter {
    pub const ANY: AccessControlEntryFilter = AccessControlEntryFilter {
        principal: None,
        host: None,
        operation: Operation::Any,
        permission: Permission::Any,
    };

    pub fn matches(&self, entry: &AccessControlEntry) -> bool {
        self.principal
            .as_ref()
            .is_none_or(|p| *p == entry.principal)
            && self.host.as_ref().is_none_or(|h| *h == entry.host)
            && (self.operation == Operation::Any || self.operation == entry.operation)
            && (self.permission == Permission::Any || self.permission == entry.permission)
    }

    /// An operation or permission Kafka refuses in a filter (`AccessControlEntryData.isUnknown`).
    pub fn is_unknown(&self) -> bool {
        self.operation == Operation::Unknown || self.permission == Permission::Unknown
    }

    /// Why the filter may match more than one entry, if it may (`findIndefiniteField`).
    pub fn indefinite_field(&self) -> Option<&'static str> {
        if self.principal.is_none() {
            return Some("Principal is NULL");
        }
        if self.host.is_none() {
            return Some("Host is NULL");
        }
        match (self.operation, self.permission) {
            (Operation::Any, _) => Some("Operation is ANY"),
            (Operation::Unknown, _) => Some("Operation is UNKNOWN"),
            (_, Permission::Any) => Some("Permission type is ANY"),
            (_, Permission::Unknown) => Some("Permission type is UNKNOWN"),
            _ => None,
        }
    }

    pub fn matches_at_most_one(&self) -> bool {
        self.indefinite_field().is_none()
    }
}

/// A pattern filter and an entry filter: the bindings both match (Kafka's `AclBindingFilter`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AclBindingFilter {
    pub pattern: ResourcePatternFilter,
    pub entry: AccessControlEntryFilter,
}

impl AclBindingFilter {
    /// Every binding.
    pub const ANY: AclBindingFilter = AclBindingFilter {
        pattern: ResourcePatternFilter::ANY,
        entry: AccessControlEntryFilter::ANY,
    };

    pub fn matches(&self, binding: &AclBinding) -> bool {
        self.pattern.matches(&binding.pattern) && self.entry.matches(&binding.entry)
    }

    pub fn is_unknown(&self) -> bool {
        self.pattern.is_unknown() || self.entry.is_unknown()
    }

    pub fn matches_at_most_one(&self) -> bool {
        self.pattern.matches_at_most_one() && self.entry.matches_at_most_one()
    }

    /// Refuses a filter with an UNKNOWN field, as the controller refuses it in DeleteAcls
    /// (`AclControlManager.validateFilter`). Such a filter would match nothing stored, so
    /// DescribeAcls and DeleteAcls answer INVALID_REQUEST instead of an empty success.
    pub fn validate(&self) -> Result<(), AclError> {
        if self.pattern.is_unknown() {
            return Err(AclError::UnknownPatternFilter);
        }
        if self.entry.is_unknown() {
            return Err(AclError::UnknownEntryFilter);
        }
        Ok(())
    }
}

/// Why an ACL request was refused. The messages are Kafka's where Kafka has the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum AclError {
    #[error("Invalid resourceType {0}")]
    InvalidResourceType(ResourceType),
    #[error("Invalid patternType {0}")]
    InvalidPatternType(PatternType),
    #[error("Invalid operation {0}")]
    InvalidOperation(Operation),
    #[error("Invalid permissionType {0}")]
    InvalidPermission(Permission),
    #[error("Resource name should not be empty")]
    EmptyResourceName,
    #[error("The only valid name for the CLUSTER resource is {}", CLUSTER_NAME)]
    InvalidClusterName,
    #[error(
        "Could not parse principal from `{0}` (no colon is present separating the principal \
         type from the principal name)"
    )]
    InvalidPrincipal(String),
    #[error("Resource name is longer than {} bytes", ACL_FIELD_BYTES_MAX)]
    ResourceNameTooLong,
    #[error("Principal is longer than {} bytes", ACL_FIELD_BYTES_MAX)]
    PrincipalTooLong,
    #[error("Host is longer than {} bytes", ACL_FIELD_BYTES_MAX)]
    HostTooLong,
    #[error("Unknown patternFilter.")]
    UnknownPatternFilter,
    #[error("Unknown entryFilter.")]
    UnknownEntryFilter,
    #[error(
        "The cluster already holds {} ACLs, the most it keeps; delete some first",
        ACLS_MAX
    )]
    TooManyAcls,
}

impl AclError {
    /// The code CreateAcls, DescribeAcls or DeleteAcls answers with.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            AclError::InvalidResourceType(_)
            | AclError::InvalidPatternType(_)
            | AclError::InvalidOperation(_)
            | AclError::InvalidPermission(_)
            | AclError::EmptyResourceName
            | AclError::InvalidClusterName
            | AclError::InvalidPrincipal(_)
            | AclError::ResourceNameTooLong
            | AclError::PrincipalTooLong
            | AclError::HostTooLong
            | AclError::UnknownPatternFilter
            | AclError::UnknownEntryFilter => ErrorCode::InvalidRequest,
            // Kafka has no bound on ACLs; like a partition count over floe's bound
            // (`TopicError::TooManyPartitions`), it is the cluster's policy that refuses.
            AclError::TooManyAcls => ErrorCode::PolicyViolation,
        }
    }
}

/// Whether `binding` may be stored: a concrete resource type, pattern type, operation and
/// permission, a name, a principal of the form `Type:name`.
///
/// Kafka's controller (`AclControlManager.validateNewAcl`) checks the four types and the
/// empty name; its broker (`AclApis.handleCreateAcls`) the empty name and the CLUSTER name.
/// The principal's colon Kafka checks only when it authorizes (`StandardAcl.kafkaPrincipal`
/// throws), so such a binding would break every later decision on its resource: it is
/// refused here instead. Kafka's request parser refuses UNKNOWN codes, and its `ResourcePattern`
/// and `AccessControlEntry` constructors ANY, before any of this (an error for the whole
/// request); floe answers each binding with INVALID_REQUEST, as the controller does.
pub fn validate_new(binding: &AclBinding) -> Result<(), AclError> {
    let pattern = &binding.pattern;
    let entry = &binding.entry;
    if matches!(
        pattern.resource_type,
        ResourceType::Unknown | ResourceType::Any
    ) {
        return Err(AclError::InvalidResourceType(pattern.resource_type));
    }
    if !matches!(
        pattern.pattern_type,
        PatternType::Literal | PatternType::Prefixed
    ) {
        return Err(AclError::InvalidPatternType(pattern.pattern_type));
    }
    if matches!(entry.operation, Operation::Unknown | Operation::Any) {
        return Err(AclError::InvalidOperation(entry.operation));
    }
    if !matches!(entry.permission, Permission::Allow | Permission::Deny) {
        return Err(AclError::InvalidPermission(entry.permission));
    }
    if pattern.name.is_empty() {
        return Err(AclError::EmptyResourceName);
    }
    if pattern.resource_type == ResourceType::Cluster && pattern.name != CLUSTER_NAME {
        return Err(AclError::InvalidClusterName);
    }
    if pattern.name.len() > ACL_FIELD_BYTES_MAX {
        return Err(AclError::ResourceNameTooLong);
    }
    // Before the principal's colon: that error quotes the principal.
    if entry.principal.len() > ACL_FIELD_BYTES_MAX {
        return Err(AclError::PrincipalTooLong);
    }
    if entry.host.len() > ACL_FIELD_BYTES_MAX {
        return Err(AclError::HostTooLong);
    }
    if !entry.principal.contains(':') {
        return Err(AclError::InvalidPrincipal(entry.principal.clone()));
    }
    Ok(())
}
