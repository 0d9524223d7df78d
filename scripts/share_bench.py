#!/usr/bin/env python3
"""Share groups against consumer groups on the same topic, on one floe (the release build,
embedded default): how fast 1, 4 and 16 members drain a backlog, their end-to-end latency at
a steady produce rate, and the replicated-state writes per thousand records a share group
acknowledges. Clients: confluent-kafka (librdkafka 2.16) Consumer and ShareConsumer, one
thread per member.

    python3 scripts/share_bench.py [--records 60000] [--rate 2000] [--seconds 10]

Throughput: records produced first (100-byte values), then the time until the members have
all of them. Latency: records produced at --rate for --seconds, each carrying its send time;
the members' receive time minus it (the producer's own queueing included). Writes: the
quorum's applied index over the drain, less the entries an idle agent writes over as long
(its clock ticks and registrations), per thousand records.
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from floe_local import Broker  # noqa: E402

from confluent_kafka import Consumer, Producer, ShareConsumer  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType)

PARTITIONS = 16


def applied(admin):
    return json.loads(urllib.request.urlopen(f"http://{admin}/v1/quorum", timeout=5).read())[
        "last_applied_index"]


def produce(bootstrap, topic, count, rate=None):
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    start = time.time()
    for i in range(count):
        if rate:
            due = start + i / rate
            while time.time() < due:
                producer.poll(0)
                time.sleep(0.0005)
        value = json.dumps({"sent": time.time()}).ljust(100).encode()
        while True:
            try:
                producer.produce(topic, value=value)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    producer.flush(60)


def member(kind, bootstrap, group, topic, stop, seen, latencies):
    conf = {"bootstrap.servers": bootstrap, "group.id": group}
    if kind == "share":
        consumer = ShareConsumer(conf)
    else:
        conf.update({"auto.offset.reset": "earliest", "group.protocol": "consumer"})
        consumer = Consumer(conf)
    consumer.subscribe([topic])
    while not stop.is_set():
        if kind == "share":
            messages = consumer.poll(0.5)
        else:
            messages = consumer.consume(500, 0.5)
        now = time.time()
        for m in messages:
            if m.error() is None:
                seen.append(1)
                latencies.append(now - json.loads(m.value())["sent"])
    consumer.close()


def run(kind, members, bootstrap, admin_addr, admin, records, rate, seconds, index):
    topic = f"bench-{kind}-{members}-{index}"
    group = f"g-{topic}"
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    if kind == "share":
        entry = ConfigEntry("share.auto.offset.reset", "earliest",
                            incremental_operation=AlterConfigOpType.SET)
        resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
        for f in admin.incremental_alter_configs([resource]).values():
            f.result(30)
    produce(bootstrap, topic, records)
    idle_from, idle_at = applied(admin_addr), time.time()
    time.sleep(3)
    idle_rate = (applied(admin_addr) - idle_from) / (time.time() - idle_at)
    stop, seen, latencies = threading.Event(), [], []
    threads = [threading.Thread(target=member, args=(kind, bootstrap, group, topic, stop, seen, latencies))
               for _ in range(members)]
    start, written_from = time.time(), applied(admin_addr)
    for t in threads:
        t.start()
    while len(seen) < records and time.time() - start < 300:
        time.sleep(0.05)
    drain = time.time() - start
    writes = applied(admin_addr) - written_from - idle_rate * drain
    drained = len(seen)
    # Latency at a steady rate, the members still subscribed.
    latencies.clear()
    produce(bootstrap, topic, rate * seconds, rate)
    time.sleep(3)
    stop.set()
    for t in threads:
        t.join()
    lat = sorted(latencies)
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")
    return {
        "kind": kind, "members": members, "drained": drained,
        "records_per_s": round(drained / drain), "p50_ms": round(pick(0.5), 1),
        "p99_ms": round(pick(0.99), 1),
        "writes_per_1000": round(writes / max(drained, 1) * 1000, 1),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=60000)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as data:
        broker = Broker(data, [])
        try:
            admin = AdminClient({"bootstrap.servers": broker.kafka})
            results = []
            for index, (kind, members) in enumerate(
                    [(k, m) for m in (1, 4, 16) for k in ("consumer", "share")]):
                r = run(kind, members, broker.kafka, broker.admin, admin, args.records, args.rate,
                        args.seconds, index)
                print(json.dumps(r), flush=True)
                results.append(r)
            print("| group | members | drain, records/s | p50 ms | p99 ms | writes / 1000 records |")
            print("| --- | --- | --- | --- | --- | --- |")
            for r in results:
                print(f"| {r['kind']} | {r['members']} | {r['records_per_s']} | {r['p50_ms']} | "
                      f"{r['p99_ms']} | {r['writes_per_1000']} |")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
