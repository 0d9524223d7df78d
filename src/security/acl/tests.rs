use super::Decision::{Allowed, Denied};
use super::Operation::{
    All, Alter, AlterConfigs, ClusterAction, Create, Delete, Describe, DescribeConfigs,
    IdempotentWrite, Read, Write,
};
use super::Permission::{Allow, Deny};
use super::*;
use crate::protocol::ErrorCode;
use proptest::prelude::*;
use proptest::sample::select;

const ALICE: &str = "User:alice";
const BOB: &str = "User:bob";
const HOST: &str = "10.0.0.1";
const OTHER_HOST: &str = "10.0.0.2";

fn binding(
    resource_type: ResourceType,
    name: &str,
    pattern_type: PatternType,
    principal: &str,
    host: &str,
    operation: Operation,
    permission: Permission,
) -> AclBinding {
    AclBinding {
        pattern: ResourcePattern {
            resource_type,
            name: name.to_string(),
            pattern_type,
        },
        entry: AccessControlEntry {
            principal: principal.to_string(),
            host: host.to_string(),
            operation,
            permission,
        },
    }
}

/// A literal topic ACL from every host.
fn topic(name: &str, principal: &str, operation: Operation, permission: Permission) -> AclBinding {
    binding(
        ResourceType::Topic,
        name,
        PatternType::Literal,
        principal,
        WILDCARD_HOST,
        operation,
        permission,
    )
}

/// A prefixed topic ACL from every host.
fn topics_prefixed(
    prefix: &str,
    principal: &str,
    operation: Operation,
    permission: Permission,
) -> AclBinding {
    binding(
        ResourceType::Topic,
        prefix,
        PatternType::Prefixed,
        principal,
        WILDCARD_HOST,
        operation,
        permission,
    )
}

fn store(bindings: impl IntoIterator<Item = AclBinding>) -> Acls {
    let mut acls = Acls::default();
    for b in bindings {
        acls.create(b).unwrap();
    }
    acls
}

/// The decision on a topic from `HOST`, with Kafka's default settings.
fn on_topic(acls: &Acls, principal: &str, operation: Operation, name: &str) -> Decision {
    authorize(
        acls,
        &AuthorizerSettings::default(),
        principal,
        HOST,
        operation,
        ResourceType::Topic,
        name,
    )
}

fn bits(operations: &[Operation]) -> i32 {
    operations
        .iter()
        .fold(0, |field, op| field | (1_i32 << i32::from(op.code())))
}

/// The operations Kafka reports for each resource type (KIP-430), as the broker lists them.
mod authorized {
    use super::*;

    pub fn topic() -> i32 {
        bits(&[
            Read,
            Write,
            Create,
            Delete,
            Alter,
            Describe,
            DescribeConfigs,
            AlterConfigs,
        ])
    }

    pub fn cluster() -> i32 {
        bits(&[
            Create,
            Alter,
            Describe,
            ClusterAction,
            DescribeConfigs,
            AlterConfigs,
            IdempotentWrite,
        ])
    }

    pub fn group() -> i32 {
        bits(&[Read, Delete, Describe])
    }
}

#[test]
fn codes_are_kafkas_and_undefined_codes_are_unknown() {
    for code in 0..=14 {
        assert_eq!(Operation::from_code(code).code(), code);
    }
    for code in 0..=7 {
        assert_eq!(ResourceType::from_code(code).code(), code);
    }
    for code in 0..=4 {
        assert_eq!(PatternType::from_code(code).code(), code);
    }
    for code in 0..=3 {
        assert_eq!(Permission::from_code(code).code(), code);
    }
    assert_eq!(Operation::DescribeConfigs.code(), 10);
    assert_eq!(Operation::DescribeTokens.code(), 14);
    assert_eq!(ResourceType::TransactionalId.code(), 5);
    assert_eq!(ResourceType::User.code(), 7);
    assert_eq!(PatternType::Prefixed.code(), 4);
    assert_eq!(Permission::Allow.code(), 3);
    assert_eq!(Operation::from_code(15), Operation::Unknown);
    assert_eq!(Operation::from_code(-1), Operation::Unknown);
    assert_eq!(ResourceType::from_code(8), ResourceType::Unknown);
    assert_eq!(PatternType::from_code(5), PatternType::Unknown);
    assert_eq!(Permission::from_code(i8::MAX), Permission::Unknown);
    assert_eq!(Operation::ClusterAction.to_string(), "CLUSTER_ACTION");
    assert_eq!(
        ResourceType::TransactionalId.to_string(),
        "TRANSACTIONAL_ID"
    );
}

#[test]
fn an_allow_covers_its_principal_operation_and_resource_only() {
    let acls = store([topic("orders", ALICE, Read, Allow)]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Allowed);
    assert_eq!(on_topic(&acls, BOB, Read, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Write, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Read, "payments"), Denied);
    let as_group = authorize(
        &acls,
        &AuthorizerSettings::default(),
        ALICE,
        HOST,
        Read,
        ResourceType::Group,
        "orders",
    );
    assert_eq!(as_group, Denied);
}

