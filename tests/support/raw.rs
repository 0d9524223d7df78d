//! Requests written out by hand for tests and benches that speak the protocol directly (a
//! raw client that ignores throttle times, say): topics, quotas, produce.

use super::kafka_call;
use floe::protocol::messages::*;

/// Sets `key` to `value` on the entity of `parts` (`(type, name)`, `None`: the default).
pub fn set_quota(bootstrap: &str, parts: &[(&str, Option<&str>)], key: &str, value: f64) {
    let request = RequestBody::AlterClientQuotas(AlterClientQuotasRequest {
        entries: vec![alter_client_quotas_request::EntryData {
            entity: parts
                .iter()
                .map(|(t, n)| alter_client_quotas_request::EntityData {
                    entity_type: t.to_string(),
                    entity_name: n.map(String::from),
                    ..Default::default()
                })
                .collect(),
            ops: vec![alter_client_quotas_request::OpData {
                key: key.into(),
                value,
                remove: false,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseBody::AlterClientQuotas(response) = kafka_call(bootstrap, 1, request) else {
        panic!("not an AlterClientQuotas response");
    };
    assert!(
        response.entries.iter().all(|e| e.error_code == 0),
        "{response:?}"
    );
}

/// A CreateTopics request for one topic of `partitions`.
pub fn create_topics_request(name: &str, partitions: i32) -> RequestBody {
    RequestBody::CreateTopics(CreateTopicsRequest {
        topics: vec![create_topics_request::CreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    })
}

pub fn create_topic(bootstrap: &str, name: &str, partitions: i32) {
    let request = create_topics_request(name, partitions);
    let ResponseBody::CreateTopics(response) = kafka_call(bootstrap, 7, request) else {
        panic!("not a CreateTopics response");
    };
    assert_eq!(response.topics[0].error_code, 0, "{response:?}");
}

/// An acks=all produce of `batch` to partition 0 of `topic`.
pub fn produce_request(topic: &str, batch: &bytes::Bytes) -> RequestBody {
    RequestBody::Produce(ProduceRequest {
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![produce_request::TopicProduceData {
            name: topic.into(),
            partition_data: vec![produce_request::PartitionProduceData {
                index: 0,
                records: Some(batch.clone().into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    })
}
