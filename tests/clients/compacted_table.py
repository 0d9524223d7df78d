"""A table kept in a compacted topic, as confluent-kafka's clients write and restore it.

Usage:
  compacted_table.py produce <bootstrap> <topic> <keys> <updates> <codec>
      creates the topic (cleanup.policy=compact, cleaned as soon as anything is dirty,
      tombstones kept one second), writes <updates> updates over <keys> keys, one in ten a
      delete (a tombstone), in rounds of their own, a committed and an aborted transaction of
      100 updates each, then one last record on its own ("end",
      the partition's last entry, which is never cleaned); prints the table the updates leave
      (key -> value) as JSON.
  compacted_table.py read <bootstrap> <topic> <read_committed|read_uncommitted>
      reads the partition from offset 0 to its high watermark; prints each record as
      [offset, key, value or null] and the high watermark, as JSON.
  compacted_table.py updates <bootstrap> <topic> <keys> <updates> <seed> <create|existing>
      (creating the topic first: 4 partitions, cleanup.policy=compact, cleaned as soon as
      anything is dirty, tombstones kept an hour) writes <updates> updates over <keys> keys
      partitioned by key, one in ten a delete, in five rounds, with an idempotent producer
      that must deliver every one; prints the last write of each key (key -> value or null).
  compacted_table.py ends <bootstrap> <topic>
      writes one record "end-<p>" to each of the 4 partitions, after all updates.
  compacted_table.py follow <bootstrap> <topic> <group>
      a consumer in group <group> (auto-committing) applies what it reads as a table, until it
      has read every partition's "end-<p>"; prints the table (key -> value) as JSON.
  compacted_table.py restore <bootstrap> <topic>
      reads each of the 4 partitions from offset 0 to its high watermark; prints each record
      as [partition, offset, key, value or null], as JSON."""

import json
import random
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

mode, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]


def create_compacted(partitions, delete_retention_ms):
    """The topic, compacted and cleaned as soon as anything is dirty."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {
        "cleanup.policy": "compact",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": str(delete_retention_ms),
    }
    for f in admin.create_topics([NewTopic(topic, partitions, 1, config=configs)]).values():
        f.result()


if mode == "produce":
    keys, updates, codec = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    create_compacted(1, 1000)
    rng = random.Random(7)
    table = {}
    rounds = 5
    for r in range(rounds):
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                      "compression.type": codec, "enable.idempotence": True})
        for i in range(updates // rounds):
            key = f"key-{rng.randrange(keys)}"
            if rng.random() < 0.1:
                p.produce(topic, key=key, value=None, partition=0)
                table.pop(key, None)
            else:
                value = f"{key}={r}.{i}" + "." * rng.randrange(200)
                p.produce(topic, key=key, value=value, partition=0)
                table[key] = value
        assert p.flush(30) == 0, "undelivered records"
    # Transactions: one committed (its updates count), one aborted (they never happened).
    t = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-txn",
                  "compression.type": codec})
    t.init_transactions(30)
    for commit in (True, False):
        t.begin_transaction()
        for i in range(100):
            key = f"key-{rng.randrange(keys)}"
            value = f"{key}=txn-{commit}.{i}"
            t.produce(topic, key=key, value=value, partition=0)
            if commit:
                table[key] = value
        if commit:
            t.commit_transaction(30)
        else:
            # Delivered first: an abort drops what the client has not sent yet.
            assert t.flush(30) == 0, "undelivered records"
            t.abort_transaction(30)
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, key="end", value="end", partition=0)
    assert p.flush(30) == 0, "undelivered records"
    table["end"] = "end"
    print(json.dumps(table))
elif mode == "read":
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"restore-{topic}",
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "isolation.level": sys.argv[4]})
    try:
        _, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        c.assign([TopicPartition(topic, 0, 0)])
        records = []
        while True:
            m = c.poll(10)
            assert m is not None, "nothing read for 10 s before the high watermark"
            if m.error() is not None:
                if m.error().code() == -191:  # _PARTITION_EOF
                    break
                raise AssertionError(str(m.error()))
            value = None if m.value() is None else m.value().decode()
            records.append([m.offset(), m.key().decode(), value])
            if m.offset() + 1 >= high:
                break
        print(json.dumps({"records": records, "high": high}))
    finally:
        c.close()
elif mode == "updates":
    keys, updates, seed, create = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
    if create == "create":
        create_compacted(4, 3_600_000)
    rng = random.Random(seed)
    last, failed = {}, []

    def delivered(err, msg):
        if err is not None:
            failed.append(str(err))

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "compression.type": "lz4",
                  "enable.idempotence": True})
    for r in range(5):
        for i in range(updates // 5):
            key = f"key-{rng.randrange(keys)}"
            value = None if rng.random() < 0.1 else f"{key}={seed}.{r}.{i}" + "." * rng.randrange(200)
            p.produce(topic, key=key, value=value, on_delivery=delivered)
            last[key] = value
            p.poll(0)
        assert p.flush(120) == 0, "undelivered records"
    assert not failed, f"{len(failed)} records failed: {failed[:3]}"
    print(json.dumps(last))
elif mode == "ends":
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for partition in range(4):
        p.produce(topic, key=f"end-{partition}", value="end", partition=partition)
    assert p.flush(120) == 0, "undelivered records"
elif mode == "follow":
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": sys.argv[4],
                  "auto.offset.reset": "earliest", "auto.commit.interval.ms": 500})
    c.subscribe([topic])
    table, ends = {}, set()
    deadline = time.monotonic() + 300
    try:
        while len(ends) < 4:
            assert time.monotonic() < deadline, f"not every end read in 300 s: {sorted(ends)}"
            m = c.poll(1)
            if m is None:
                continue
            if m.error() is not None:
                # An agent killed under the consumer shows as transport errors it recovers from.
                assert not m.error().fatal(), str(m.error())
                continue
            key = m.key().decode()
            if key.startswith("end-"):
                ends.add(m.partition())
            elif m.value() is None:
                table.pop(key, None)
            else:
                table[key] = m.value().decode()
    finally:
        c.close()
    print(json.dumps(table))
elif mode == "restore":
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"restore-{topic}",
                  "enable.auto.commit": False})
    records = []
    try:
        for partition in range(4):
            tp = TopicPartition(topic, partition)
            _, high = c.get_watermark_offsets(tp, timeout=10)
            c.assign([TopicPartition(topic, partition, 0)])
            at = 0
            while at < high:
                m = c.poll(10)
                assert m is not None, f"partition {partition}: nothing read for 10 s at {at} of {high}"
                if m.error() is not None:
                    raise AssertionError(str(m.error()))
                value = None if m.value() is None else m.value().decode()
                records.append([partition, m.offset(), m.key().decode(), value])
                at = m.offset() + 1
        print(json.dumps(records))
    finally:
        c.close()
else:
    raise SystemExit(f"unknown mode {mode}")
