import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Client configurations shared by the scenarios: short timeouts, so a hang shows as a failure. */
final class Clients {
    static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** A name unique to this run, so a scenario can be rerun against the same floe. */
    static String unique(String prefix) {
        return prefix + "-" + Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
    }

    static Properties base(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "15000");
        p.put("default.api.timeout.ms", "20000");
        return p;
    }

    static Admin admin(String bootstrap) {
        return Admin.create(base(bootstrap));
    }

    static KafkaProducer<String, String> producer(String bootstrap, Properties extra) {
        Properties p = base(bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("delivery.timeout.ms", "30000");
        p.put("max.block.ms", "20000");
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static KafkaProducer<byte[], byte[]> bytesProducer(String bootstrap, Properties extra) {
        Properties p = base(bootstrap);
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("delivery.timeout.ms", "30000");
        p.put("max.block.ms", "20000");
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group, Properties extra) {
        Properties p = base(bootstrap);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        if (group != null) {
            p.put("group.id", group);
        }
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    static KafkaConsumer<byte[], byte[]> bytesConsumer(String bootstrap, Properties extra) {
        Properties p = base(bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    static Properties props(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.put(keyValues[i], keyValues[i + 1]);
        }
        return p;
    }

    /** Polls until `count` records arrived or the timeout passed; returns what arrived. */
    static <K, V> List<ConsumerRecord<K, V>> pollUntil(KafkaConsumer<K, V> consumer, int count, Duration timeout) {
        List<ConsumerRecord<K, V>> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (out.size() < count && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }

    /** Waits until `condition` holds, polling; false when the timeout passed. */
    static <T> boolean eventually(Duration timeout, java.util.concurrent.Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.call()) {
                return true;
            }
            Thread.sleep(200);
        }
        return condition.call();
    }
}