#[test]
fn deny_beats_allow() {
    let acls = store([
        topic("orders", ALICE, Read, Allow),
        topic("orders", ALICE, Read, Deny),
    ]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);

    // Whichever pattern each comes from, and a DENY for everyone counts for alice.
    let acls = store([
        topic("orders", ALICE, All, Allow),
        topics_prefixed("ord", WILDCARD_PRINCIPAL, Write, Deny),
    ]);
    assert_eq!(on_topic(&acls, ALICE, Write, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Allowed);

    let acls = store([
        topic("orders", ALICE, Read, Allow),
        topic(WILDCARD_RESOURCE, ALICE, All, Deny),
    ]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);
}

#[test]
fn read_write_delete_and_alter_imply_describe() {
    for granted in [Read, Write, Delete, Alter, Describe] {
        let acls = store([topic("orders", ALICE, granted, Allow)]);
        assert_eq!(
            on_topic(&acls, ALICE, Describe, "orders"),
            Allowed,
            "{granted}"
        );
    }
    for granted in [
        Create,
        ClusterAction,
        DescribeConfigs,
        AlterConfigs,
        IdempotentWrite,
    ] {
        let acls = store([topic("orders", ALICE, granted, Allow)]);
        assert_eq!(
            on_topic(&acls, ALICE, Describe, "orders"),
            Denied,
            "{granted}"
        );
    }
}

#[test]
fn alter_configs_implies_describe_configs_and_no_implication_runs_backwards() {
    let acls = store([topic("orders", ALICE, AlterConfigs, Allow)]);
    assert_eq!(on_topic(&acls, ALICE, DescribeConfigs, "orders"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Describe, "orders"), Denied);

    let acls = store([topic("orders", ALICE, Alter, Allow)]);
    assert_eq!(on_topic(&acls, ALICE, DescribeConfigs, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, AlterConfigs, "orders"), Denied);

    let acls = store([
        topic("orders", ALICE, DescribeConfigs, Allow),
        topic("orders", ALICE, Describe, Allow),
    ]);
    assert_eq!(on_topic(&acls, ALICE, AlterConfigs, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);
}

#[test]
fn implication_widens_allows_but_not_denies() {
    // Denying READ does not deny DESCRIBE, which READ would have implied.
    let acls = store([
        topic("orders", ALICE, Describe, Allow),
        topic("orders", ALICE, Read, Deny),
    ]);
    assert_eq!(on_topic(&acls, ALICE, Describe, "orders"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);

    let acls = store([
        topic("orders", ALICE, DescribeConfigs, Allow),
        topic("orders", ALICE, AlterConfigs, Deny),
    ]);
    assert_eq!(on_topic(&acls, ALICE, DescribeConfigs, "orders"), Allowed);
}

#[test]
fn all_covers_every_operation_in_an_allow_and_in_a_deny() {
    let acls = store([topic("orders", ALICE, All, Allow)]);
    for &operation in supported_operations(ResourceType::Topic) {
        assert_eq!(
            on_topic(&acls, ALICE, operation, "orders"),
            Allowed,
            "{operation}"
        );
    }
    let acls = store([
        topic("orders", ALICE, Read, Allow),
        topic("orders", ALICE, Describe, Allow),
        topic("orders", ALICE, All, Deny),
    ]);
    for &operation in supported_operations(ResourceType::Topic) {
        assert_eq!(
            on_topic(&acls, ALICE, operation, "orders"),
            Denied,
            "{operation}"
        );
    }
}

#[test]
fn user_star_is_everyone_and_no_other_principal_is_a_wildcard() {
    let acls = store([topic("orders", WILDCARD_PRINCIPAL, Read, Allow)]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Allowed);
    assert_eq!(on_topic(&acls, BOB, Read, "orders"), Allowed);
    // Kafka adds User:* to every principal's matches, whatever the principal's type.
    assert_eq!(on_topic(&acls, "Service:billing", Read, "orders"), Allowed);

    let acls = store([
        topic("orders", "Service:*", Read, Allow),
        topic("orders", "User:al*", Read, Allow),
    ]);
    assert_eq!(on_topic(&acls, "Service:billing", Read, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);
}

#[test]
fn hosts_match_exactly_or_by_the_wildcard() {
    let from = |host: &str| {
        binding(
            ResourceType::Topic,
            "orders",
            PatternType::Literal,
            ALICE,
            host,
            Read,
            Allow,
        )
    };
    let acls = store([from(HOST)]);
    let settings = AuthorizerSettings::default();
    let decide = |acls: &Acls, host: &str| {
        authorize(
            acls,
            &settings,
            ALICE,
            host,
            Read,
            ResourceType::Topic,
            "orders",
        )
    };
    assert_eq!(decide(&acls, HOST), Allowed);
    assert_eq!(decide(&acls, OTHER_HOST), Denied);

    let mut deny_other = from(OTHER_HOST);
    deny_other.entry.permission = Deny;
    let acls = store([from(WILDCARD_HOST), deny_other]);
    assert_eq!(decide(&acls, HOST), Allowed);
    assert_eq!(decide(&acls, OTHER_HOST), Denied);
}

#[test]
fn a_literal_star_covers_every_name_of_its_type_and_a_prefixed_star_does_not() {
    let acls = store([topic(WILDCARD_RESOURCE, ALICE, Read, Allow)]);
    for name in ["orders", "x", WILDCARD_RESOURCE, ""] {
        assert_eq!(on_topic(&acls, ALICE, Read, name), Allowed, "{name:?}");
    }
    let as_group = authorize(
        &acls,
        &AuthorizerSettings::default(),
        ALICE,
        HOST,
        Read,
        ResourceType::Group,
        "orders",
    );
    assert_eq!(as_group, Denied);

    let acls = store([topics_prefixed(WILDCARD_RESOURCE, ALICE, Read, Allow)]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Read, "*starred"), Allowed);
}

#[test]
fn a_prefixed_pattern_covers_the_names_it_begins_and_a_literal_only_its_own() {
    let acls = store([topics_prefixed("ord", ALICE, Read, Allow)]);
    for name in ["ord", "orders", "ord.eu"] {
        assert_eq!(on_topic(&acls, ALICE, Read, name), Allowed, "{name}");
    }
    for name in ["or", "xord", "payments", ""] {
        assert_eq!(on_topic(&acls, ALICE, Read, name), Denied, "{name}");
    }

    let acls = store([topic("ord", ALICE, Read, Allow)]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders"), Denied);

    // Nested prefixes, and prefixes the walk passes by on the way (ordinal, orders-x).
    let acls = store([
        topics_prefixed("o", ALICE, Read, Allow),
        topics_prefixed("ordinal", ALICE, Read, Deny),
        topics_prefixed("orders-x", ALICE, Read, Deny),
        topics_prefixed("orders", ALICE, Write, Allow),
    ]);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders-eu"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Write, "orders-eu"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Read, "orders-xl"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Write, "other"), Denied);
}

#[test]
fn prefixes_are_whole_characters() {
    let acls = store([
        topics_prefixed("日", ALICE, Read, Allow),
        topics_prefixed("日本語", ALICE, Write, Allow),
        topics_prefixed("é", ALICE, Read, Allow),
        topics_prefixed("è", ALICE, Write, Allow),
    ]);
    assert_eq!(on_topic(&acls, ALICE, Read, "日本"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Write, "日本"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Write, "日本語-topic"), Allowed);
    // "è" and "é" share their first byte: the walk from "éa" passes "è" and must cut back
    // to a whole character, not into the middle of "é".
    assert_eq!(on_topic(&acls, ALICE, Read, "éa"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Write, "éa"), Denied);
    assert_eq!(on_topic(&acls, ALICE, Write, "èa"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Read, "èa"), Denied);
}

#[test]
fn super_users_are_allowed_whatever_the_acls_say() {
    let acls = store([topic(WILDCARD_RESOURCE, "User:root", All, Deny)]);
    let settings = AuthorizerSettings {
        super_users: ["User:root".to_string()].into(),
        allow_everyone_if_no_acl_found: false,
    };
    let root = |operation, name| {
        authorize(
            &acls,
            &settings,
            "User:root",
            HOST,
            operation,
            ResourceType::Topic,
            name,
        )
    };
    assert_eq!(root(Write, "orders"), Allowed);
    assert_eq!(on_topic(&acls, "User:root", Write, "orders"), Denied);
    let unguarded = authorize(
        &acls,
        &settings,
        "User:root",
        HOST,
        ClusterAction,
        ResourceType::Cluster,
        CLUSTER_NAME,
    );
    assert_eq!(unguarded, Allowed);
}

#[test]
fn allow_everyone_applies_only_to_a_resource_no_acl_covers() {
    let open = AuthorizerSettings {
        super_users: Default::default(),
        allow_everyone_if_no_acl_found: true,
    };
    let decide = |acls: &Acls, resource_type, name| {
        authorize(acls, &open, ALICE, HOST, Read, resource_type, name)
    };
    assert_eq!(
        decide(&Acls::default(), ResourceType::Topic, "orders"),
        Allowed
    );
    assert_eq!(
        on_topic(&Acls::default(), ALICE, Read, "orders"),
        Denied,
        "Kafka's default is to deny"
    );

    // An ACL for someone else, or for another operation, on the resource: denied.
    let acls = store([topic("orders", BOB, Read, Allow)]);
    assert_eq!(decide(&acls, ResourceType::Topic, "orders"), Denied);
    assert_eq!(decide(&acls, ResourceType::Topic, "payments"), Allowed);
    let acls = store([topic("orders", ALICE, Write, Allow)]);
    assert_eq!(decide(&acls, ResourceType::Topic, "orders"), Denied);

    // Covering by prefix or by wildcard counts too; the same name of another type does not.
    let acls = store([topics_prefixed("pay", BOB, Read, Allow)]);
    assert_eq!(decide(&acls, ResourceType::Topic, "payments"), Denied);
    let acls = store([topic(WILDCARD_RESOURCE, BOB, Read, Allow)]);
    assert_eq!(decide(&acls, ResourceType::Topic, "anything"), Denied);
    let group = binding(
        ResourceType::Group,
        "orders",
        PatternType::Literal,
        BOB,
        WILDCARD_HOST,
        Read,
        Allow,
    );
    let acls = store([group]);
    assert_eq!(decide(&acls, ResourceType::Topic, "orders"), Allowed);
    assert_eq!(decide(&acls, ResourceType::Group, "orders"), Denied);
}

#[test]
fn authorized_operations_reports_each_operation_authorize_allows() {
    let acls = store([topic("orders", ALICE, Read, Allow)]);
    let settings = AuthorizerSettings::default();
    let field = |acls: &Acls,
                 settings: &AuthorizerSettings,
                 principal: &str,
                 resource_type: ResourceType,
                 name: &str| {
        authorized_operations(acls, settings, principal, HOST, resource_type, name)
    };
    assert_eq!(
        field(&acls, &settings, ALICE, ResourceType::Topic, "orders"),
        bits(&[Read, Describe])
    );
    assert_eq!(
        field(&acls, &settings, BOB, ResourceType::Topic, "orders"),
        0
    );

    let acls = store([
        topic("orders", ALICE, All, Allow),
        topic("orders", ALICE, Delete, Deny),
    ]);
    assert_eq!(
        field(&acls, &settings, ALICE, ResourceType::Topic, "orders"),
        authorized::topic() & !bits(&[Delete])
    );

    let txn = binding(
        ResourceType::TransactionalId,
        "tx-",
        PatternType::Prefixed,
        ALICE,
        WILDCARD_HOST,
        Write,
        Allow,
    );
    let acls = store([txn]);
    assert_eq!(
        field(
            &acls,
            &settings,
            ALICE,
            ResourceType::TransactionalId,
            "tx-1"
        ),
        bits(&[Write, Describe])
    );

    // Everything the type has, and only that: the constants floe reports today.
    let root = AuthorizerSettings {
        super_users: [ALICE.to_string()].into(),
        allow_everyone_if_no_acl_found: false,
    };
    let none = Acls::default();
    assert_eq!(
        field(&none, &root, ALICE, ResourceType::Topic, "t"),
        authorized::topic()
    );
    assert_eq!(
        field(&none, &root, ALICE, ResourceType::Cluster, CLUSTER_NAME),
        authorized::cluster()
    );
    assert_eq!(
        field(&none, &root, ALICE, ResourceType::Group, "g"),
        authorized::group()
    );
    assert_eq!(field(&none, &root, ALICE, ResourceType::Any, "x"), 0);
    let open = AuthorizerSettings {
        super_users: Default::default(),
        allow_everyone_if_no_acl_found: true,
    };
    assert_eq!(
        field(&none, &open, BOB, ResourceType::Topic, "t"),
        authorized::topic()
    );
}

/// The bindings of `filters_match_as_kafkas_do`, by name.
fn filter_fixture() -> Vec<(&'static str, AclBinding)> {
    let group = binding(
        ResourceType::Group,
        "foobar",
        PatternType::Literal,
        ALICE,
        WILDCARD_HOST,
        Read,
        Allow,
    );
    vec![
        ("literal foobar", topic("foobar", ALICE, Read, Allow)),
        ("literal *", topic(WILDCARD_RESOURCE, ALICE, Read, Allow)),
        ("literal foo", topic("foo", ALICE, Read, Allow)),
        ("prefixed foo", topics_prefixed("foo", ALICE, Read, Allow)),
        ("prefixed f", topics_prefixed("f", ALICE, Read, Allow)),
        (
            "prefixed foobar",
            topics_prefixed("foobar", ALICE, Read, Allow),
        ),
        (
            "prefixed foobarbaz",
            topics_prefixed("foobarbaz", ALICE, Read, Allow),
        ),
        ("group foobar", group),
    ]
}

fn pattern_filter(
    resource_type: ResourceType,
    name: Option<&str>,
    pattern_type: PatternType,
) -> AclBindingFilter {
    AclBindingFilter {
        pattern: ResourcePatternFilter {
            resource_type,
            name: name.map(str::to_string),
            pattern_type,
        },
        entry: AccessControlEntryFilter::ANY,
    }
}

#[test]
fn filters_match_as_kafkas_do() {
    let fixture = filter_fixture();
    let acls = store(fixture.iter().map(|(_, b)| b.clone()));
    let matched = |filter: &AclBindingFilter| -> Vec<&'static str> {
        let by_filter: Vec<&'static str> = fixture
            .iter()
            .filter(|(_, b)| filter.matches(b))
            .map(|(label, _)| *label)
            .collect();
        // The store answers the same as the filter on each binding.
        let described = acls.describe(filter);
        assert_eq!(described.len(), by_filter.len(), "{filter:?}");
        assert!(described.iter().all(|b| filter.matches(b)));
        by_filter
    };

    assert_eq!(matched(&AclBindingFilter::ANY).len(), fixture.len());
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Topic,
            Some("foobar"),
            PatternType::Match
        )),
        [
            "literal foobar",
            "literal *",
            "prefixed foo",
            "prefixed f",
            "prefixed foobar"
        ]
    );
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Any,
            Some("foobar"),
            PatternType::Any
        )),
        ["literal foobar", "prefixed foobar", "group foobar"]
    );
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Topic,
            Some(WILDCARD_RESOURCE),
            PatternType::Literal
        )),
        ["literal *"]
    );
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Topic,
            Some("foo"),
            PatternType::Prefixed
        )),
        ["prefixed foo"]
    );
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Any,
            None,
            PatternType::Prefixed
        )),
        [
            "prefixed foo",
            "prefixed f",
            "prefixed foobar",
            "prefixed foobarbaz"
        ]
    );
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Group,
            None,
            PatternType::Match
        )),
        ["group foobar"]
    );
    assert_eq!(
        matched(&pattern_filter(
            ResourceType::Topic,
            Some("bar"),
            PatternType::Match
        )),
        ["literal *"]
    );
}

