"""aiokafka, an asyncio implementation that shares no code with librdkafka: admin client, an
idempotent producer, a consumer group committing offsets, offsets for times, and the group's
offsets read back.

Usage: aiokafka_smoke.py BOOTSTRAP TOPIC COUNT
"""
import asyncio
import sys

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])


async def main():
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
    assert topic in await admin.list_topics()

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True,
                                compression_type="gzip")
    await producer.start()
    acked = {}
    for i in range(count):
        md = await producer.send_and_wait(topic, key=b"k%d" % i, value=b"v%d" % i,
                                          partition=i % 2, timestamp_ms=1_700_000_000_000 + i)
        acked.setdefault(md.partition, []).append(md.offset)
    await producer.stop()
    for p, offsets in acked.items():
        assert offsets == list(range(len(offsets))), f"partition {p}: {offsets[:5]}"

    group = f"{topic}-group"
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    seen = set()
    while len(seen) < count:
        batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 60)
        for tp, records in batch.items():
            for r in records:
                assert r.value == b"v" + r.key[1:], r
                assert (r.key, r.offset) not in seen, f"{r.key} read twice"
                seen.add((r.key, r.offset))
    await consumer.commit()
    # Record 10 of partition 0 (the 21st sent) by its timestamp.
    found = await consumer.offsets_for_times({TopicPartition(topic, 0): 1_700_000_000_000 + 20})
    assert found[TopicPartition(topic, 0)].offset == 10, found
    await consumer.stop()

    offsets = await admin.list_consumer_group_offsets(group)
    assert sum(o.offset for o in offsets.values()) == count, offsets
    groups = await admin.list_consumer_groups()
    assert any(g[0] == group for g in groups), groups
    await admin.delete_topics([topic])
    await admin.close()
    print(f"aiokafka: {count} records produced, consumed by a group, offsets committed")


asyncio.run(main())
