import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for Kafka's {@code kafka-topics.sh} (its TopicCommand) for the flags librdkafka's
 * test suite passes: it does what TopicCommand does with them, through the same Admin calls
 * (createTopics, createPartitions, deleteTopics). Any other flag is refused (exit status 2), so
 * a test that needs more fails loudly rather than running against a different command.
 *
 *   KafkaTopics --bootstrap-server HOST:PORT (--create | --alter | --delete) --topic T
 *               [--partitions N] [--replication-factor N] [--config K=V]...
 */
public final class KafkaTopics {
    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String action = null;
        String topic = null;
        Optional<Integer> partitions = Optional.empty();
        Optional<Short> replicationFactor = Optional.empty();
        Map<String, String> configs = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            switch (flag) {
                case "--create":
                case "--alter":
                case "--delete":
                    action = flag.substring(2);
                    break;
                default:
                    if (i + 1 >= args.length) {
                        usage("missing a value after " + flag);
                    }
                    String value = args[++i];
                    switch (flag) {
                        case "--bootstrap-server": bootstrap = value; break;
                        case "--topic": topic = value; break;
                        case "--partitions": partitions = Optional.of(Integer.parseInt(value)); break;
                        case "--replication-factor": replicationFactor = Optional.of(Short.parseShort(value)); break;
                        case "--config": {
                            int eq = value.indexOf('=');
                            if (eq < 1) {
                                usage("--config takes key=value, not " + value);
                            }
                            configs.put(value.substring(0, eq), value.substring(eq + 1));
                            break;
                        }
                        default: usage("unsupported flag " + flag);
                    }
            }
        }
        if (bootstrap == null || action == null || topic == null) {
            usage("--bootstrap-server, --create, --alter or --delete, and --topic are required");
        }
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            switch (action) {
                case "create":
                    NewTopic created = new NewTopic(topic, partitions, replicationFactor).configs(configs);
                    admin.createTopics(List.of(created)).all().get(30, TimeUnit.SECONDS);
                    System.out.println("Created topic " + topic + ".");
                    break;
                case "alter":
                    if (partitions.isEmpty() || !configs.isEmpty()) {
                        usage("--alter takes --partitions only");
                    }
                    admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions.get())))
                            .all().get(30, TimeUnit.SECONDS);
                    System.out.println("Altered the partitions of " + topic + ".");
                    break;
                default:
                    admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
                    System.out.println("Deleted topic " + topic + ".");
            }
        }
    }

    private static void usage(String why) {
        System.err.println("kafka-topics.sh stand-in: " + why);
        System.exit(2);
    }
}