#[test]
fn entry_filters_take_none_and_any_as_anything_and_the_rest_exactly() {
    let alice = topic("orders", ALICE, Read, Allow);
    let bob = binding(
        ResourceType::Topic,
        "orders",
        PatternType::Literal,
        BOB,
        HOST,
        Write,
        Deny,
    );
    let everyone = topic("orders", WILDCARD_PRINCIPAL, Describe, Allow);
    let acls = store([alice.clone(), bob.clone(), everyone.clone()]);
    let entries = |entry: AccessControlEntryFilter| {
        acls.describe(&AclBindingFilter {
            pattern: ResourcePatternFilter::ANY,
            entry,
        })
    };
    let any = AccessControlEntryFilter::ANY;
    assert_eq!(entries(any.clone()).len(), 3);
    assert_eq!(
        entries(AccessControlEntryFilter {
            principal: Some(WILDCARD_PRINCIPAL.to_string()),
            ..any.clone()
        }),
        std::slice::from_ref(&everyone)
    );
    assert_eq!(
        entries(AccessControlEntryFilter {
            host: Some(HOST.to_string()),
            ..any.clone()
        }),
        std::slice::from_ref(&bob)
    );
    assert_eq!(
        entries(AccessControlEntryFilter {
            operation: Write,
            ..any.clone()
        }),
        std::slice::from_ref(&bob)
    );
    let allowed = entries(AccessControlEntryFilter {
        permission: Allow,
        ..any.clone()
    });
    assert_eq!(allowed.len(), 2);
    assert!(allowed.contains(&alice) && allowed.contains(&everyone));
    // An entry filter's ALL is the operation ALL, not every operation.
    assert!(
        entries(AccessControlEntryFilter {
            operation: All,
            ..any
        })
        .is_empty()
    );
}

