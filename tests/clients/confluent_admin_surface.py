"""Topic configs, per-topic produce rules and group views through confluent-kafka's admin
client (librdkafka) and kafka-python's legacy AlterConfigs, checked against Kafka's answers.

Usage: confluent_admin_surface.py BOOTSTRAP PREFIX
"""
import os
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   ConfigSource, NewTopic, ResourceType)

bootstrap, prefix = sys.argv[1], sys.argv[2]
admin = AdminClient({"bootstrap.servers": bootstrap})


def create(name, config=None, partitions=1):
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])
    futures[name].result(timeout=30)


def describe(name):
    resource = ConfigResource(ResourceType.TOPIC, name)
    return admin.describe_configs([resource])[resource].result(timeout=30)


# A bad config is refused with Kafka's error and message; nothing is created.
for config, message in [
    ({"retnetion.ms": "1"}, "Unknown topic config name: retnetion.ms"),
    ({"retention.ms": "soon"}, "Not a number of type LONG"),
    ({"cleanup.policy": "shred"}, "String must be one of: compact, delete"),
]:
    try:
        create(f"{prefix}-bad", config)
        raise AssertionError(f"{config} was accepted")
    except KafkaException as e:
        error = e.args[0]
        assert error.code() == KafkaError.INVALID_CONFIG, error
        assert message in error.str(), error.str()
assert f"{prefix}-bad" not in admin.list_topics(timeout=10).topics

# Every config is described, with its source; what the topic sets is normalised.
topic = f"{prefix}-configs"
create(topic, {"retention.ms": " 3600000 ", "preallocate": "TRUE"})
configs = describe(topic)
assert len(configs) >= 33, sorted(configs)
assert configs["retention.ms"].value == "3600000"
assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
assert configs["preallocate"].value == "true"
assert configs["segment.bytes"].value == "1073741824"
assert configs["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
assert configs["cleanup.policy"].value == "delete"

# APPEND and SUBTRACT on a list config, SET and DELETE on others.
resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
    ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
    ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
    ConfigEntry("segment.ms", "60000", incremental_operation=AlterConfigOpType.SET),
])
admin.incremental_alter_configs([resource])[resource].result(timeout=30)
configs = describe(topic)
assert configs["cleanup.policy"].value == "delete,compact", configs["cleanup.policy"].value
assert configs["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
assert configs["segment.ms"].value == "60000"
resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
    ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SUBTRACT),
])
admin.incremental_alter_configs([resource])[resource].result(timeout=30)
assert describe(topic)["cleanup.policy"].value == "compact"
resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
    ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.APPEND),
])
try:
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)
    raise AssertionError("APPEND to a LONG was accepted")
except KafkaException as e:
    assert "because its type is not LIST" in e.args[0].str(), e.args[0].str()

# The broker resource shows floe's settings under Kafka's names.
broker_id = next(iter(admin.list_topics(timeout=10).brokers))
resource = ConfigResource(ResourceType.BROKER, str(broker_id))
broker = admin.describe_configs([resource])[resource].result(timeout=30)
assert broker["message.max.bytes"].value == "1048588", broker["message.max.bytes"]
assert broker["log.segment.bytes"].value == "1073741824"
assert broker["num.partitions"].is_read_only

# A compacted topic refuses records without keys; keyed records go through.
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
outcomes = []
# (As in Kafka, one keyless record fails its whole batch: each goes alone.)
producer.produce(topic, key=None, value=b"no key", on_delivery=lambda e, m: outcomes.append(e))
producer.flush(30)
producer.produce(topic, key=b"k", value=b"keyed", on_delivery=lambda e, m: outcomes.append(e))
producer.flush(30)
assert outcomes[0] is not None and outcomes[0].code() == KafkaError.INVALID_RECORD, outcomes
assert outcomes[1] is None, outcomes

# LogAppendTime: the broker's time replaces the producer's.
stamped = f"{prefix}-append-time"
create(stamped, {"message.timestamp.type": "LogAppendTime"})
before = int(time.time() * 1000)
producer.produce(stamped, value=b"old", timestamp=1_000_000_000_000)
producer.flush(30)
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}-reader",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})
consumer.assign([TopicPartition(stamped, 0, 0)])
message = None
deadline = time.time() + 30
while message is None and time.time() < deadline:
    message = consumer.poll(1)
assert message is not None and message.error() is None, message
kind, when = message.timestamp()
assert kind == 2, f"timestamp type {kind}, not LogAppendTime"
assert before - 60_000 <= when <= int(time.time() * 1000) + 60_000, when
consumer.commit(message=message, asynchronous=False)
consumer.close()

# max.message.bytes and compression.type are per topic.
small = f"{prefix}-small"
create(small, {"max.message.bytes": "2000", "compression.type": "zstd"})
outcomes.clear()
zstd = Producer({"bootstrap.servers": bootstrap, "compression.type": "zstd"})
zstd.produce(small, value=b"x" * 100, on_delivery=lambda e, m: outcomes.append(e))
zstd.flush(30)
zstd.produce(small, value=os.urandom(4000), on_delivery=lambda e, m: outcomes.append(e))
zstd.flush(30)
assert outcomes[0] is None, outcomes
assert outcomes[1] is not None and outcomes[1].code() == KafkaError.MSG_SIZE_TOO_LARGE, outcomes
outcomes.clear()
gzip = Producer({"bootstrap.servers": bootstrap, "compression.type": "gzip"})
gzip.produce(small, value=b"x" * 100, on_delivery=lambda e, m: outcomes.append(e))
gzip.flush(30)
assert outcomes[0] is not None and outcomes[0].code() == KafkaError.INVALID_RECORD, outcomes

# A group with offsets but no members is listed and described as Empty.
listed = admin.list_consumer_groups().result(timeout=30)
states = {g.group_id: g.state.name for g in listed.valid}
assert states.get(f"{prefix}-reader") == "EMPTY", states
described = admin.describe_consumer_groups([f"{prefix}-reader"])[f"{prefix}-reader"].result(30)
assert described.state.name == "EMPTY", described.state

# kafka-python through the legacy AlterConfigs (which it fills with the topic's other
# dynamic configs, since the request replaces them all).
from kafka.admin import ConfigResource as KpResource, ConfigResourceType, KafkaAdminClient

legacy = KafkaAdminClient(bootstrap_servers=bootstrap)
legacy.alter_configs([KpResource(ConfigResourceType.TOPIC, topic,
                                 configs={"retention.bytes": "1000000"})], incremental=False)
legacy.close()
configs = describe(topic)
assert configs["retention.bytes"].value == "1000000"
assert configs["retention.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
print("admin surface: configs, produce rules and group views as Kafka answers them")
