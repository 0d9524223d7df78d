#!/usr/bin/env python3
"""The cleaner's soak and cost: a key space of 1 KiB values updated continuously in a compacted
topic (Kafka's default min.cleanable.dirty.ratio, 0.5), sampling every 15 s what must level off
(the bytes the partitions hold, against the live key space) and what must stay flat (resident
memory), with what the cleaner did (passes, bytes read and kept, the time its passes took) and
what the background jobs cost (object-store requests and bytes).

At the end it prints a summary: the stored/live ratio over the second half of the run, memory
first and last (floe runs with MALLOC_ARENA_MAX=2, as the Docker image runs it), the
cleaner's throughput (MB of input a second of pass time), and the jobs'
PUTs, GETs and bytes written per GiB ingested.

Not part of the README test command (it takes minutes); run it by hand:

    cargo build --release --bin floe
    python3 scripts/compaction_soak.py [--minutes 30] [--keys 100000] [--rate 2000]
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import urllib.request

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from floe_local import Broker, metrics, rss_mib

VALUE_BYTES = 1024


def stored_bytes(admin, topic):
    """The bytes the topic's partitions hold, and how many are dirty, from /v1/topics."""
    view = json.load(urllib.request.urlopen(f"http://{admin}/v1/topics", timeout=10))
    stored = dirty = 0
    for t in view["topics"]:
        if t["name"] == topic:
            for p in t["partitions"]:
                stored += p["bytes"]
                dirty += p.get("cleaner", {}).get("dirty_bytes", 0)
    return stored, dirty


def produce(bootstrap, topic, keys, rate, stop, written):
    """Updates random keys at `rate` a second until `stop`; counts what was acknowledged."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True,
                  "batch.size": 512 * 1024})
    rng = random.Random(1)
    payload = os.urandom(VALUE_BYTES * 4)

    def delivered(err, _msg):
        if err is None:
            written["records"] += 1
        else:
            written["failed"] += 1

    start = time.monotonic()
    sent = 0
    while not stop.is_set():
        due = int((time.monotonic() - start) * rate)
        while sent < due:
            k = rng.randrange(keys)
            at = rng.randrange(len(payload) - VALUE_BYTES)
            try:
                p.produce(topic, key=f"key-{k:08d}", value=payload[at:at + VALUE_BYTES],
                          on_delivery=delivered)
            except BufferError:
                p.poll(0.05)
                continue
            written["keys"].add(k)
            sent += 1
        p.poll(0.01)
    p.flush(60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--rate", type=int, default=2000, help="updates a second (1 KiB each)")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--out", default="compaction_soak.csv")
    args = parser.parse_args()
    data = tempfile.mkdtemp(prefix="floe-compaction-soak-")
    # As the Docker image runs floe (README, "Storage lifecycle"): two malloc arenas.
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    broker = Broker(data, ["--flush-interval", "100ms"])
    topic = "table"
    try:
        admin_client = AdminClient({"bootstrap.servers": broker.kafka})
        for f in admin_client.create_topics([NewTopic(topic, args.partitions, 1, config={
                "cleanup.policy": "compact"})]).values():
            f.result()
        stop = threading.Event()
        written = {"records": 0, "failed": 0, "keys": set()}
        writer = threading.Thread(target=produce,
                                  args=(broker.kafka, topic, args.keys, args.rate, stop, written))
        writer.start()
        rows = []
        start = time.time()
        try:
            while time.time() - start < args.minutes * 60:
                time.sleep(15)
                m = metrics(broker.admin)
                stored, dirty = stored_bytes(broker.admin, topic)
                live = len(written["keys"]) * (VALUE_BYTES + 12)
                row = {
                    "seconds": round(time.time() - start),
                    "acked_records": written["records"],
                    "ingested_mib": round(m.get("floe_produce_bytes_total", 0) / 2**20, 1),
                    "live_mib": round(live / 2**20, 1),
                    "stored_mib": round(stored / 2**20, 1),
                    "dirty_mib": round(dirty / 2**20, 1),
                    "stored_over_live": round(stored / max(live, 1), 2),
                    "rss_mib": round(rss_mib(broker.proc.pid), 1),
                    "passes": int(m.get("floe_cleaner_passes_total", 0)),
                    "cleaner_read_mib": round(m.get("floe_cleaner_read_bytes_total", 0) / 2**20, 1),
                    "cleaner_kept_mib": round(m.get("floe_cleaner_kept_bytes_total", 0) / 2**20, 1),
                    "cleaner_seconds": round(m.get("floe_cleaner_seconds_total", 0), 1),
                    "jobs_puts": int(m.get('floe_jobs_object_store_requests_total{op="put"}', 0)),
                    "jobs_gets": int(m.get('floe_jobs_object_store_requests_total{op="get"}', 0)),
                    "jobs_put_mib": round(m.get('floe_jobs_object_store_bytes_total{op="put"}', 0) / 2**20, 1),
                    "jobs_get_mib": round(m.get('floe_jobs_object_store_bytes_total{op="get"}', 0) / 2**20, 1),
                    "produce_puts": int(m.get('floe_object_store_requests_total{op="put"}', 0)),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            stop.set()
            writer.join()
        with open(args.out, "w") as f:
            f.write(",".join(rows[0].keys()) + "\n")
            for r in rows:
                f.write(",".join(str(v) for v in r.values()) + "\n")
        last = rows[-1]
        second_half = rows[len(rows) // 2:]
        gib = max(last["ingested_mib"], 1) / 1024
        summary = {
            "minutes": args.minutes,
            "keys": args.keys,
            "rate": args.rate,
            "failed_records": written["failed"],
            "stored_over_live_second_half": [min(r["stored_over_live"] for r in second_half),
                                             max(r["stored_over_live"] for r in second_half)],
            "rss_mib_first_last_max": [rows[0]["rss_mib"], last["rss_mib"],
                                       max(r["rss_mib"] for r in rows)],
            "cleaner_mb_per_pass_second": round(last["cleaner_read_mib"] * 1.048576
                                                / max(last["cleaner_seconds"], 0.001), 1),
            "per_gib_ingested": {
                "jobs_puts": round(last["jobs_puts"] / gib),
                "jobs_gets": round(last["jobs_gets"] / gib),
                "jobs_put_gib": round(last["jobs_put_mib"] / 1024 / gib, 2),
                "jobs_get_gib": round(last["jobs_get_mib"] / 1024 / gib, 2),
                "produce_puts": round(last["produce_puts"] / gib),
            },
        }
        print(json.dumps(summary, indent=2))
        print(f"wrote {args.out}", file=sys.stderr)
    finally:
        broker.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