#[test]
fn describe_keeps_and_delete_removes_what_it_returns() {
    let fixture = filter_fixture();
    let mut acls = store(fixture.iter().map(|(_, b)| b.clone()));
    let filter = pattern_filter(ResourceType::Topic, Some("foobar"), PatternType::Match);
    let described = acls.describe(&filter);
    assert_eq!(described.len(), 5);
    assert_eq!(acls.len(), fixture.len());

    let deleted = acls.delete_matching(&filter);
    assert_eq!(deleted, described);
    assert_eq!(acls.len(), fixture.len() - deleted.len());
    for b in &deleted {
        assert!(!acls.contains(b));
    }
    assert!(acls.describe(&filter).is_empty());
    assert!(acls.delete_matching(&filter).is_empty());
    // What was left is still decided on: the group ACL and literal foo remain.
    assert_eq!(on_topic(&acls, ALICE, Read, "foo"), Allowed);
    assert_eq!(on_topic(&acls, ALICE, Read, "foobar"), Denied);

    let rest = acls.delete_matching(&AclBindingFilter::ANY);
    assert_eq!(rest.len(), fixture.len() - deleted.len());
    assert!(acls.is_empty());
    assert_eq!(acls, Acls::default());
}

#[test]
fn creating_an_acl_twice_changes_nothing() {
    let mut acls = Acls::default();
    let acl = topic("orders", ALICE, Read, Allow);
    assert_eq!(acls.create(acl.clone()), Ok(true));
    assert_eq!(acls.create(acl.clone()), Ok(false));
    assert_eq!(acls.len(), 1);
    assert_eq!(acls.describe(&AclBindingFilter::ANY), [acl]);
}

