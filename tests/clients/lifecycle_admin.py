"""Retention and DeleteRecords as confluent-kafka's clients see them: the log start moves,
ListOffsets earliest follows it, and a consumer positioned below it resets to it.

Usage: lifecycle_admin.py <bootstrap>; floe runs with its collector every second."""

import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
admin = AdminClient({"bootstrap.servers": bootstrap})


def create(name, configs):
    for f in admin.create_topics([NewTopic(name, 1, 1, config=configs)]).values():
        f.result()


def produce(name, rounds, per_round, timestamp_ms=0):
    """Each round in objects of its own: one index entry per round."""
    for r in range(rounds):
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        for i in range(per_round):
            p.produce(name, key=f"k{r}-{i}", value=b"x" * 100, partition=0, timestamp=timestamp_ms)
        assert p.flush(30) == 0, "undelivered records"


def watermarks(name):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return c.get_watermark_offsets(TopicPartition(name, 0), timeout=10)
    finally:
        c.close()


def wait(what, cond, limit=60):
    deadline = time.time() + limit
    while time.time() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def first_offset_read_from_zero(name):
    """A consumer positioned at 0, below the log start: OFFSET_OUT_OF_RANGE, then the reset
    (earliest) to the log start; the offset of the first record it gets."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reset-{name}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(name, 0, 0)])
        deadline = time.time() + 30
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                return m.offset()
        raise AssertionError(f"{name}: nothing read")
    finally:
        c.close()


# Retention by size: the oldest entries go while the rest still holds retention.bytes.
create("ret-bytes", {"retention.bytes": "2500", "retention.ms": "-1"})
produce("ret-bytes", 10, 10)
low, high = wait("the log start to move", lambda: (lambda w: w if w[0] > 0 else None)(watermarks("ret-bytes")))
assert high == 100 and 0 < low < 100, (low, high)
assert first_offset_read_from_zero("ret-bytes") == low

# Retention by time: records two hours old on a topic that keeps one hour are all deleted.
create("ret-time", {"retention.ms": "3600000"})
two_hours_ago = int(time.time() * 1000) - 2 * 3600 * 1000
produce("ret-time", 3, 10, timestamp_ms=two_hours_ago)
low, high = wait("everything to expire", lambda: (lambda w: w if w[0] == 30 else None)(watermarks("ret-time")))
assert (low, high) == (30, 30), (low, high)

# DeleteRecords.
create("dr", {})
produce("dr", 2, 50)
result = admin.delete_records([TopicPartition("dr", 0, 40)])
deleted = list(result.values())[0].result()
assert deleted.low_watermark == 40, deleted.low_watermark
assert watermarks("dr") == (40, 100), watermarks("dr")
assert first_offset_read_from_zero("dr") == 40
# Below the log start: nothing changes.
deleted = list(admin.delete_records([TopicPartition("dr", 0, 10)]).values())[0].result()
assert deleted.low_watermark == 40, deleted.low_watermark
# Beyond the high watermark: Kafka's OFFSET_OUT_OF_RANGE.
try:
    list(admin.delete_records([TopicPartition("dr", 0, 1000)]).values())[0].result()
    raise AssertionError("deleting beyond the high watermark succeeded")
except KafkaException as e:
    assert e.args[0].code() == KafkaError.OFFSET_OUT_OF_RANGE, e
# -1: everything up to the high watermark.
deleted = list(admin.delete_records([TopicPartition("dr", 0, -1)]).values())[0].result()
assert deleted.low_watermark == 100, deleted.low_watermark
assert watermarks("dr") == (100, 100)

print("lifecycle admin: ok")
