import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * Consumer groups (eager, cooperative-sticky, KIP-848) with members joining and leaving
 * mid-stream, static membership, assign and seek, offsetsForTimes, pause and resume,
 * read_committed.
 */
final class ConsumerScenario {
    private final String bootstrap;
    private final String prefix = Clients.unique("cons");

    ConsumerScenario(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    void run() throws Exception {
        Check.run("classic group, eager (RangeAssignor): join and leave mid-stream, committed progress kept",
                () -> membersComeAndGo("eager", Clients.props("partition.assignment.strategy",
                        "org.apache.kafka.clients.consumer.RangeAssignor")));
        Check.run("classic group, cooperative-sticky: join and leave mid-stream, committed progress kept",
                () -> membersComeAndGo("coop", Clients.props("partition.assignment.strategy",
                        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor")));
        Check.run("group.protocol=consumer (KIP-848): join and leave mid-stream, committed progress kept",
                () -> membersComeAndGo("848", Clients.props("group.protocol", "consumer")));
        Check.run("static membership: a restarted member with the same group.instance.id keeps its assignment without a rebalance",
                this::staticMembership);
        Check.run("assign() and seek, seekToBeginning, seekToEnd", this::assignAndSeek);
        Check.run("offsetsForTimes", this::offsetsForTimes);
        Check.run("pause and resume", this::pauseResume);
        Check.run("isolation.level=read_committed stops at an open transaction", this::readCommitted);
    }

    /**
     * Member A consumes alone, B joins, A leaves, B finishes; each poll's records are committed
     * before the next poll. No record may be lost, and none whose commit succeeded may be seen
     * again.
     */
    private void membersComeAndGo(String name, java.util.Properties extra) throws Exception {
        String topic = topic(name, 6);
        String group = prefix + "-" + name;
        produce(topic, 6, 0, 300);
        Map<TopicPartition, Long> committedUpTo = new HashMap<>();
        Set<String> seen = new HashSet<>();
        List<String> duplicates = new ArrayList<>();
        extra.put("max.poll.records", "20");
        extra.put("session.timeout.ms", "10000");
        extra.put("heartbeat.interval.ms", "500");
        KafkaConsumer<String, String> a = Clients.consumer(bootstrap, group, extra);
        KafkaConsumer<String, String> b = Clients.consumer(bootstrap, group, extra);
        try {
            a.subscribe(List.of(topic), commitAndSeek(a, committedUpTo));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            boolean bJoined = false;
            boolean aLeft = false;
            // Until every record is committed (a commit refused during a rebalance leaves its
            // records to be consumed again).
            while (!allCommitted(committedUpTo, topic, 6, 100) && System.nanoTime() < deadline) {
                if (!aLeft) {
                    consumeOnce(a, committedUpTo, seen, duplicates);
                }
                if (!bJoined && seen.size() >= 150) {
                    b.subscribe(List.of(topic), commitAndSeek(b, committedUpTo));
                    bJoined = true;
                    produce(topic, 6, 300, 600); // more arrives while the group changes
                }
                if (bJoined) {
                    consumeOnce(b, committedUpTo, seen, duplicates);
                }
                if (bJoined && !aLeft && seen.size() >= 400 && !b.assignment().isEmpty()) {
                    a.close(Duration.ofSeconds(5));
                    aLeft = true;
                }
            }
            Check.that(bJoined && aLeft, "B joined " + bJoined + ", A left " + aLeft + " after " + seen.size() + " records");
            Check.eq(600, seen.size(), "distinct records consumed");
            Check.that(duplicates.isEmpty(), "records seen again after their commit succeeded: " + duplicates);
            Check.that(allCommitted(committedUpTo, topic, 6, 100), "commits acknowledged: " + committedUpTo);
            // B is given A's partitions at its next rebalance (or heartbeat, with KIP-848).
            Clients.eventually(Duration.ofSeconds(15), () -> {
                b.poll(Duration.ofMillis(100));
                return b.assignment().size() == 6;
            });
            Check.eq(6, b.assignment().size(), "B's assignment after A left");
        } finally {
            a.close(Duration.ofSeconds(1));
            b.close(Duration.ofSeconds(5));
        }
        try (Admin admin = Clients.admin(bootstrap)) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            for (int p = 0; p < 6; p++) {
                OffsetAndMetadata o = committed.get(new TopicPartition(topic, p));
                Check.that(o != null && o.offset() == 100, "committed offset of partition " + p + ": " + o);
            }
        }
    }

    private static boolean allCommitted(Map<TopicPartition, Long> committedUpTo, String topic, int partitions, long end) {
        for (int p = 0; p < partitions; p++) {
            if (committedUpTo.getOrDefault(new TopicPartition(topic, p), 0L) < end) {
                return false;
            }
        }
        return true;
    }

    /** Offsets a consumer consumed up to but could not commit yet (a rebalance refused them). */
    private final Map<KafkaConsumer<String, String>, Map<TopicPartition, OffsetAndMetadata>> pending = new HashMap<>();

    /**
     * What applications do at a rebalance: commit what was consumed from the partitions about
     * to be lost, and start the partitions gained at their committed offsets. Beyond tidiness,
     * the listener keeps two races of the KIP-848 consumer in client 3.9.1 out of the test,
     * whatever the broker:
     * - with no listener, a revocation completes on the client's background thread, which
     *   drops the partition while poll() is between checking it and reading its lag: poll()
     *   throws IllegalStateException ("No current assignment for partition");
     * - partitions assigned while poll() fetches the committed offsets of earlier ones are
     *   reset to auto.offset.reset instead of their committed offsets (KAFKA-17674, fixed in
     *   Kafka 4.0), so the new owner reads again what the old one committed. Seeking here,
     *   before the partitions become fetchable, overrides that reset.
     */
    private ConsumerRebalanceListener commitAndSeek(KafkaConsumer<String, String> c, Map<TopicPartition, Long> committedUpTo) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(pending.getOrDefault(c, Map.of()));
                offsets.keySet().retainAll(revoked);
                if (offsets.isEmpty()) {
                    return;
                }
                try {
                    c.commitSync(offsets, Duration.ofSeconds(10));
                    offsets.forEach((tp, o) -> committedUpTo.merge(tp, o.offset(), Math::max));
                    pending.get(c).keySet().removeAll(offsets.keySet());
                } catch (KafkaException e) {
                    Check.info("commit of revoked partitions refused, consumed again by their next owner: "
                            + e.getClass().getSimpleName());
                }
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                if (assigned.isEmpty()) {
                    return;
                }
                c.committed(Set.copyOf(assigned), Duration.ofSeconds(10)).forEach((tp, o) -> {
                    if (o != null) {
                        c.seek(tp, o);
                    }
                });
            }
        };
    }

