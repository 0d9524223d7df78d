"""Measures produce and consume throughput of a running floe with confluent-kafka (librdkafka).

Usage: python3 scripts/throughput.py [--bootstrap 127.0.0.1:9092] [--records 200000] [--size 1024]
Prints MB/s (10^6 bytes of record values per second) for an idempotent acks=all producer and
for a consumer reading the same records back with assign().
"""
import argparse
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

parser = argparse.ArgumentParser()
parser.add_argument("--bootstrap", default="127.0.0.1:9092")
parser.add_argument("--records", type=int, default=200_000)
parser.add_argument("--size", type=int, default=1024)
parser.add_argument("--partitions", type=int, default=8)
parser.add_argument("--compression", default="none")
args = parser.parse_args()

topic = f"throughput-{uuid.uuid4().hex[:8]}"
admin = AdminClient({"bootstrap.servers": args.bootstrap})
for f in admin.create_topics([NewTopic(topic, num_partitions=args.partitions)]).values():
    f.result(30)

value = b"x" * args.size
failed = []
producer = Producer({
    "bootstrap.servers": args.bootstrap,
    "enable.idempotence": True,
    "compression.type": args.compression,
    "linger.ms": 5,
    "batch.size": 1_000_000,
})
start = time.perf_counter()
for i in range(args.records):
    while True:
        try:
            producer.produce(topic, value=value, partition=i % args.partitions,
                             on_delivery=lambda err, _m: err and failed.append(err))
            break
        except BufferError:
            producer.poll(0.01)
    producer.poll(0)
producer.flush(120)
produce_s = time.perf_counter() - start
assert not failed, failed[:3]

consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": topic,
                     "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 8388608})
consumer.assign([TopicPartition(topic, p, 0) for p in range(args.partitions)])
start = time.perf_counter()
read = 0
while read < args.records:
    for m in consumer.consume(10000, 5):
        if m.error() is None:
            read += 1
consume_s = time.perf_counter() - start
consumer.close()

mb = args.records * args.size / 1e6
print(f"records={args.records} size={args.size}B partitions={args.partitions} compression={args.compression}")
print(f"produce: {mb / produce_s:.1f} MB/s ({args.records / produce_s:,.0f} records/s)")
print(f"consume: {mb / consume_s:.1f} MB/s ({args.records / consume_s:,.0f} records/s)")
