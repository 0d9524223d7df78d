import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * An idempotent producer with five requests in flight writes 0, 1, 2, ... to one partition,
 * paced, while the test that runs it kills an agent behind the load balancer; then the
 * partition is read back: every value once, in order (Kafka's guarantee for an idempotent
 * producer, whatever connection a retry takes).
 *
 *   java Main ordered <bootstrap> <topic> <count>
 */
final class OrderedScenario {
    private final String bootstrap;
    private final String topic;
    private final int count;

    OrderedScenario(String bootstrap, String[] args) {
        this.bootstrap = bootstrap;
        this.topic = args.length > 2 ? args[2] : Clients.unique("ordered");
        this.count = args.length > 3 ? Integer.parseInt(args[3]) : 5_000;
    }

    void run() {
        Check.run("idempotent producer, 5 in flight, " + count + " records acknowledged", () -> {
            var props = Clients.props(
                    "enable.idempotence", "true",
                    "acks", "all",
                    "max.in.flight.requests.per.connection", "5",
                    "linger.ms", "5",
                    // Long enough to ride out an agent's death and its lease.
                    "delivery.timeout.ms", "120000",
                    "request.timeout.ms", "10000");
            try (KafkaProducer<String, String> producer = Clients.producer(bootstrap, props)) {
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    sent.add(producer.send(new ProducerRecord<>(topic, 0, "k", Integer.toString(i))));
                    if (i % 50 == 49) {
                        Thread.sleep(10);
                    }
                }
                producer.flush();
                long previous = -1;
                for (Future<RecordMetadata> f : sent) {
                    long offset = f.get(120, TimeUnit.SECONDS).offset();
                    Check.that(offset > previous, "offsets out of order: " + offset + " after " + previous);
                    previous = offset;
                }
            }
        });
        Check.run("read back: every value once, in order", () -> {
            try (KafkaConsumer<String, String> consumer = Clients.consumer(bootstrap, null, Clients.props())) {
                TopicPartition p0 = new TopicPartition(topic, 0);
                consumer.assign(List.of(p0));
                consumer.seekToBeginning(List.of(p0));
                List<ConsumerRecord<String, String>> read = Clients.pollUntil(consumer, count, Duration.ofSeconds(60));
                int expected = 0;
                for (ConsumerRecord<String, String> r : read) {
                    Check.eq(Integer.toString(expected), r.value(), "the value at offset " + r.offset());
                    expected++;
                }
                Check.eq(count, read.size(), "records read");
            }
        });
    }
}