    private void consumeOnce(KafkaConsumer<String, String> c, Map<TopicPartition, Long> committedUpTo, Set<String> seen,
            List<String> duplicates) {
        ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(100));
        Map<TopicPartition, OffsetAndMetadata> offsets = pending.computeIfAbsent(c, k -> new HashMap<>());
        for (ConsumerRecord<String, String> r : records) {
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            if (r.offset() < committedUpTo.getOrDefault(tp, 0L)) {
                duplicates.add(tp + "@" + r.offset() + " (committed up to " + committedUpTo.get(tp) + ", seen by "
                        + c.groupMetadata().memberId() + " at epoch " + c.groupMetadata().generationId() + ")");
            }
            seen.add(tp + "@" + r.offset());
            offsets.put(tp, new OffsetAndMetadata(r.offset() + 1));
        }
        // A partition taken away is consumed again by its new owner from the last commit; one
        // kept (cooperative rebalancing, KIP-848) is committed at a later poll.
        offsets.keySet().retainAll(c.assignment());
        if (offsets.isEmpty()) {
            return;
        }
        try {
            c.commitSync(offsets, Duration.ofSeconds(10));
            offsets.forEach((tp, o) -> committedUpTo.merge(tp, o.offset(), Math::max));
            offsets.clear();
        } catch (KafkaException e) {
            Check.info("commit refused, retried at the next poll: " + e.getClass().getSimpleName() + ", member "
                    + c.groupMetadata().memberId() + " generation " + c.groupMetadata().generationId() + " assigned "
                    + c.assignment().size());
        }
    }

    private void staticMembership() throws Exception {
        String topic = topic("static", 4);
        String group = prefix + "-static";
        produce(topic, 4, 0, 40);
        java.util.Properties props = Clients.props("group.instance.id", "static-1", "session.timeout.ms", "15000");
        Set<TopicPartition> before;
        int generation;
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, group, props)) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = Clients.pollUntil(c, 40, Duration.ofSeconds(20));
            Check.eq(40, got.size(), "records consumed by the first incarnation");
            c.commitSync();
            before = c.assignment();
            generation = c.groupMetadata().generationId();
        }
        produce(topic, 4, 40, 80);
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, group, props)) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = Clients.pollUntil(c, 40, Duration.ofSeconds(20));
            Check.eq(40, got.size(), "records consumed by the second incarnation (from the committed offsets)");
            Check.that(got.stream().allMatch(r -> r.offset() >= 10), "a record before the committed offset came again");
            Check.eq(before, c.assignment(), "assignment");
            Check.eq(generation, c.groupMetadata().generationId(), "generation (a static rejoin is not a rebalance)");
            Check.eq("static-1", c.groupMetadata().groupInstanceId().orElse(null), "group instance id");
        }
    }

    private void assignAndSeek() throws Exception {
        String topic = topic("seek", 1);
        produce(topic, 1, 0, 100);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, null, Clients.props())) {
            c.assign(List.of(tp));
            c.seek(tp, 50);
            List<ConsumerRecord<String, String>> got = Clients.pollUntil(c, 1, Duration.ofSeconds(20));
            Check.that(!got.isEmpty(), "nothing after seek(50)");
            Check.eq(50L, got.get(0).offset(), "first offset after seek(50)");
            Check.eq("v50", got.get(0).value(), "value at offset 50");
            c.seekToEnd(List.of(tp));
            Check.eq(100L, c.position(tp), "position after seekToEnd");
            c.seekToBeginning(List.of(tp));
            Check.eq(0L, c.position(tp), "position after seekToBeginning");
            Check.eq(Map.of(tp, 100L), c.endOffsets(List.of(tp)), "endOffsets");
            Check.eq(Map.of(tp, 0L), c.beginningOffsets(List.of(tp)), "beginningOffsets");
        }
    }

    private void offsetsForTimes() throws Exception {
        String topic = topic("times", 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        long base = System.currentTimeMillis() - 100_000;
        try (KafkaProducer<String, String> p = Clients.producer(bootstrap, Clients.props())) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(topic, 0, base + i * 1000L, "k" + i, "v" + i));
            }
        }
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, null, Clients.props())) {
            Map<TopicPartition, OffsetAndTimestamp> at = c.offsetsForTimes(Map.of(tp, base + 3500));
            Check.eq(4L, at.get(tp).offset(), "offset for base+3.5s");
            Check.eq(base + 4000, at.get(tp).timestamp(), "timestamp for base+3.5s");
            Check.eq(0L, c.offsetsForTimes(Map.of(tp, 0L)).get(tp).offset(), "offset for time 0");
            Check.that(c.offsetsForTimes(Map.of(tp, base + 60_000)).get(tp) == null, "a time after every record gives null");
        }
    }

    private void pauseResume() throws Exception {
        String topic = topic("pause", 2);
        produce(topic, 2, 0, 40);
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, null, Clients.props())) {
            c.assign(List.of(p0, p1));
            c.pause(List.of(p0));
            List<ConsumerRecord<String, String>> got = Clients.pollUntil(c, 20, Duration.ofSeconds(20));
            got.addAll(Clients.pollUntil(c, Integer.MAX_VALUE, Duration.ofMillis(500)));
            Check.eq(Set.of(1), got.stream().map(ConsumerRecord::partition).collect(Collectors.toSet()), "partitions while p0 paused");
            Check.eq(20, got.size(), "records while p0 paused");
            Check.eq(Set.of(p0), c.paused(), "paused()");
            c.resume(List.of(p0));
            got = Clients.pollUntil(c, 20, Duration.ofSeconds(20));
            Check.eq(20, got.size(), "records after resume");
            Check.that(got.stream().allMatch(r -> r.partition() == 0), "records after resume come from p0");
        }
    }

    private void readCommitted() throws Exception {
        String topic = topic("rc", 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        produce(topic, 1, 0, 5);
        try (KafkaProducer<String, String> txn = Clients.producer(bootstrap, Clients.props("transactional.id", prefix + "-rc"));
                KafkaConsumer<String, String> c = Clients.consumer(bootstrap, null, Clients.props("isolation.level", "read_committed"))) {
            txn.initTransactions();
            txn.beginTransaction();
            txn.send(new ProducerRecord<>(topic, 0, "t", "open")).get(20, TimeUnit.SECONDS);
            produce(topic, 1, 5, 10); // after the open transaction: held back too
            c.assign(List.of(tp));
            List<ConsumerRecord<String, String>> got = Clients.pollUntil(c, 5, Duration.ofSeconds(20));
            got.addAll(Clients.pollUntil(c, Integer.MAX_VALUE, Duration.ofSeconds(1)));
            Check.eq(5, got.size(), "records before the open transaction");
            Check.eq(Map.of(tp, 5L), c.endOffsets(List.of(tp)), "endOffsets under read_committed (the LSO)");
            txn.commitTransaction();
            got = Clients.pollUntil(c, 6, Duration.ofSeconds(20));
            Check.eq(6, got.size(), "records after the commit");
            Check.eq("open", got.get(0).value(), "the transaction's record");
        }
    }

    private void produce(String topic, int partitions, int from, int to) throws Exception {
        try (KafkaProducer<String, String> p = Clients.producer(bootstrap, Clients.props())) {
            for (int i = from; i < to; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + (i / partitions)));
            }
            p.flush();
        }
    }

    private String topic(String name, int partitions) throws Exception {
        String topic = prefix + "-" + name;
        try (Admin admin = Clients.admin(bootstrap)) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                // createTopics' answer is checked by the admin scenario; here only the topic matters.
                Clients.eventually(Duration.ofSeconds(10), () -> admin.listTopics().names().get().contains(topic));
            }
        }
        return topic;
    }
}