#[test]
fn validation_refuses_what_kafka_refuses_with_invalid_request() {
    let good = topic("orders", ALICE, Read, Allow);
    assert_eq!(validate_new(&good), Ok(()));
    /// `good`, changed.
    fn with(change: impl FnOnce(&mut AclBinding)) -> AclBinding {
        let mut b = topic("orders", ALICE, Read, Allow);
        change(&mut b);
        b
    }
    let refused = [
        (
            with(|b| b.pattern.resource_type = ResourceType::Any),
            AclError::InvalidResourceType(ResourceType::Any),
        ),
        (
            with(|b| b.pattern.resource_type = ResourceType::Unknown),
            AclError::InvalidResourceType(ResourceType::Unknown),
        ),
        (
            with(|b| b.pattern.pattern_type = PatternType::Any),
            AclError::InvalidPatternType(PatternType::Any),
        ),
        (
            with(|b| b.pattern.pattern_type = PatternType::Match),
            AclError::InvalidPatternType(PatternType::Match),
        ),
        (
            with(|b| b.pattern.pattern_type = PatternType::Unknown),
            AclError::InvalidPatternType(PatternType::Unknown),
        ),
        (
            with(|b| b.entry.operation = Operation::Any),
            AclError::InvalidOperation(Operation::Any),
        ),
        (
            with(|b| b.entry.operation = Operation::Unknown),
            AclError::InvalidOperation(Operation::Unknown),
        ),
        (
            with(|b| b.entry.permission = Permission::Any),
            AclError::InvalidPermission(Permission::Any),
        ),
        (
            with(|b| b.entry.permission = Permission::Unknown),
            AclError::InvalidPermission(Permission::Unknown),
        ),
        (
            with(|b| b.pattern.name.clear()),
            AclError::EmptyResourceName,
        ),
        (
            with(|b| b.entry.principal = "alice".to_string()),
            AclError::InvalidPrincipal("alice".to_string()),
        ),
        (
            with(|b| b.entry.principal.clear()),
            AclError::InvalidPrincipal(String::new()),
        ),
        (
            with(|b| {
                b.pattern.resource_type = ResourceType::Cluster;
                b.pattern.name = WILDCARD_RESOURCE.to_string();
            }),
            AclError::InvalidClusterName,
        ),
        (
            with(|b| b.pattern.name = "x".repeat(ACL_FIELD_BYTES_MAX + 1)),
            AclError::ResourceNameTooLong,
        ),
        (
            with(|b| b.entry.principal = format!("User:{}", "x".repeat(ACL_FIELD_BYTES_MAX))),
            AclError::PrincipalTooLong,
        ),
        (
            with(|b| b.entry.host = "h".repeat(ACL_FIELD_BYTES_MAX + 1)),
            AclError::HostTooLong,
        ),
    ];
    let mut acls = Acls::default();
    for (binding, error) in refused {
        assert_eq!(validate_new(&binding), Err(error.clone()), "{binding:?}");
        assert_eq!(error.error_code(), ErrorCode::InvalidRequest);
        assert_eq!(acls.create(binding), Err(error));
    }
    assert!(acls.is_empty());

    // Kafka's principal parse splits at the first colon and accepts an empty name.
    let accepted = [
        with(|b| b.entry.principal = "User:".to_string()),
        with(|b| b.entry.principal = "User:CN=a,O=b:c".to_string()),
        with(|b| {
            b.pattern.resource_type = ResourceType::Cluster;
            b.pattern.name = CLUSTER_NAME.to_string();
        }),
        with(|b| b.pattern.pattern_type = PatternType::Prefixed),
        with(|b| b.entry.permission = Permission::Deny),
        with(|b| b.entry.operation = Operation::All),
    ];
    for binding in accepted {
        assert_eq!(validate_new(&binding), Ok(()), "{binding:?}");
    }
    assert_eq!(
        AclError::InvalidResourceType(ResourceType::Any).to_string(),
        "Invalid resourceType ANY"
    );
}

