"""Produce and consume through floe with confluent-kafka (librdkafka), idempotent, per codec.

Usage: confluent_smoke.py BOOTSTRAP TOPIC COUNT
Exits non-zero unless every acknowledged record is read back exactly once, in order.
"""
import sys
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
partitions = 4

admin = AdminClient({"bootstrap.servers": bootstrap})
for future in admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values():
    future.result(timeout=30)

for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
    acked = {}
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked.setdefault(msg.partition(), []).append((msg.offset(), msg.key(), msg.value()))

    producer = Producer({
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "compression.type": codec,
        "linger.ms": 5,
    })
    for i in range(count):
        producer.produce(topic, key=f"k{i}".encode(), value=f"{codec}-{i}".encode() * 8,
                         partition=i % partitions, headers=[("h", b"1"), ("h", b"2")],
                         on_delivery=on_delivery)
        producer.poll(0)
    producer.flush(60)
    assert not errors, errors
    assert sum(len(v) for v in acked.values()) == count, "not every record was acknowledged"

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"smoke-{codec}",
                         "enable.auto.commit": False})
    for partition, records in acked.items():
        first = records[0][0]
        consumer.assign([TopicPartition(topic, partition, first)])
        seen = []
        while len(seen) < len(records):
            msg = consumer.poll(10)
            assert msg is not None, f"{codec}: timed out after {len(seen)} of {len(records)} records"
            assert msg.error() is None, msg.error()
            seen.append((msg.offset(), msg.key(), msg.value()))
            assert msg.headers() == [("h", b"1"), ("h", b"2")], msg.headers()
        assert seen == records, f"{codec}: partition {partition} differs from what was acknowledged"
        consumer.commit(offsets=[TopicPartition(topic, partition, records[-1][0] + 1)], asynchronous=False)
        committed = consumer.committed([TopicPartition(topic, partition)], timeout=10)[0].offset
        assert committed == records[-1][0] + 1, committed
    consumer.close()
    print(f"confluent-kafka {codec}: {count} records produced and read back in order")
