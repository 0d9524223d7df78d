"""Transactions with kafka-python, an implementation that shares no code with librdkafka.

Usage: txn_kafka_python.py BOOTSTRAP TOPIC
Commits 5 records, aborts 5, and reads the topic back read_committed with kafka-python's own
consumer. Prints one JSON line.
"""
import json
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap, topic = sys.argv[1], sys.argv[2]
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
admin.close()

producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="kp-" + topic)
producer.init_transactions()
producer.begin_transaction()
for i in range(5):
    producer.send(topic, value=b"kept-%d" % i, partition=0)
producer.commit_transaction()
producer.begin_transaction()
for i in range(5):
    producer.send(topic, value=b"dropped-%d" % i, partition=0)
producer.flush()
producer.abort_transaction()
producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                         enable_auto_commit=False, auto_offset_reset="earliest",
                         consumer_timeout_ms=5000)
consumer.assign([TopicPartition(topic, 0)])
consumer.seek_to_beginning()
committed = [m.value.decode() for m in consumer]
consumer.close()
print(json.dumps({"committed": committed}))
