import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;

/** Transactional producers: commit, abort, fencing, and consume-transform-produce. */
final class TransactionsScenario {
    private final String bootstrap;
    private final String prefix = Clients.unique("txn");

    TransactionsScenario(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    void run() throws Exception {
        Check.run("commit: a read_committed consumer sees the committed records", () -> {
            String topic = topic("commit", 1);
            try (KafkaProducer<String, String> p = transactional(prefix + "-commit")) {
                p.initTransactions();
                p.beginTransaction();
                for (int i = 0; i < 10; i++) {
                    p.send(new ProducerRecord<>(topic, "k" + i, "c" + i));
                }
                p.commitTransaction();
            }
            Check.eq(values(10, "c"), readValues(topic, "read_committed", 10), "read_committed values");
        });
        Check.run("abort: read_committed sees only committed records, read_uncommitted sees both", () -> {
            String topic = topic("abort", 1);
            try (KafkaProducer<String, String> p = transactional(prefix + "-abort")) {
                p.initTransactions();
                p.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    p.send(new ProducerRecord<>(topic, "k" + i, "a" + i));
                }
                p.flush();
                p.abortTransaction();
                p.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    p.send(new ProducerRecord<>(topic, "k" + i, "c" + i));
                }
                p.commitTransaction();
            }
            Check.eq(values(3, "c"), readValues(topic, "read_committed", 3), "read_committed values");
            List<String> all = new ArrayList<>(values(5, "a"));
            all.addAll(values(3, "c"));
            Check.eq(all, readValues(topic, "read_uncommitted", 8), "read_uncommitted values");
        });
        Check.run("fencing: a second producer with the same transactional.id fences the first (ProducerFencedException)", () -> {
            String topic = topic("fence", 1);
            String id = prefix + "-fence";
            try (KafkaProducer<String, String> first = transactional(id); KafkaProducer<String, String> second = transactional(id)) {
                first.initTransactions();
                first.beginTransaction();
                first.send(new ProducerRecord<>(topic, "k", "first")).get(20, TimeUnit.SECONDS);
                second.initTransactions(); // fences the first, aborting its transaction
                // The first's commit reaches the coordinator with the old epoch: PRODUCER_FENCED.
                // (A produce with the old epoch would get INVALID_PRODUCER_EPOCH instead, as in
                // Kafka since KIP-588.)
                try {
                    first.commitTransaction();
                    throw new AssertionError("the fenced producer committed");
                } catch (ProducerFencedException e) {
                    // expected
                } catch (KafkaException e) {
                    throw new AssertionError("fenced producer's commit failed with " + Check.describe(e));
                }
                second.beginTransaction();
                second.send(new ProducerRecord<>(topic, "k", "second"));
                second.commitTransaction();
            }
            Check.eq(List.of("second"), readValues(topic, "read_committed", 1), "read_committed values");
        });
        Check.run("consume-transform-produce with sendOffsetsToTransaction(groupMetadata)", this::consumeTransformProduce);
    }

    private void consumeTransformProduce() throws Exception {
        String in = topic("ctp-in", 2);
        String out = topic("ctp-out", 2);
        String group = prefix + "-ctp";
        try (KafkaProducer<String, String> p = Clients.producer(bootstrap, Clients.props())) {
            for (int i = 0; i < 40; i++) {
                p.send(new ProducerRecord<>(in, i % 2, "k" + i, "in" + i));
            }
        }
        int transformed = 0;
        try (KafkaConsumer<String, String> consumer = Clients.consumer(bootstrap, group, Clients.props("isolation.level", "read_committed"));
                KafkaProducer<String, String> producer = transactional(prefix + "-ctp")) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            while (transformed < 40 && System.nanoTime() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(out, r.partition(), r.key(), r.value().replace("in", "out")));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    transformed++;
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
            }
            Check.eq(40, transformed, "records transformed");
            // An aborted transaction's offsets are not committed.
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(out, 0, "k", "aborted"));
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition(in, 0), new OffsetAndMetadata(1)), consumer.groupMetadata());
            producer.abortTransaction();
        }
        try (Admin admin = Clients.admin(bootstrap)) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            Check.eq(20L, committed.get(new TopicPartition(in, 0)).offset(), "committed offset of partition 0");
            Check.eq(20L, committed.get(new TopicPartition(in, 1)).offset(), "committed offset of partition 1");
        }
        List<String> got = readValues(out, "read_committed", 40);
        Check.eq(40, got.size(), "records in the output topic");
        Check.that(got.stream().allMatch(v -> v.startsWith("out")), "output values " + got);
        Check.eq(40L, got.stream().distinct().count(), "distinct output values");
    }

    private KafkaProducer<String, String> transactional(String id) {
        return Clients.producer(bootstrap, Clients.props("transactional.id", id, "transaction.timeout.ms", "30000"));
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

    /** Values of every partition of `topic`, partition by partition, read from the start. */
    private List<String> readValues(String topic, String isolation, int expected) {
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, null, Clients.props("isolation.level", isolation))) {
            List<TopicPartition> partitions = c.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).sorted((a, b) -> a.partition() - b.partition())
                    .collect(Collectors.toList());
            c.assign(partitions);
            List<ConsumerRecord<String, String>> got = Clients.pollUntil(c, expected, Duration.ofSeconds(20));
            // A little longer: records beyond the expected ones would be a failure too.
            got.addAll(Clients.pollUntil(c, Integer.MAX_VALUE, Duration.ofMillis(500)));
            got.sort((a, b) -> a.partition() != b.partition() ? a.partition() - b.partition() : Long.compare(a.offset(), b.offset()));
            return got.stream().map(ConsumerRecord::value).collect(Collectors.toList());
        }
    }

    private static List<String> values(int n, String prefix) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + i);
        }
        return out;
    }
}
