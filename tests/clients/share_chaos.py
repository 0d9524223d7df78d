"""The share chaos test's clients (confluent-kafka's ShareConsumer, librdkafka 2.16), printing
what they did as JSON lines for the test to judge.

  share_chaos.py produce BOOTSTRAP TOPIC COUNT FIRST
      an idempotent producer: records FIRST..FIRST+COUNT-1 (their number as key and value);
      prints {"acked": [partition, offset, number]} per acknowledged record, {"failed": number}
      per record it could not write.
  share_chaos.py config BOOTSTRAP GROUP NAME=VALUE
      sets a group config (IncrementalAlterConfigs on the GROUP resource).
  share_chaos.py consume BOOTSTRAP TOPIC GROUP NAME STOP_FILE
      a share group member with explicit acknowledgements: accepts every record it gets and
      commits after each poll; prints {"delivered": [partition, offset, delivery_count]} per
      record, {"commit": [partition, [offsets], ok]} per partition of each commit as
      commit_sync answers it, and {"acks": [partition, [offsets], ok, error]} per batch of
      acknowledgements as the acknowledgement commit callback reports it. Runs until
      STOP_FILE exists and nothing arrived for IDLE seconds.

      The callback is what says which records were accepted: commit_sync answers once per
      partition, and when a partition's acknowledgements went out in several batches (records
      fetched from two leaders in one poll: those from the old leader are refused by the
      client itself, NOT_LEADER_OR_FOLLOWER), one batch's success overwrites another's
      failure in that answer.
"""

import json
import os
import sys
import time

from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

IDLE = 12.0


def out(record):
    record["t"] = round(time.time(), 3)  # wall time, to line consumers' histories up by hand
    print(json.dumps(record), flush=True)


def produce(bootstrap, topic, count, first):
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 60000,
        }
    )

    def report(err, msg):
        number = int(msg.value())
        if err is None:
            out({"acked": [msg.partition(), msg.offset(), number]})
        else:
            out({"failed": number})

    for number in range(first, first + count):
        while True:
            try:
                producer.produce(topic, key=str(number), value=str(number), on_delivery=report)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(90)
    if left:
        print(f"{left} records never reported", file=sys.stderr)
        sys.exit(1)


def config(bootstrap, group, setting):
    name, value = setting.split("=", 1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def consume(bootstrap, topic, group, name, stop_file):
    consumer = ShareConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "share.acknowledgement.mode": "explicit",
            # A paused agent answers nothing: give up on it soon, the balancer picks another.
            "socket.timeout.ms": 10000,
        }
    )

    def committed(offsets, exception):
        for tp, acked in offsets.items():
            error = None if exception is None else str(exception)
            out({"acks": [tp.partition, sorted(acked), exception is None, error]})

    consumer.set_acknowledgement_commit_callback(committed)
    consumer.subscribe([topic])
    last_record = time.monotonic()
    while True:
        try:
            messages = consumer.poll(1.0)
        except Exception as e:  # a fault the client reports; it goes on
            out({"error": str(e)})
            time.sleep(0.2)
            continue
        polled = {}
        for message in messages:
            if message.error() is not None:
                out({"error": str(message.error())})
                continue
            out({"delivered": [message.partition(), message.offset(), message.delivery_count()]})
            polled.setdefault(message.partition(), []).append(message.offset())
            consumer.acknowledge(message)
        if polled:
            last_record = time.monotonic()
            try:
                results = consumer.commit_sync(30)
            except Exception as e:
                out({"error": f"commit: {e}"})
                results = {}
            for tp, err in results.items():
                out({"commit": [tp.partition, polled.get(tp.partition, []), err is None]})
        elif os.path.exists(stop_file) and time.monotonic() - last_record > IDLE:
            break
    consumer.close()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "produce":
        produce(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "config":
        config(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "consume":
        consume(*sys.argv[2:7])
    else:
        sys.exit(f"unknown mode {mode}")
