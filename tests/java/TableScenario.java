import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * A table kept in a compacted topic, as a JVM service keeps one (Kafka Streams' changelogs,
 * Connect's config, offset and status topics, Schema Registry's schemas): written by the
 * idempotent producer as updates and deletes, with a header and a timestamp of its own on
 * every record, in snappy and gzip (the codecs the Python table does not write); cleaned by
 * floe's jobs (the floe under test runs them every half second); then restored from offset 0
 * by a consumer that must find the latest value of each live key, with its header and
 * timestamp, at the offset it was written at, and nothing else.
 */
final class TableScenario {
    private static final int KEYS = 200;
    private static final int ROUNDS = 4;
    private static final int UPDATES_PER_ROUND = 1000;
    /** How long the jobs may take to clean the table (a bound on a wait, not a timed check). */
    private static final Duration CLEANED_WITHIN = Duration.ofSeconds(120);
    private final String bootstrap;
    private final String prefix = Clients.unique("table");

    TableScenario(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    /** One record of the table as written or read back. */
    record Row(long offset, String key, String value, long timestamp, String header) {}

    void run() throws Exception {
        for (String codec : List.of("snappy", "gzip")) {
            Check.run("a " + codec + " table in a compacted topic is cleaned and restores to the latest value of each live key",
                    () -> table(codec));
        }
    }

    private void table(String codec) throws Exception {
        String topic = prefix + "-" + codec;
        try (Admin admin = Clients.admin(bootstrap)) {
            NewTopic t = new NewTopic(topic, 1, (short) 1).configs(Map.of(
                    "cleanup.policy", "compact",
                    "min.cleanable.dirty.ratio", "0.01",
                    "delete.retention.ms", "1000"));
            admin.createTopics(List.of(t)).all().get();
        }
        Map<String, Row> table = write(topic, codec);
        List<Row> restored = null;
        long deadline = System.nanoTime() + CLEANED_WITHIN.toNanos();
        while (System.nanoTime() < deadline) {
            restored = restore(topic, "read_uncommitted");
            if (restored.size() == table.size()) {
                break;
            }
            Thread.sleep(500);
        }
        Check.that(restored != null && restored.size() == table.size(),
                "cleaned to " + table.size() + " live keys within " + CLEANED_WITHIN.toSeconds() + " s: "
                        + (restored == null ? "nothing read" : restored.size() + " records"));
        Map<String, Row> byKey = new TreeMap<>();
        long previous = -1;
        for (Row row : restored) {
            Check.that(row.offset() > previous, "offsets in order: " + row.offset() + " after " + previous);
            previous = row.offset();
            Check.that(row.value() != null, "no tombstone is left: " + row);
            byKey.put(row.key(), row);
        }
        Check.eq(table, byKey, "the latest value of each live key, at its offset, with its timestamp and header");
        long written = (long) ROUNDS * UPDATES_PER_ROUND + 1;
        Check.eq(written - 1, restored.get(restored.size() - 1).offset(), "the last record keeps its offset");
        Check.that(restored.size() < written, "offsets have gaps: " + restored.size() + " records of " + written);
        Check.eq(restored, restore(topic, "read_committed"), "a read_committed restore reads the same");
        Check.info(codec + ": " + restored.size() + " live keys of " + KEYS + " after " + written + " offsets");
    }

    /** Writes the table's updates and deletes; the rows the table holds when all are written. */
    private Map<String, Row> write(String topic, String codec) throws Exception {
        Map<String, Row> table = new TreeMap<>();
        Random rng = new Random(11);
        long offset = 0;
        long timestamp = System.currentTimeMillis() - 3_600_000L;
        // Each round its own producer and flush: the log gets entries of its own to clean apart.
        for (int round = 0; round < ROUNDS; round++) {
            try (KafkaProducer<String, String> producer = Clients.producer(bootstrap, Clients.props(
                    "enable.idempotence", "true",
                    "acks", "all",
                    "max.in.flight.requests.per.connection", "5",
                    "compression.type", codec,
                    "linger.ms", "5"))) {
                for (int i = 0; i < UPDATES_PER_ROUND; i++) {
                    String key = "key-" + rng.nextInt(KEYS);
                    boolean delete = rng.nextInt(10) == 0;
                    String value = delete ? null : key + "=" + round + "." + i + ".".repeat(rng.nextInt(200));
                    String header = "update-" + offset;
                    List<Header> headers = List.of(new RecordHeader("update", header.getBytes(StandardCharsets.UTF_8)));
                    producer.send(new ProducerRecord<>(topic, 0, timestamp + offset, key, value, headers));
                    if (delete) {
                        table.remove(key);
                    } else {
                        table.put(key, new Row(offset, key, value, timestamp + offset, header));
                    }
                    offset++;
                }
                producer.flush();
            }
        }
        // The last record on its own: the partition's last entry, which is never cleaned.
        try (KafkaProducer<String, String> producer = Clients.producer(bootstrap, Clients.props("acks", "all"))) {
            List<Header> headers = List.of(new RecordHeader("update", ("update-" + offset).getBytes(StandardCharsets.UTF_8)));
            producer.send(new ProducerRecord<>(topic, 0, timestamp + offset, "end", "end", headers)).get();
            table.put("end", new Row(offset, "end", "end", timestamp + offset, "update-" + offset));
        }
        return table;
    }

    /** The partition read from offset 0 to its high watermark. */
    private List<Row> restore(String topic, String isolation) {
        TopicPartition tp = new TopicPartition(topic, 0);
        List<Row> rows = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = Clients.consumer(bootstrap, null, Clients.props("isolation.level", isolation))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long high = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + Clients.TIMEOUT.toNanos();
            while (consumer.position(tp) < high) {
                Check.that(System.nanoTime() < deadline, "read to the high watermark " + high + " within "
                        + Clients.TIMEOUT.toSeconds() + " s: at " + consumer.position(tp));
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    Header h = r.headers().lastHeader("update");
                    String header = h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
                    rows.add(new Row(r.offset(), r.key(), r.value(), r.timestamp(), header));
                }
            }
        }
        return rows;
    }
}
