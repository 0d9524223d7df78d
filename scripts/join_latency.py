#!/usr/bin/env python3
"""Join latency of a consumer group: from subscribe() to each member's first assignment, and
until every partition is assigned, for the classic protocol or KIP-848.

    cargo run --release -- serve --default-partitions 12 &
    python3 scripts/join_latency.py --members 10 --protocol consumer

Every run uses a new group id. Uses confluent-kafka (librdkafka).
"""

import argparse
import threading
import time
import uuid

from confluent_kafka import Consumer, Producer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="join-latency")
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--protocol", choices=["classic", "consumer"], default="classic")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()

    # The topic exists (auto-created) before anyone joins.
    producer = Producer({"bootstrap.servers": args.bootstrap})
    producer.produce(args.topic, b"x")
    producer.flush(10)
    partitions = len(producer.list_topics(args.topic, timeout=10).topics[args.topic].partitions)

    group = f"join-{uuid.uuid4()}"
    assigned = {}  # member -> set of partitions
    first = {}  # member -> seconds from start to its first partition
    lock = threading.Lock()
    stop = threading.Event()
    start = time.monotonic()

    def run(member):
        config = {
            "bootstrap.servers": args.bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
        }
        if args.protocol == "consumer":
            config["group.protocol"] = "consumer"
        consumer = Consumer(config)

        def on_assign(_, parts):
            with lock:
                now = time.monotonic() - start
                mine = assigned.setdefault(member, set())
                # Eager (classic range) assignments replace; incremental ones add.
                if args.protocol == "classic":
                    mine.clear()
                mine.update(p.partition for p in parts)
                if mine and member not in first:
                    first[member] = now

        def on_revoke(_, parts):
            with lock:
                assigned.setdefault(member, set()).difference_update(p.partition for p in parts)

        consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke)
        while not stop.is_set():
            consumer.poll(0.05)
        consumer.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(args.members)]
    for t in threads:
        t.start()
    done_at = None
    while time.monotonic() - start < args.timeout:
        with lock:
            owned = set().union(*assigned.values()) if assigned else set()
            if len(first) == min(args.members, partitions) and len(owned) == partitions:
                done_at = time.monotonic() - start
                break
        time.sleep(0.005)
    stop.set()
    for t in threads:
        t.join()
    firsts = sorted(first.values())
    print(f"protocol={args.protocol} members={args.members} partitions={partitions}")
    if firsts:
        print(f"first member assigned after {firsts[0]*1000:.0f} ms, "
              f"last after {firsts[-1]*1000:.0f} ms")
    if done_at is None:
        print(f"not every partition was assigned within {args.timeout} s")
    else:
        print(f"every partition assigned after {done_at*1000:.0f} ms")


if __name__ == "__main__":
    main()
