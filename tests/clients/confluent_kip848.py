"""A KIP-848 consumer group with confluent-kafka (librdkafka): two `group.protocol=consumer`
members read every record once; the admin client describes the group (ConsumerGroupDescribe),
lists it as a consumer group (ListGroups) and reads its committed offsets (OffsetFetch).

Usage: confluent_kip848.py BOOTSTRAP TOPIC COUNT
"""
import sys
import time
from confluent_kafka import Consumer, ConsumerGroupType, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka import ConsumerGroupTopicPartitions

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
partitions = 6
group = f"{topic}-group"

admin = AdminClient({"bootstrap.servers": bootstrap})
for future in admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values():
    future.result(timeout=30)
producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
for i in range(count):
    producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % partitions)
assert producer.flush(60) == 0

consumers = [
    Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "client.id": f"member-{i}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    for i in range(2)
]
for c in consumers:
    c.subscribe([topic])

seen = {}
stale_commits = 0
deadline = time.monotonic() + 60
while len(seen) < count or any(not c.assignment() for c in consumers):
    assert time.monotonic() < deadline, f"read {len(seen)} of {count}"
    for i, c in enumerate(consumers):
        msg = c.poll(0.05)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        # A partition may move from the first member to the second as it joins; it goes on
        # from the committed offset, so no record is read twice — unless a commit was refused
        # because it raced the member's move to a new epoch (STALE_MEMBER_EPOCH, retriable).
        position = (msg.partition(), msg.offset())
        assert position not in seen or stale_commits, f"{position} read twice"
        seen[position] = i
        try:
            c.commit(message=msg, asynchronous=False)
        except KafkaException as e:
            assert e.args[0].code() == KafkaError.STALE_MEMBER_EPOCH, e
            stale_commits += 1

description = admin.describe_consumer_groups([group])[group].result(timeout=30)
assert description.type == ConsumerGroupType.CONSUMER, description.type
assert description.partition_assignor == "uniform", description.partition_assignor
assert len(description.members) == 2, description.members
assigned = sorted(
    tp.partition for m in description.members for tp in m.assignment.topic_partitions
)
assert assigned == list(range(partitions)), assigned
assert {m.client_id for m in description.members} == {"member-0", "member-1"}
assert all(m.host.startswith("/127.0.0.1") for m in description.members), description.members

listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(timeout=30)
assert group in [g.group_id for g in listed.valid], listed.valid

offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
committed = offsets.result(timeout=30).topic_partitions
assert sum(tp.offset for tp in committed) == count, committed

for c in consumers:
    c.close()
print(f"KIP-848 group {group}: {count} records read once by 2 members; described and listed"
      f" ({stale_commits} commits refused as stale)")

# A classic group next to it: the admin client falls back to DescribeGroups for it.
classic = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-classic",
                    "auto.offset.reset": "earliest"})
classic.subscribe([topic])
deadline = time.monotonic() + 30
while not classic.assignment():
    assert time.monotonic() < deadline, "the classic member was never assigned"
    classic.poll(0.05)
described = admin.describe_consumer_groups([f"{topic}-classic"])[f"{topic}-classic"].result(timeout=30)
assert described.type == ConsumerGroupType.CLASSIC, described.type
assert [m.host for m in described.members] == ["/127.0.0.1"], described.members
classic.close()
print("classic group described beside it")
