//! What Kafka's `getErrorResponse` answers for the requests whose response has no top-level
//! `ErrorCode` in every version: which of the request's items it echoes, and with what.
//! Read from `clients/src/main/java/org/apache/kafka/common/requests/<Api>Request.java`.
//!
//! Fields a version does not carry are left at their defaults by the generated code, so one
//! shape covers every version: FindCoordinator's top-level `NodeId` is set up to v3, its
//! `Coordinators` from v4.

/// One request's error answer.
pub struct Shape {
    /// The API's name, without `Request`.
    pub api: &'static str,
    /// Top-level fields other than `ErrorCode` (always set where present): (field, Rust value).
    pub top: &'static [(&'static str, &'static str)],
    /// The items echoed with the error.
    pub items: &'static [Echo],
    /// Items that name one thing twice answer once, sorted by this field of the response array
    /// (array, field).
    pub distinct: Option<(&'static str, &'static str)>,
}

/// Echoes each element of a request array as an element of a response array.
pub struct Echo {
    /// The request array (of structs, or of scalars such as group ids).
    pub from: &'static str,
    /// The response array.
    pub to: &'static str,
    /// Copied fields: (response field, request field); `""` copies a scalar element itself.
    pub copy: &'static [(&'static str, &'static str)],
    /// The field that carries the error, if this level has one.
    pub error: Option<&'static str>,
    /// Other fields: (field, Rust value).
    pub set: &'static [(&'static str, &'static str)],
    /// Nested arrays (partitions of a topic).
    pub children: &'static [Echo],
    /// The versions in which the whole-request answer echoes these items; the per-item answer
    /// (`ItemErrors`) always does.
    pub whole: (i16, i16),
}

const ALL: (i16, i16) = (0, i16::MAX);

impl Echo {
    const fn new(from: &'static str, to: &'static str) -> Echo {
        Echo {
            from,
            to,
            copy: &[],
            error: Some("ErrorCode"),
            set: &[],
            children: &[],
            whole: ALL,
        }
    }
}

macro_rules! echo {
    ($from:literal => $to:literal { $($field:ident: $value:expr),* $(,)? }) => {
        Echo { $($field: $value,)* ..Echo::new($from, $to) }
    };
}

