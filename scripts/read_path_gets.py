#!/usr/bin/env python3
"""GETs the read path sends, measured on a release build over the local object store:

- tail:       consumers reading through the agent that wrote the data (expect 0 GETs);
- compacted:  a cold read (a restart, no disk tier) of one partition compacted into a
              segment, against the bound ceil(MiB / 4) + 1 (the +1 is the footer);
- multi:      a cold read of uncompacted produce objects shared by 8 partitions (GETs per MiB);
- fan-out:    the same cold read by 4 consumers at once (GETs should not grow with readers);
- lb:         three agents behind haproxy, one producer and six tail consumers spread by it:
              each agent's GETs against the objects written (at most one GET per object per
              agent that did not write it).

Not part of the README test command; run it by hand:

    cargo build --release --bin floe
    python3 scripts/read_path_gets.py [--mib 48]
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import tempfile
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from floe_local import Broker, free_port, metrics


def gets(admin):
    m = metrics(admin)
    return {r: int(m.get(f'floe_read_gets_total{{reason="{r}"}}', 0)) for r in ("miss", "read_ahead")}


def produce(kafka, topic, partitions, mib):
    p = Producer({"bootstrap.servers": kafka, "linger.ms": 20, "enable.idempotence": True,
                  "batch.size": 1 << 20})
    value = os.urandom(1024)
    for i in range(mib * 1024):
        while True:
            try:
                p.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
    p.flush(60)


def consume(kafka, topic, partitions, expected):
    c = Consumer({"bootstrap.servers": kafka, "group.id": f"read-{time.time()}",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got, deadline = 0, time.time() + 300
    while got < expected and time.time() < deadline:
        for m in c.consume(1000, 1.0):
            if m.error() is None:
                got += 1
    c.close()
    return got


def load_balanced(seconds):
    """Three agents (one voter, two learners) on one store behind haproxy, round robin."""
    root = tempfile.mkdtemp(prefix="floe-reads-lb-")
    balancer = f"127.0.0.1:{free_port()}"
    raft = [free_port() for _ in range(3)]
    kafka = [f"127.0.0.1:{free_port()}" for _ in range(3)]
    nodes, proxy = [], None
    try:
        for i in range(3):
            flags = ["--node-id", str(i + 1), "--meta-peers", f"1=127.0.0.1:{raft[0]}",
                     "--advertised-addr", balancer, "--object-store", f"file://{root}/objects",
                     "--object-store-latency", "s3-standard", "--flush-interval", "250ms",
                     "--hot-tier-bytes-max", "0", "--default-partitions", "8", "--jobs", "false"]
            if i > 0:
                flags += ["--roles", "agent", "--raft-addr", f"127.0.0.1:{raft[i]}"]
            os.makedirs(f"{root}/node-{i}", exist_ok=True)
            os.makedirs(f"{root}/objects", exist_ok=True)
            nodes.append(Broker(f"{root}/node-{i}", flags, kafka[i]))
        servers = "".join(f"    server agent-{i} {a}\n" for i, a in enumerate(kafka))
        with open(f"{root}/haproxy.cfg", "w") as f:
            f.write("defaults\n    mode tcp\n    timeout connect 2s\n    timeout client 60s\n"
                    f"    timeout server 60s\nfrontend kafka\n    bind {balancer}\n"
                    f"    default_backend agents\nbackend agents\n    balance roundrobin\n{servers}")
        proxy = subprocess.Popen(["haproxy", "-f", f"{root}/haproxy.cfg"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        time.sleep(5)  # the learners join and every agent is registered
        stop = threading.Event()
        counts = []

        def tail():
            c = Consumer({"bootstrap.servers": balancer, "group.id": f"lb-{time.time()}",
                          "enable.auto.commit": False})
            c.assign([TopicPartition("lb", p, 0) for p in range(8)])
            got = 0
            while not stop.is_set():
                got += sum(1 for m in c.consume(1000, 0.5) if m.error() is None)
            counts.append(got)
            c.close()

        subprocess.run(["python3", "-c",
                        "import sys; from confluent_kafka.admin import AdminClient, NewTopic; "
                        "a = AdminClient({'bootstrap.servers': sys.argv[1]}); "
                        "[f.result() for f in a.create_topics([NewTopic('lb', 8, 1)]).values()]",
                        balancer], check=True)
        # Six consumers, so that round robin puts fetch connections on every agent.
        consumers = [threading.Thread(target=tail) for _ in range(6)]
        for t in consumers:
            t.start()
        before = [gets(n.admin) for n in nodes]
        p = Producer({"bootstrap.servers": balancer, "linger.ms": 5, "enable.idempotence": True})
        value, sent, t0 = os.urandom(1024), 0, time.time()
        while time.time() - t0 < seconds:
            for _ in range(100):
                try:
                    p.produce("lb", value, partition=sent % 8)
                    sent += 1
                except BufferError:
                    p.poll(0.05)
            p.poll(0)
            time.sleep(0.01)
        p.flush(60)
        time.sleep(3)
        stop.set()
        for t in consumers:
            t.join()
        elapsed = time.time() - t0
        objects = sum(metrics(n.admin).get(f'floe_objects_sealed_total{{reason="{r}"}}', 0)
                      for n in nodes for r in ("time", "bytes"))
        per_agent = [sum(g.values()) - sum(b.values()) for g, b in zip([gets(n.admin) for n in nodes], before)]
        return {"seconds": round(elapsed, 1), "records": sent, "consumed": counts,
                "objects_written": objects, "objects_per_second": round(objects / elapsed, 2),
                "gets_per_agent": per_agent,
                "objects_sealed_per_agent": [sum(metrics(n.admin).get(f'floe_objects_sealed_total{{reason="{r}"}}', 0)
                                                 for r in ("time", "bytes")) for n in nodes],
                "fetch_mib_per_agent": [round(metrics(n.admin).get("floe_fetch_bytes_total", 0) / 2**20)
                                        for n in nodes],
                "gets_per_second_per_agent": [round(g / elapsed, 2) for g in per_agent]}
    finally:
        if proxy:
            proxy.kill()
        for n in nodes:
            n.stop()
        shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=48)
    parser.add_argument("--lb-seconds", type=int, default=20)
    parser.add_argument("--only-lb", action="store_true")
    args = parser.parse_args()
    if args.only_lb:
        print(json.dumps({"lb": load_balanced(args.lb_seconds)}, indent=2))
        return
    mib, records = args.mib, args.mib * 1024
    data = tempfile.mkdtemp(prefix="floe-reads-")
    # The compacted partition lives in a cluster of its own, so the jobs leave "multi" alone.
    compacted = tempfile.mkdtemp(prefix="floe-reads-compacted-")
    common = ["--flush-interval", "100ms", "--hot-tier-bytes-max", "0"]
    results = {}
    try:
        create = ("import sys; from confluent_kafka.admin import AdminClient, NewTopic; "
                  "a = AdminClient({'bootstrap.servers': sys.argv[1]}); "
                  "[f.result() for f in a.create_topics([NewTopic(sys.argv[2], int(sys.argv[3]), 1)]).values()]")
        # Tail: a consumer of 8 partitions runs while they are written, through the same agent
        # (jobs off, so every read is of produce objects this agent uploaded).
        b = Broker(data, common + ["--jobs", "false"])
        subprocess.run(["python3", "-c", create, b.kafka, "multi", "8"], check=True)
        before = gets(b.admin)
        tail = threading.Thread(target=consume, args=(b.kafka, "multi", 8, records))
        tail.start()
        produce(b.kafka, "multi", 8, mib)
        tail.join()
        results["tail"] = {"mib": mib, "partitions": 8,
                           "gets": {k: v - before[k] for k, v in gets(b.admin).items()}}
        objects = metrics(b.admin).get("floe_objects_live", 0)
        b.stop()

        # One partition compacted into segments (its runs are older than twice the lag).
        jobs = ["--compaction-lag", "2s", "--compaction-interval", "1s",
                "--segment-bytes", str(64 << 20)]
        b = Broker(compacted, common + jobs)
        subprocess.run(["python3", "-c", create, b.kafka, "one", "1"], check=True)
        produce(b.kafka, "one", 1, mib)
        deadline = time.time() + 120
        while metrics(b.admin).get("floe_index_entries", 0) > 2 and time.time() < deadline:
            time.sleep(1)
        results["segments_written"] = metrics(b.admin).get("floe_compaction_segments_total", 0)
        b.stop()

        for label, topic, partitions, readers in (("compacted", "one", 1, 1), ("multi", "multi", 8, 1),
                                                  ("fan-out", "multi", 8, 4)):
            b = Broker(compacted if topic == "one" else data, common + ["--jobs", "false"])
            t0 = time.time()
            threads = [threading.Thread(target=consume, args=(b.kafka, topic, partitions, records))
                       for _ in range(readers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            g = gets(b.admin)
            results[label] = {"mib": mib, "readers": readers, "gets": g, "seconds": round(time.time() - t0, 1),
                              "gets_per_mib": round(sum(g.values()) / mib, 3)}
            if label == "compacted":
                results[label]["bound"] = math.ceil(mib / 4) + 1
            b.stop()
        results["objects_multi"] = objects
        results["lb"] = load_balanced(args.lb_seconds)
    finally:
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(compacted, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
