#!/usr/bin/env python3
"""The storage lifecycle's soak: `floe bench` over 100 partitions for several minutes, once
with the background jobs off (the baseline: the index grows with every object) and once with
compaction and retention on, sampling every 15 s what must stay flat: snapshot bytes, index
entries (in all and of the largest partition), live objects and resident memory; and what the
jobs did and cost: bytes rewritten, objects deleted, their object-store requests.

Not part of the README test command (it takes minutes); run it by hand:

    cargo build --release --bin floe
    python3 scripts/lifecycle_soak.py [--minutes 5] [--rate 10000] [--runs jobs-off,jobs-on]
        [--block-cache-bytes-max 0]

`FLOE_BIN=path` runs another build of floe (a baseline to compare with).
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from floe_local import FLOE, free_port, metrics, rss_mib

JOBS = ["--compaction-lag", "30s", "--compaction-interval", "5s", "--collection-interval", "10s",
        "--dead-object-grace", "20s", "--orphan-sweep-interval", "60s", "--segment-bytes",
        str(8 << 20)]


def run(label, jobs, minutes, rate, rows, block_cache):
    data = tempfile.mkdtemp(prefix="floe-soak-")
    kafka, admin = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    flags = ["serve", "--data-dir", data, "--kafka-addr", kafka, "--admin-addr", admin,
             "--default-partitions", "100", "--flush-interval", "100ms", "--snapshot-every", "2000"]
    flags += JOBS if jobs else ["--jobs", "false"]
    if block_cache is not None:
        flags += ["--block-cache-bytes-max", str(block_cache)]
    log = open(os.path.join(data, "floe.log"), "w")
    broker = subprocess.Popen([FLOE] + flags, stdout=log, stderr=log)
    try:
        for _ in range(100):
            try:
                socket.create_connection(tuple(kafka.rsplit(":", 1)), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        # Two minutes' retention: the log start keeps moving and expired objects are deleted.
        subprocess.run([sys.executable, "-c",
                        "import sys; from confluent_kafka.admin import AdminClient, NewTopic; "
                        "a = AdminClient({'bootstrap.servers': sys.argv[1]}); "
                        "[f.result() for f in a.create_topics([NewTopic('soak', 100, 1, "
                        "config={'retention.ms': '120000'})]).values()]", kafka], check=True)
        bench = subprocess.Popen([FLOE, "bench", "--bootstrap", kafka, "--admin-url", f"http://{admin}",
                                  "--topic", "soak", "--partitions", "100", "--rate", str(rate),
                                  "--duration", f"{minutes}m", "--no-consume", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        start = time.time()
        while bench.poll() is None:
            time.sleep(15)
            m = metrics(admin)
            row = {
                "run": label,
                "seconds": round(time.time() - start),
                "produced_mib": round(m.get("floe_produce_bytes_total", 0) / 2**20, 1),
                "snapshot_bytes": int(m.get("floe_snapshot_bytes", 0)),
                "index_entries": int(m.get("floe_index_entries", 0)),
                "entries_partition_max": int(m.get("floe_index_entries_partition_max", 0)),
                "objects_live": int(m.get("floe_objects_live", 0)),
                "objects_dead": int(m.get("floe_objects_dead", 0)),
                "rss_mib": round(rss_mib(broker.pid), 1),
                "rewritten_mib": round(m.get("floe_compaction_rewritten_bytes_total", 0) / 2**20, 1),
                "segments": int(m.get("floe_compaction_segments_total", 0)),
                "objects_deleted": int(m.get("floe_objects_deleted_total", 0)),
                "jobs_puts": int(m.get('floe_jobs_object_store_requests_total{op="put"}', 0)),
                "jobs_gets": int(m.get('floe_jobs_object_store_requests_total{op="get"}', 0)),
                "jobs_deletes": int(m.get('floe_jobs_object_store_requests_total{op="delete"}', 0)),
                "jobs_lists": int(m.get('floe_jobs_object_store_requests_total{op="list"}', 0)),
                "produce_puts": int(m.get('floe_object_store_requests_total{op="put"}', 0)),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        report = json.loads(bench.stdout.read() or "{}")
        print(json.dumps({"run": label, "bench": report.get("load", report)}, default=str)[:2000])
    finally:
        broker.terminate()
        broker.wait()
        shutil.rmtree(data, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=int, default=5)
    parser.add_argument("--rate", type=int, default=10000, help="records per second (1 KiB each)")
    parser.add_argument("--out", default="soak.csv")
    parser.add_argument("--runs", default="jobs-off,jobs-on",
                        help="which runs, in order: jobs-off, jobs-on")
    parser.add_argument("--block-cache-bytes-max", type=int, default=None,
                        help="the agent's memory tier; 0 reads every object from the store, as jobs "
                             "on an agent that produced none of them do")
    args = parser.parse_args()
    rows = []
    for label in args.runs.split(","):
        run(label, label == "jobs-on", args.minutes, args.rate, rows, args.block_cache_bytes_max)
    with open(args.out, "w") as f:
        f.write(",".join(rows[0].keys()) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r.values()) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