pub const SHAPES: &[Shape] = &[
    // Requests answered at the top level, with values other than the JSON defaults.
    Shape {
        distinct: None,
        api: "JoinGroup",
        top: &[(
            "ProtocolName",
            "if version >= 7 { None } else { Some(String::new()) }",
        )],
        items: &[],
    },
    Shape {
        distinct: None,
        api: "DescribeUserScramCredentials",
        top: &[],
        // One result per user named, its name not copied (as Kafka answers).
        items: &[echo!("Users" => "Results" {})],
    },
    Shape {
        distinct: None,
        api: "InitProducerId",
        top: &[("ProducerEpoch", "-1")],
        items: &[],
    },
    // Requests answered item by item.
    Shape {
        distinct: None,
        api: "Produce",
        top: &[],
        items: &[echo!("TopicData" => "Responses" {
            copy: &[("Name", "Name"), ("TopicId", "TopicId")],
            error: None,
            children: &[echo!("PartitionData" => "PartitionResponses" {
                copy: &[("Index", "Index")],
                set: &[("BaseOffset", "-1"), ("LogAppendTimeMs", "-1"), ("LogStartOffset", "-1")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "Fetch",
        top: &[("SessionId", "self.session_id")],
        items: &[echo!("Topics" => "Responses" {
            copy: &[("Topic", "Topic"), ("TopicId", "TopicId")],
            error: None,
            children: &[echo!("Partitions" => "Partitions" {
                copy: &[("PartitionIndex", "Partition")],
                set: &[
                    ("HighWatermark", "-1"),
                    // Empty, not null: clients read a null record set as corrupt.
                    ("Records", "Some(Default::default())"),
                ],
            })],
            // From v13 the top-level error alone answers.
            whole: (0, 12),
        })],
    },
    Shape {
        distinct: None,
        api: "ListOffsets",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Name", "Name")],
            error: None,
            children: &[echo!("Partitions" => "Partitions" {
                copy: &[("PartitionIndex", "PartitionIndex")],
                set: &[("Timestamp", "-1"), ("Offset", "-1")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "Metadata",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Name", "Name"), ("TopicId", "TopicId")],
        })],
    },
    Shape {
        distinct: None,
        api: "OffsetCommit",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Name", "Name"), ("TopicId", "TopicId")],
            error: None,
            children: &[echo!("Partitions" => "Partitions" {
                copy: &[("PartitionIndex", "PartitionIndex")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "TxnOffsetCommit",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Name", "Name")],
            error: None,
            children: &[echo!("Partitions" => "Partitions" {
                copy: &[("PartitionIndex", "PartitionIndex")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "OffsetFetch",
        top: &[],
        items: &[
            // Before v2 each named partition answers; v2–7 the top-level error alone.
            echo!("Topics" => "Topics" {
                copy: &[("Name", "Name")],
                error: None,
                children: &[echo!("PartitionIndexes" => "Partitions" {
                    copy: &[("PartitionIndex", "")],
                    set: &[("CommittedOffset", "-1"), ("Metadata", "Some(String::new())")],
                })],
                whole: (0, 1),
            }),
            echo!("Groups" => "Groups" { copy: &[("GroupId", "GroupId")] }),
        ],
    },
    Shape {
        distinct: None,
        api: "FindCoordinator",
        top: &[("NodeId", "-1"), ("Host", "String::new()"), ("Port", "-1")],
        items: &[echo!("CoordinatorKeys" => "Coordinators" {
            copy: &[("Key", "")],
            set: &[("NodeId", "-1"), ("Host", "String::new()"), ("Port", "-1")],
        })],
    },
    Shape {
        distinct: None,
        api: "DescribeGroups",
        top: &[],
        items: &[echo!("Groups" => "Groups" { copy: &[("GroupId", "")] })],
    },
    Shape {
        distinct: None,
        api: "DeleteGroups",
        top: &[],
        items: &[echo!("GroupsNames" => "Results" { copy: &[("GroupId", "")] })],
    },
    Shape {
        distinct: None,
        api: "ConsumerGroupDescribe",
        top: &[],
        items: &[echo!("GroupIds" => "Groups" { copy: &[("GroupId", "")] })],
    },
    Shape {
        distinct: None,
        api: "AlterClientQuotas",
        top: &[],
        items: &[echo!("Entries" => "Entries" {
            children: &[echo!("Entity" => "Entity" {
                copy: &[("EntityType", "EntityType"), ("EntityName", "EntityName")],
                error: None,
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "ShareGroupDescribe",
        top: &[],
        items: &[echo!("GroupIds" => "Groups" { copy: &[("GroupId", "")] })],
    },
    Shape {
        distinct: None,
        api: "DescribeShareGroupOffsets",
        top: &[],
        items: &[echo!("Groups" => "Groups" { copy: &[("GroupId", "GroupId")] })],
    },
    Shape {
        distinct: None,
        api: "DescribeTransactions",
        top: &[],
        items: &[echo!("TransactionalIds" => "TransactionStates" {
            copy: &[("TransactionalId", "")],
        })],
    },
    Shape {
        distinct: None,
        api: "CreateTopics",
        top: &[],
        items: &[echo!("Topics" => "Topics" { copy: &[("Name", "Name")] })],
    },
    Shape {
        distinct: None,
        api: "DeleteTopics",
        top: &[],
        items: &[
            echo!("TopicNames" => "Responses" { copy: &[("Name", "")] }),
            echo!("Topics" => "Responses" { copy: &[("Name", "Name"), ("TopicId", "TopicId")] }),
        ],
    },
    Shape {
        distinct: None,
        api: "CreatePartitions",
        top: &[],
        items: &[echo!("Topics" => "Results" { copy: &[("Name", "Name")] })],
    },
    Shape {
        distinct: None,
        api: "DescribeConfigs",
        top: &[],
        items: &[echo!("Resources" => "Results" {
            copy: &[("ResourceType", "ResourceType"), ("ResourceName", "ResourceName")],
        })],
    },
    Shape {
        distinct: None,
        api: "AlterConfigs",
        top: &[],
        items: &[echo!("Resources" => "Responses" {
            copy: &[("ResourceType", "ResourceType"), ("ResourceName", "ResourceName")],
        })],
    },
    Shape {
        distinct: None,
        api: "IncrementalAlterConfigs",
        top: &[],
        items: &[echo!("Resources" => "Responses" {
            copy: &[("ResourceType", "ResourceType"), ("ResourceName", "ResourceName")],
        })],
    },
    Shape {
        distinct: None,
        api: "OffsetForLeaderEpoch",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Topic", "Topic")],
            error: None,
            children: &[echo!("Partitions" => "Partitions" {
                copy: &[("Partition", "Partition")],
                set: &[("LeaderEpoch", "-1"), ("EndOffset", "-1")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "DeleteRecords",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Name", "Name")],
            error: None,
            children: &[echo!("Partitions" => "Partitions" {
                copy: &[("PartitionIndex", "PartitionIndex")],
                set: &[("LowWatermark", "-1")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "DescribeProducers",
        top: &[],
        items: &[echo!("Topics" => "Topics" {
            copy: &[("Name", "Name")],
            error: None,
            children: &[echo!("PartitionIndexes" => "Partitions" {
                copy: &[("PartitionIndex", "")],
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "DescribeTopicPartitions",
        top: &[],
        items: &[echo!("Topics" => "Topics" { copy: &[("Name", "Name")] })],
    },
    Shape {
        distinct: None,
        api: "DescribeLogDirs",
        top: &[],
        items: &[],
    },
    Shape {
        distinct: None,
        api: "AddPartitionsToTxn",
        top: &[],
        items: &[echo!("V3AndBelowTopics" => "ResultsByTopicV3AndBelow" {
            copy: &[("Name", "Name")],
            error: None,
            children: &[echo!("Partitions" => "ResultsByPartition" {
                copy: &[("PartitionIndex", "")],
                error: Some("PartitionErrorCode"),
            })],
        })],
    },
    Shape {
        distinct: None,
        api: "CreateAcls",
        top: &[],
        items: &[echo!("Creations" => "Results" {})],
    },
    Shape {
        distinct: None,
        api: "DeleteAcls",
        top: &[],
        items: &[echo!("Filters" => "FilterResults" {})],
    },
    Shape {
        // One result per user, sorted: Kafka collects the names into a sorted set.
        distinct: Some(("Results", "User")),
        api: "AlterUserScramCredentials",
        top: &[],
        items: &[
            echo!("Deletions" => "Results" { copy: &[("User", "Name")] }),
            echo!("Upsertions" => "Results" { copy: &[("User", "Name")] }),
        ],
    },
];
