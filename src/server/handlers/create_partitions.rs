//! CreatePartitions (key 37): grows a topic's partition count.

use crate::metadata::{Command, Outcome};
use crate::protocol::ErrorCode;
use crate::protocol::messages::CreatePartitionsRequest;
use crate::protocol::messages::CreatePartitionsResponse;
use crate::protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use crate::server::broker::{Broker, topic_error_code};

pub async fn handle(broker: &Broker, request: CreatePartitionsRequest) -> CreatePartitionsResponse {
    let mut results = Vec::new();
    for topic in &request.topics {
        let current = broker
            .metadata
            .read(|s| s.topic(&topic.name).map(|t| t.partitions.len() as i32));
        let (code, message) = match current {
            None => (ErrorCode::UnknownTopicOrPartition, None),
            Some(n) if topic.count <= n => (
                ErrorCode::InvalidPartitions,
                Some(format!(
                    "topic has {n} partitions; the new count must be larger"
                )),
            ),
            Some(_) if request.validate_only => (ErrorCode::None, None),
            Some(_) => match broker
                .metadata
                .apply_one(Command::CreatePartitions {
                    name: topic.name.clone(),
                    total: topic.count,
                })
                .await
            {
                Ok(Outcome::Topic(Ok(()))) => (ErrorCode::None, None),
                Ok(Outcome::Topic(Err(e))) => (topic_error_code(e), None),
                _ => (ErrorCode::KafkaStorageError, None),
            },
        };
        results.push(CreatePartitionsTopicResult {
            name: topic.name.clone(),
            error_code: code.code(),
            error_message: message,
            ..Default::default()
        });
    }
    CreatePartitionsResponse {
        results,
        ..Default::default()
    }
}
