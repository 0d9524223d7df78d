//! Access control lists and the decision they give, with Kafka's semantics (its
//! `StandardAuthorizer`, `org.apache.kafka.common.acl` and `org.apache.kafka.common.resource`).
//!
//! An ACL is a binding of an entry to a resource pattern:
//!
//! ```text
//! pattern: (TOPIC, "orders", PREFIXED)     entry: ("User:alice", "*", READ, ALLOW)
//! ```
//!
//! A pattern applies to a resource of its type when it is LITERAL with the resource's name,
//! LITERAL `"*"`, or PREFIXED with a prefix of the name. An entry applies to a request when
//! its principal is the request's or `"User:*"`, its host is the client's address or `"*"`,
//! and its operation is the request's or ALL; an ALLOW for READ, WRITE, DELETE or ALTER also
//! covers DESCRIBE, and one for ALTER_CONFIGS also covers DESCRIBE_CONFIGS.
//!
//! The decision, in order (`authorizer::authorize`):
//! 1. a super user is allowed;
//! 2. any applying DENY denies, whatever allows;
//! 3. any applying ALLOW allows;
//! 4. a resource no ACL's pattern applies to at all, for anyone, is allowed when
//!    `allow.everyone.if.no.acl.found` is set;
//! 5. anything else is denied.
//!
//! `model` holds the nouns, the filters of DescribeAcls and DeleteAcls, and what CreateAcls
//! refuses; `store` the replicated set (bounded by `ACLS_MAX`), indexed so a decision reads
//! only the patterns that may apply; `authorizer` the decision and KIP-430's operations field.
//! All of it is pure: no I/O, no clock.

pub mod authorizer;
pub mod model;
pub mod store;

#[cfg(test)]
mod tests;

pub use authorizer::{
    AuthorizerSettings, Decision, authorize, authorized_operations, supported_operations,
};
pub use model::{
    ACL_FIELD_BYTES_MAX, ACLS_MAX, AccessControlEntry, AccessControlEntryFilter, AclBinding,
    AclBindingFilter, AclError, CLUSTER_NAME, Operation, PatternType, Permission, ResourcePattern,
    ResourcePatternFilter, ResourceType, WILDCARD_HOST, WILDCARD_PRINCIPAL, WILDCARD_RESOURCE,
    validate_new,
};
pub use store::Acls;
