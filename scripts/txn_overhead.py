#!/usr/bin/env python3
"""What a transaction costs, measured on a release build in one run: the same records sent
by an idempotent producer that flushes after every group of records, and by a transactional
producer that commits a transaction per group. Reports per group: wall time (p50, p99) and
the metadata entries the quorum applied (from /v1/quorum), and per transaction the
object-store requests (markers cost none).

Not part of the README test command; run it by hand:

    cargo build --release --bin floe
    python3 scripts/txn_overhead.py [--groups 200] [--records 100] [--store memory-s3]
"""

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
import urllib.request

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from floe_local import Broker, metrics

STORES = {
    # The embedded default: local files, fsync'd objects and Raft log.
    "local": [],
    # An object store with S3 Standard's latency model and the remote flush interval.
    "memory-s3": ["--object-store", "memory://", "--object-store-latency", "s3-standard",
                  "--flush-interval", "250ms"],
}


def applied(admin):
    view = json.load(urllib.request.urlopen(f"http://{admin}/v1/quorum", timeout=10))
    return view["last_applied_index"]


def requests(admin):
    m = metrics(admin)
    return sum(v for k, v in m.items() if k.startswith("floe_object_store_requests_total"))


def run(producer, topic, groups, records, txn):
    value = b"x" * 1024
    times, entries = [], []
    for g in range(groups):
        before = applied(ADMIN)
        start = time.perf_counter()
        if txn:
            producer.begin_transaction()
        for i in range(records):
            producer.produce(topic, value=value, partition=i % 4)
        if txn:
            producer.commit_transaction(30)
        else:
            assert producer.flush(30) == 0
        times.append(time.perf_counter() - start)
        entries.append(applied(ADMIN) - before)
    times.sort()
    return {
        "p50_ms": round(1000 * times[len(times) // 2], 1),
        "p99_ms": round(1000 * times[min(len(times) - 1, int(len(times) * 0.99))], 1),
        "mean_ms": round(1000 * statistics.mean(times), 1),
        "metadata_entries_per_group": round(statistics.mean(entries), 2),
    }


parser = argparse.ArgumentParser()
parser.add_argument("--groups", type=int, default=200)
parser.add_argument("--records", type=int, default=100)
parser.add_argument("--store", choices=sorted(STORES), default="local")
args = parser.parse_args()

data = tempfile.mkdtemp(prefix="floe-txn-")
broker = Broker(os.path.join(data, "d"), STORES[args.store])
kafka, ADMIN = broker.kafka, broker.admin
try:
    admin = AdminClient({"bootstrap.servers": kafka})
    for f in admin.create_topics([NewTopic(t, num_partitions=4) for t in ("plain", "txn")]).values():
        f.result(30)
    plain = Producer({"bootstrap.servers": kafka, "enable.idempotence": True, "linger.ms": 5})
    txn = Producer({"bootstrap.servers": kafka, "transactional.id": "overhead", "linger.ms": 5})
    txn.init_transactions(30)
    # Warm both up, then measure them alternately so that drift hits both alike.
    run(plain, "plain", 5, args.records, False)
    run(txn, "txn", 5, args.records, True)
    r0 = requests(ADMIN)
    base = run(plain, "plain", args.groups, args.records, False)
    r1 = requests(ADMIN)
    trans = run(txn, "txn", args.groups, args.records, True)
    r2 = requests(ADMIN)
    print(json.dumps({
        "store": args.store, "groups": args.groups, "records_per_group": args.records,
        "idempotent_flush": dict(base, object_store_requests_per_group=round((r1 - r0) / args.groups, 2)),
        "transaction": dict(trans, object_store_requests_per_group=round((r2 - r1) / args.groups, 2)),
        "latency_ratio_p50": round(trans["p50_ms"] / base["p50_ms"], 2),
    }, indent=2))
finally:
    broker.stop()
    shutil.rmtree(data, ignore_errors=True)