#[test]
fn filters_with_unknown_fields_are_refused() {
    assert_eq!(AclBindingFilter::ANY.validate(), Ok(()));
    let mut filter = AclBindingFilter::ANY;
    filter.pattern.resource_type = ResourceType::Unknown;
    assert_eq!(filter.validate(), Err(AclError::UnknownPatternFilter));
    let mut filter = AclBindingFilter::ANY;
    filter.pattern.pattern_type = PatternType::Unknown;
    assert_eq!(filter.validate(), Err(AclError::UnknownPatternFilter));
    let mut filter = AclBindingFilter::ANY;
    filter.entry.operation = Operation::Unknown;
    assert_eq!(filter.validate(), Err(AclError::UnknownEntryFilter));
    let mut filter = AclBindingFilter::ANY;
    filter.entry.permission = Permission::Unknown;
    assert_eq!(filter.validate(), Err(AclError::UnknownEntryFilter));
    assert_eq!(
        AclError::UnknownEntryFilter.error_code(),
        ErrorCode::InvalidRequest
    );
}

#[test]
fn a_filter_matches_at_most_one_binding_only_when_every_field_is_definite() {
    let acl = topic("orders", ALICE, Read, Allow);
    let exact = acl.to_filter();
    assert!(exact.matches_at_most_one());
    assert!(exact.matches(&acl));
    assert!(!AclBindingFilter::ANY.matches_at_most_one());
    let mut by_match = exact.clone();
    by_match.pattern.pattern_type = PatternType::Match;
    assert!(!by_match.matches_at_most_one());
    let mut any_host = exact.clone();
    any_host.entry.host = None;
    assert_eq!(any_host.entry.indefinite_field(), Some("Host is NULL"));
    let mut any_name = exact;
    any_name.pattern.name = None;
    assert_eq!(
        any_name.pattern.indefinite_field(),
        Some("Resource name is NULL.")
    );
}

