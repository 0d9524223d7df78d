"""Seeds and checks an exactly-once pipeline (see txn_processor.py).

Usage: txn_eos_check.py seed|check BOOTSTRAP INPUT OUTPUT COUNT
  seed   creates INPUT and OUTPUT (2 partitions each) and writes COUNT records "in-<i>"
  check  reads OUTPUT read_committed and read_uncommitted, and the group's committed offsets;
         prints one JSON line: records missing and duplicated, whether the committed offsets
         equal the input's end offsets, and how many extra records read_uncommitted saw
"""
import json
import sys
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

mode, bootstrap, input_topic, output_topic, count = sys.argv[1:6]
count = int(count)

if mode == "seed":
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, num_partitions=2, replication_factor=1)
                                  for t in (input_topic, output_topic)]).values():
        f.result(30)
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for i in range(count):
        p.produce(input_topic, key=b"%d" % i, value=b"in-%d" % i, partition=i % 2)
    assert p.flush(30) == 0
    print(json.dumps({"seeded": count}))
    sys.exit(0)


def read_all(isolation):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "check-" + uuid.uuid4().hex,
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "enable.partition.eof": True})
    c.assign([TopicPartition(output_topic, p, 0) for p in (0, 1)])
    got, eof = [], set()
    deadline = time.time() + 60
    while len(eof) < 2 and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:
                eof.add(m.partition())
            continue
        eof.discard(m.partition())
        got.append(m.value().decode())
    c.close()
    return got


committed = read_all("read_committed")
uncommitted = read_all("read_uncommitted")
expected = {"IN-%d" % i for i in range(count)}
seen = {}
for v in committed:
    seen[v] = seen.get(v, 0) + 1
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "processor"})
offsets = c.committed([TopicPartition(input_topic, p) for p in (0, 1)], timeout=30)
ends = [c.get_watermark_offsets(TopicPartition(input_topic, p), cached=False)[1] for p in (0, 1)]
c.close()
print(json.dumps({
    "missing": len(expected - set(seen)),
    "duplicates": sum(n - 1 for n in seen.values()),
    "unexpected": len(set(seen) - expected),
    "offsets": [tp.offset for tp in offsets],
    "ends": ends,
    "offsets_match": [tp.offset for tp in offsets] == ends,
    "uncommitted_extra": len(uncommitted) - len(committed),
}))
