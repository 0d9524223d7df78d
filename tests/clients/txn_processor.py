"""A consume-transform-produce loop with exactly-once semantics (confluent-kafka).

Usage: txn_processor.py BOOTSTRAP INPUT OUTPUT TXN_ID PAUSE_MS
Reads INPUT in group "processor" (read_committed), writes each value upper-cased to OUTPUT
and commits its input offsets in the same transaction (send_offsets_to_transaction). Sleeps
PAUSE_MS inside each transaction. Prints "inside N" once a transaction's records are written
(N: records committed before it) and "processed N" after each commit; exits when the input is
drained.
"""
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

bootstrap, input_topic, output_topic, txn_id, pause_ms = sys.argv[1:6]
pause = int(pause_ms) / 1000.0

consumer = Consumer({
    "bootstrap.servers": bootstrap,
    "group.id": "processor",
    "isolation.level": "read_committed",
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    # A killed earlier life leaves the group after this long, and its partitions come here.
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
})
producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5})
producer.init_transactions(60)
consumer.subscribe([input_topic])

def drained(assignment):
    """Whether every assigned partition is read to its end: by this life's position, else the
    group's committed offset, else (nothing committed) the partition's start."""
    positions = consumer.position(assignment)
    committed = {(tp.topic, tp.partition): tp.offset for tp in consumer.committed(assignment, 30)}
    for tp in positions:
        low, high = consumer.get_watermark_offsets(tp, cached=False)
        at = tp.offset if tp.offset >= 0 else committed.get((tp.topic, tp.partition), -1)
        if (at if at >= 0 else low) < high:
            return False
    return True


processed = 0
idle_since = time.time()
deadline = time.time() + 180
while True:
    if time.time() > deadline:
        sys.exit("not drained within 180 s")
    batch = consumer.consume(num_messages=20, timeout=1.0)
    batch = [m for m in batch if m.error() is None]
    if not batch:
        assignment = consumer.assignment()
        if len(assignment) == 2 and time.time() - idle_since > 5 and drained(assignment):
            break
        continue
    idle_since = time.time()
    producer.begin_transaction()
    for m in batch:
        producer.produce(output_topic, key=m.key(), value=m.value().upper(), partition=m.partition())
    producer.flush(30)
    # Written, not committed: a kill from here on lands inside the transaction.
    print(f"inside {processed}", flush=True)
    time.sleep(pause)
    producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                         consumer.consumer_group_metadata(), 30)
    producer.commit_transaction(30)
    processed += len(batch)
    print(f"processed {processed}", flush=True)

consumer.close()
print("drained", flush=True)