#[test]
fn no_more_than_acls_max_are_held() {
    let mut acls = Acls::default();
    for i in 0..ACLS_MAX {
        assert_eq!(
            acls.create(topic(&format!("t{i}"), ALICE, Read, Allow)),
            Ok(true)
        );
    }
    assert_eq!(acls.len(), ACLS_MAX);
    let one_more = topic("one-more", ALICE, Read, Allow);
    let refused = acls.create(one_more.clone());
    assert_eq!(refused, Err(AclError::TooManyAcls));
    assert_eq!(
        AclError::TooManyAcls.error_code(),
        ErrorCode::PolicyViolation
    );
    assert!(!acls.contains(&one_more));
    assert_eq!(acls.len(), ACLS_MAX);
    // Creating one already held is still a success that changes nothing.
    assert_eq!(acls.create(topic("t0", ALICE, Read, Allow)), Ok(false));
    // A delete makes room.
    let deleted = acls.delete_matching(&topic("t0", ALICE, Read, Allow).to_filter());
    assert_eq!(deleted.len(), 1);
    assert_eq!(acls.create(one_more), Ok(true));
    assert_eq!(acls.len(), ACLS_MAX);
}

#[test]
fn a_snapshot_decodes_to_the_same_acls() {
    let acls = store(filter_fixture().into_iter().map(|(_, b)| b));
    let bytes = postcard::to_stdvec(&acls).unwrap();
    let decoded: Acls = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(decoded, acls);
    assert_eq!(decoded.len(), acls.len());
    assert_eq!(on_topic(&decoded, ALICE, Read, "foobar"), Allowed);

    let empty = postcard::to_stdvec(&Acls::default()).unwrap();
    let decoded: Acls = postcard::from_bytes(&empty).unwrap();
    assert!(decoded.is_empty());
}

// Property tests: the index against a plain reading of Kafka's rules over every binding.

const PRINCIPALS: [&str; 3] = [ALICE, BOB, WILDCARD_PRINCIPAL];
const HOSTS: [&str; 3] = [WILDCARD_HOST, HOST, OTHER_HOST];

/// Names over a small alphabet, with multibyte characters that share a first byte (é, è).
const NAME: &str = "[ab*éè日]{1,4}";

fn operation() -> impl Strategy<Value = Operation> {
    (2i8..=14).prop_map(Operation::from_code)
}

fn resource_type() -> impl Strategy<Value = ResourceType> {
    select(vec![
        ResourceType::Topic,
        ResourceType::Group,
        ResourceType::TransactionalId,
    ])
}

fn acl() -> impl Strategy<Value = AclBinding> {
    (
        resource_type(),
        NAME,
        select(vec![PatternType::Literal, PatternType::Prefixed]),
        select(PRINCIPALS.to_vec()),
        select(HOSTS.to_vec()),
        operation(),
        select(vec![Allow, Deny]),
    )
        .prop_map(|(rt, name, pt, principal, host, op, permission)| {
            binding(rt, &name, pt, principal, host, op, permission)
        })
}

fn filter() -> impl Strategy<Value = AclBindingFilter> {
    (
        select(vec![
            ResourceType::Any,
            ResourceType::Topic,
            ResourceType::Group,
        ]),
        proptest::option::of(NAME),
        select(vec![
            PatternType::Any,
            PatternType::Match,
            PatternType::Literal,
            PatternType::Prefixed,
        ]),
        proptest::option::of(select(PRINCIPALS.to_vec())),
        proptest::option::of(select(HOSTS.to_vec())),
        prop_oneof![Just(Operation::Any), operation()],
        select(vec![Permission::Any, Allow, Deny]),
    )
        .prop_map(
            |(resource_type, name, pattern_type, principal, host, operation, permission)| {
                AclBindingFilter {
                    pattern: ResourcePatternFilter {
                        resource_type,
                        name,
                        pattern_type,
                    },
                    entry: AccessControlEntryFilter {
                        principal: principal.map(str::to_string),
                        host: host.map(str::to_string),
                        operation,
                        permission,
                    },
                }
            },
        )
}

