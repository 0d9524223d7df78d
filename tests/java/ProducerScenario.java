import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The idempotent producer with five requests in flight, every codec, headers, null keys and
 * values, a record near the topic's max.message.bytes; all read back and compared.
 */
final class ProducerScenario {
    private static final int MAX_MESSAGE_BYTES = 100_000;
    private final String bootstrap;
    private final String prefix = Clients.unique("prod");

    ProducerScenario(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    void run() throws Exception {
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            Check.run("idempotent producer, " + codec + ", 5 in flight: 2000 records with headers, null keys and values, read back in order",
                    () -> roundTrip(codec));
        }
        Check.run("a record near max.message.bytes is accepted, one above it refused", this::nearMax);
    }

    private void roundTrip(String codec) throws Exception {
        String topic = prefix + "-" + codec;
        createTopic(topic, 2, Map.of());
        List<ProducerRecord<byte[], byte[]>> sent = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            byte[] key = i % 7 == 0 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value = i % 11 == 0 ? null : ("value-" + i + "-" + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
            List<Header> headers = i % 3 == 0 ? List.of()
                    : List.of(new RecordHeader("h1", ("hv" + i).getBytes(StandardCharsets.UTF_8)), new RecordHeader("h-null", null),
                            new RecordHeader("h1", new byte[0]));
            sent.add(new ProducerRecord<>(topic, i % 2, 1_700_000_000_000L + i, key, value, headers));
        }
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = Clients.bytesProducer(bootstrap, Clients.props(
                "enable.idempotence", "true", "acks", "all", "max.in.flight.requests.per.connection", "5",
                "compression.type", codec, "linger.ms", "5", "batch.size", "16384"))) {
            for (ProducerRecord<byte[], byte[]> record : sent) {
                acks.add(producer.send(record));
            }
            producer.flush();
        }
        long[] next = new long[2];
        for (int i = 0; i < sent.size(); i++) {
            RecordMetadata md = acks.get(i).get(20, TimeUnit.SECONDS);
            Check.eq(i % 2, md.partition(), "partition of record " + i);
            Check.eq(next[i % 2]++, md.offset(), "offset of record " + i + " (acks must come back in order, no gaps)");
        }
        try (KafkaConsumer<byte[], byte[]> consumer = Clients.bytesConsumer(bootstrap, Clients.props())) {
            consumer.assign(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
            List<ConsumerRecord<byte[], byte[]>> got = Clients.pollUntil(consumer, sent.size(), Duration.ofSeconds(30));
            Check.eq(sent.size(), got.size(), "records read back");
            int[] seen = new int[2];
            for (ConsumerRecord<byte[], byte[]> r : got) {
                int i = 2 * seen[r.partition()]++ + r.partition();
                ProducerRecord<byte[], byte[]> s = sent.get(i);
                Check.that(Arrays.equals(s.key(), r.key()), "key of record " + i);
                Check.that(Arrays.equals(s.value(), r.value()), "value of record " + i + " offset " + r.offset());
                Check.eq(s.timestamp(), r.timestamp(), "timestamp of record " + i);
                Header[] want = s.headers().toArray();
                Header[] have = r.headers().toArray();
                Check.eq(want.length, have.length, "header count of record " + i);
                for (int h = 0; h < want.length; h++) {
                    Check.eq(want[h].key(), have[h].key(), "header key " + h + " of record " + i);
                    Check.that(Arrays.equals(want[h].value(), have[h].value()), "header value " + h + " of record " + i
                            + ": " + Arrays.toString(have[h].value()));
                }
            }
        }
    }

    private void nearMax() throws Exception {
        String topic = prefix + "-big";
        createTopic(topic, 1, Map.of("max.message.bytes", Integer.toString(MAX_MESSAGE_BYTES)));
        try (KafkaProducer<byte[], byte[]> producer = Clients.bytesProducer(bootstrap, Clients.props(
                "enable.idempotence", "true", "compression.type", "none", "max.request.size", "1048576"))) {
            // The batch around a record costs about 80 bytes more than its value.
            byte[] big = new byte[MAX_MESSAGE_BYTES - 200];
            Arrays.fill(big, (byte) 'b');
            RecordMetadata md = producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(StandardCharsets.UTF_8), big))
                    .get(20, TimeUnit.SECONDS);
            Check.eq(0L, md.offset(), "offset of the large record");
            try {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[MAX_MESSAGE_BYTES + 1000])).get(20, TimeUnit.SECONDS);
                throw new AssertionError("a record above max.message.bytes was accepted");
            } catch (java.util.concurrent.ExecutionException e) {
                Check.that(e.getCause() instanceof RecordTooLargeException, "refused with " + e.getCause());
            }
        }
        try (KafkaConsumer<byte[], byte[]> consumer = Clients.bytesConsumer(bootstrap, Clients.props())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            List<ConsumerRecord<byte[], byte[]>> got = Clients.pollUntil(consumer, 1, Duration.ofSeconds(20));
            Check.eq(1, got.size(), "records read back");
            Check.eq(MAX_MESSAGE_BYTES - 200, got.get(0).value().length, "size of the value read back");
        }
    }

    private void createTopic(String topic, int partitions, Map<String, String> configs) throws Exception {
        // createTopics' answer is checked by the admin scenario; here only the topic matters.
        try (Admin admin = Clients.admin(bootstrap)) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                Clients.eventually(Duration.ofSeconds(10), () -> admin.listTopics().names().get().contains(topic));
            }
        }
    }
}
