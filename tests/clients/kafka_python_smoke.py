"""Produce and consume through floe with kafka-python, an independent protocol implementation.

Usage: kafka_python_smoke.py BOOTSTRAP TOPIC COUNT
"""
import sys
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])

admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
assert topic in admin.list_topics()
admin.close()

producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
futures = [producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % 2,
                         headers=[("n", str(i).encode())]) for i in range(count)]
producer.flush()
acked = {}
for f in futures:
    md = f.get(timeout=30)
    acked.setdefault(md.partition, []).append(md.offset)
producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                         auto_offset_reset="earliest", consumer_timeout_ms=10000)
parts = [TopicPartition(topic, p) for p in (0, 1)]
consumer.assign(parts)
consumer.seek_to_beginning()
got = {0: [], 1: []}
for msg in consumer:
    got[msg.partition].append((msg.offset, msg.key, msg.value))
    if sum(len(v) for v in got.values()) == count:
        break
consumer.close()
for p in (0, 1):
    assert [o for o, _, _ in got[p]] == acked[p], f"partition {p}: offsets differ"
    for offset, key, value in got[p]:
        assert key == b"k" + value[1:], (key, value)
print(f"kafka-python: {count} records produced and read back in order")