/// Kafka's decision read plainly, over every binding.
fn scan_decision(
    bindings: &[AclBinding],
    settings: &AuthorizerSettings,
    principal: &str,
    host: &str,
    operation: Operation,
    resource_type: ResourceType,
    name: &str,
) -> Decision {
    if settings.super_users.contains(principal) {
        return Allowed;
    }
    let on_resource: Vec<&AclBinding> = bindings
        .iter()
        .filter(|b| {
            b.pattern.resource_type == resource_type
                && match b.pattern.pattern_type {
                    PatternType::Literal => b.pattern.name == name || b.pattern.name == "*",
                    PatternType::Prefixed => name.starts_with(b.pattern.name.as_str()),
                    _ => false,
                }
        })
        .collect();
    let applies = |b: &&&AclBinding| {
        (b.entry.principal == principal || b.entry.principal == "User:*")
            && (b.entry.host == host || b.entry.host == "*")
    };
    let denied = on_resource.iter().filter(applies).any(|b| {
        b.entry.permission == Deny && (b.entry.operation == All || b.entry.operation == operation)
    });
    if denied {
        return Denied;
    }
    let allowed = on_resource.iter().filter(applies).any(|b| {
        let granted = b.entry.operation;
        b.entry.permission == Allow
            && (granted == All
                || granted == operation
                || (operation == Describe && [Read, Write, Delete, Alter].contains(&granted))
                || (operation == DescribeConfigs && granted == AlterConfigs))
    });
    if allowed || (on_resource.is_empty() && settings.allow_everyone_if_no_acl_found) {
        Allowed
    } else {
        Denied
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

proptest! {
    #[test]
    fn the_index_decides_as_a_scan_of_every_binding(
        bindings in proptest::collection::vec(acl(), 0..40),
        principal in select(vec![ALICE, BOB, "User:carol", "Service:x"]),
        host in select(vec![HOST, OTHER_HOST]),
        operation in operation(),
        resource_type in resource_type(),
        name in "[ab*éè日]{0,5}",
        allow_everyone in any::<bool>(),
    ) {
        let acls = store(bindings.iter().cloned());
        let held = acls.describe(&AclBindingFilter::ANY);
        let settings = AuthorizerSettings {
            super_users: Default::default(),
            allow_everyone_if_no_acl_found: allow_everyone,
        };
        prop_assert_eq!(
            authorize(&acls, &settings, principal, host, operation, resource_type, &name),
            scan_decision(&held, &settings, principal, host, operation, resource_type, &name)
        );

        // The entries a decision reads are those of the patterns MATCH finds.
        let matching = AclBindingFilter {
            pattern: ResourcePatternFilter {
                resource_type,
                name: Some(name.clone()),
                pattern_type: PatternType::Match,
            },
            entry: AccessControlEntryFilter::ANY,
        };
        let read: Vec<AccessControlEntry> =
            acls.entries_on(resource_type, &name).cloned().collect();
        let scanned: Vec<AccessControlEntry> = held
            .iter()
            .filter(|b| matching.matches(b))
            .map(|b| b.entry.clone())
            .collect();
        prop_assert_eq!(sorted(read), sorted(scanned));
    }

    #[test]
    fn delete_removes_exactly_what_the_filter_matches(
        bindings in proptest::collection::vec(acl(), 0..40),
        filter in filter(),
    ) {
        let mut acls = store(bindings.iter().cloned());
        let before = acls.describe(&AclBindingFilter::ANY);
        prop_assert_eq!(acls.len(), before.len());
        let (expected, kept): (Vec<AclBinding>, Vec<AclBinding>) =
            before.into_iter().partition(|b| filter.matches(b));
        prop_assert_eq!(acls.describe(&filter), expected.clone());
        prop_assert_eq!(acls.delete_matching(&filter), expected);
        prop_assert_eq!(acls.describe(&AclBindingFilter::ANY), kept.clone());
        prop_assert_eq!(acls.len(), kept.len());
        prop_assert_eq!(acls, store(kept));
    }

    #[test]
    fn a_snapshot_of_any_acls_decodes_to_them(
        bindings in proptest::collection::vec(acl(), 0..40),
    ) {
        let acls = store(bindings);
        let bytes = postcard::to_stdvec(&acls).unwrap();
        let decoded: Acls = postcard::from_bytes(&bytes).unwrap();
        prop_assert_eq!(decoded.len(), acls.len());
        prop_assert_eq!(decoded, acls);
    }
}
