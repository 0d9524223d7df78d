"""Transactions through floe with confluent-kafka (librdkafka).

Usage: txn_confluent.py MODE BOOTSTRAP TOPIC
  basic  commit, abort and commit again; read back read_committed and read_uncommitted
  fence  a second producer with the same transactional.id fences the first
  hung   open a transaction, write to it and exit without ending it (the coordinator must
         abort it after transaction.timeout.ms)
  after  commit one record "after" in a transaction of its own, then read the topic
         read_committed until "after" shows: what the hung transaction wrote must not
  read   read the topic back read_committed and read_uncommitted (after compaction)
  loop   40 transactions of 10 records, printing "committed N" after each (a test kills the
         coordinator meanwhile); then read everything back read_committed
Prints one JSON line with what it saw.
"""
import json
import os
import sys
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

mode, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]


def ensure_topic(partitions=2):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    for f in futures.values():
        try:
            f.result(30)
        except KafkaException as e:
            if e.args[0].code() != 36:  # TOPIC_ALREADY_EXISTS
                raise


def producer(txn_id, **extra):
    conf = {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5}
    conf.update(extra)
    p = Producer(conf)
    p.init_transactions(30)
    return p


def read(isolation, until=None, count=None, idle_s=5.0):
    """Values of the topic from the beginning, in partition then offset order."""
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "reader-" + uuid.uuid4().hex,
        "isolation.level": isolation,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": True,
    })
    meta = c.list_topics(topic, timeout=10)
    parts = sorted(meta.topics[topic].partitions)
    c.assign([TopicPartition(topic, p, 0) for p in parts])
    got, eof = {}, set()
    import time
    deadline = time.time() + 60
    idle_since = time.time()
    while time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            if until is None and count is None and len(eof) == len(parts) and time.time() - idle_since > idle_s:
                break
            continue
        if m.error():
            if m.error().code() == -191:  # partition EOF
                eof.add(m.partition())
                continue
            raise KafkaException(m.error())
        idle_since = time.time()
        eof.discard(m.partition())
        got.setdefault(m.partition(), []).append((m.offset(), m.value().decode()))
        values = [v for p in sorted(got) for _, v in got[p]]
        if until is not None and until in values:
            break
        if count is not None and len(values) >= count:
            break
    c.close()
    return {str(p): got[p] for p in sorted(got)}


def values(parts):
    return [v for p in sorted(parts) for _, v in parts[p]]


if mode == "basic":
    ensure_topic()
    p = producer("basic-" + topic)
    for round_, commit in (("c1", True), ("a1", False), ("c2", True)):
        p.begin_transaction()
        for i in range(10):
            p.produce(topic, value=f"{round_}-{i}".encode(), partition=i % 2)
        p.flush(30)
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
    committed = read("read_committed", count=20)
    everything = read("read_uncommitted", count=30)
    print(json.dumps({"committed": values(committed), "uncommitted": values(everything),
                      "committed_offsets": committed}))
elif mode == "fence":
    ensure_topic()
    old = producer("fence-" + topic)
    old.begin_transaction()
    old.produce(topic, value=b"zombie", partition=0)
    old.flush(30)
    new = producer("fence-" + topic)
    fenced = None
    try:
        old.commit_transaction(30)
    except KafkaException as e:
        err = e.args[0]
        fenced = {"name": err.name(), "fatal": err.fatal()}
    new.begin_transaction()
    new.produce(topic, value=b"fresh", partition=0)
    new.commit_transaction(30)
    print(json.dumps({"fenced": fenced, "committed": values(read("read_committed", until="fresh"))}))
elif mode == "hung":
    ensure_topic()
    p = producer("hung-" + topic, **{"transaction.timeout.ms": 2000})
    p.begin_transaction()
    p.produce(topic, value=b"hung", partition=0)
    p.flush(30)
    print(json.dumps({"hung": True}), flush=True)
    os._exit(0)  # no abort, no close: the transaction stays open
elif mode == "after":
    p = producer("after-" + topic)
    p.begin_transaction()
    p.produce(topic, value=b"after", partition=0)
    p.commit_transaction(30)
    print(json.dumps({"committed": values(read("read_committed", until="after"))}))
elif mode == "read":
    committed = read("read_committed", idle_s=1.0)
    everything = read("read_uncommitted", idle_s=1.0)
    print(json.dumps({"committed": values(committed), "uncommitted": values(everything),
                      "committed_offsets": committed}))
elif mode == "loop":
    ensure_topic(4)
    import time
    p = producer("loop-" + topic, **{"message.timeout.ms": 60000})
    for t in range(40):
        p.begin_transaction()
        for i in range(10):
            p.produce(topic, value=f"t{t}-{i}".encode(), partition=i % 4)
        p.commit_transaction(120)
        print(f"committed {t + 1}", flush=True)
        time.sleep(0.1)
    print(json.dumps({"committed": sorted(values(read("read_committed", count=400)))}))
else:
    sys.exit(f"unknown mode {mode}")
