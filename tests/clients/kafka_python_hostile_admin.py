"""Hostile admin requests through kafka-python: each gets Kafka's error, and the broker keeps
serving.

Usage: kafka_python_hostile_admin.py BOOTSTRAP TOPIC
"""
import sys
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import InvalidConfigurationError, InvalidPartitionsError, InvalidTopicError

bootstrap, topic = sys.argv[1], sys.argv[2]
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])


def refused(what, error, call):
    try:
        call()
    except error as e:
        print(f"{what}: {type(e).__name__}")
        return
    raise AssertionError(f"{what} was accepted")


# The request that used to abort every node, on every restart.
refused("create_partitions 2e9", InvalidPartitionsError,
        lambda: admin.create_partitions({topic: 2_000_000_000}))
refused("create_partitions i32::MAX", InvalidPartitionsError,
        lambda: admin.create_partitions({topic: 2**31 - 1}))
refused("create_topics 2e9", InvalidPartitionsError,
        lambda: admin.create_topics([NewTopic(topic + "-huge", num_partitions=2_000_000_000,
                                              replication_factor=1)]))
refused("create_topics long name", InvalidTopicError,
        lambda: admin.create_topics([NewTopic("x" * 250, num_partitions=1, replication_factor=1)]))
refused("create_topics 300 configs", InvalidConfigurationError,
        lambda: admin.create_topics([NewTopic(topic + "-configs", num_partitions=1,
                                              replication_factor=1,
                                              topic_configs={f"k{i}": "v" for i in range(300)})]))
admin.close()

# Everyone else is still served.
producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
producer.send(topic, b"after").get(timeout=30)
producer.close()
print("ok")
