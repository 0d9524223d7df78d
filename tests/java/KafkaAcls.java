import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for Kafka's {@code kafka-acls.sh} (its AclCommand) for the flags librdkafka's
 * test suite passes: it does what AclCommand does with them, through the same Admin calls
 * (createAcls, deleteAcls). Any other flag is refused (exit status 2), so a test that needs
 * more fails loudly rather than running against a different command.
 *
 *   KafkaAcls --bootstrap-server HOST:PORT (--add | --remove)
 *             [--allow-principal P]... [--deny-principal P]... [--operation OP]...
 *             [--allow-host H]... [--deny-host H]...
 *             (--topic T | --group G | --transactional-id ID | --cluster)
 *             [--resource-pattern-type literal|prefixed] [--force]
 */
public final class KafkaAcls {
    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        Boolean add = null;
        List<String> allowPrincipals = new ArrayList<>();
        List<String> denyPrincipals = new ArrayList<>();
        List<String> allowHosts = new ArrayList<>();
        List<String> denyHosts = new ArrayList<>();
        List<AclOperation> operations = new ArrayList<>();
        List<ResourcePattern> resources = new ArrayList<>();
        PatternType patternType = PatternType.LITERAL;
        List<String[]> named = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            switch (flag) {
                case "--add": add = true; break;
                case "--remove": add = false; break;
                case "--force": break;
                case "--cluster": named.add(new String[] {"cluster", "kafka-cluster"}); break;
                default:
                    if (i + 1 >= args.length) {
                        usage("missing a value after " + flag);
                    }
                    String value = args[++i];
                    switch (flag) {
                        case "--bootstrap-server": bootstrap = value; break;
                        case "--allow-principal": allowPrincipals.add(value); break;
                        case "--deny-principal": denyPrincipals.add(value); break;
                        case "--allow-host": allowHosts.add(value); break;
                        case "--deny-host": denyHosts.add(value); break;
                        case "--operation": operations.add(operation(value)); break;
                        case "--topic": named.add(new String[] {"topic", value}); break;
                        case "--group": named.add(new String[] {"group", value}); break;
                        case "--transactional-id": named.add(new String[] {"transactional-id", value}); break;
                        case "--resource-pattern-type":
                            patternType = PatternType.fromString(value.toUpperCase(Locale.ROOT));
                            break;
                        default: usage("unsupported flag " + flag);
                    }
            }
        }
        if (bootstrap == null || add == null || named.isEmpty()) {
            usage("--bootstrap-server, --add or --remove, and a resource are required");
        }
        for (String[] n : named) {
            ResourceType type;
            switch (n[0]) {
                case "topic": type = ResourceType.TOPIC; break;
                case "group": type = ResourceType.GROUP; break;
                case "transactional-id": type = ResourceType.TRANSACTIONAL_ID; break;
                default: type = ResourceType.CLUSTER; break;
            }
            resources.add(new ResourcePattern(type, n[1], patternType));
        }
        if (operations.isEmpty()) {
            operations.add(AclOperation.ALL);
        }
        // As AclCommand: a principal without hosts is allowed or denied from every host.
        if (allowHosts.isEmpty()) {
            allowHosts.add("*");
        }
        if (denyHosts.isEmpty()) {
            denyHosts.add("*");
        }
        List<AccessControlEntry> entries = new ArrayList<>();
        for (AclOperation op : operations) {
            for (String p : allowPrincipals) {
                for (String h : allowHosts) {
                    entries.add(new AccessControlEntry(p, h, op, AclPermissionType.ALLOW));
                }
            }
            for (String p : denyPrincipals) {
                for (String h : denyHosts) {
                    entries.add(new AccessControlEntry(p, h, op, AclPermissionType.DENY));
                }
            }
        }
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            if (add) {
                List<AclBinding> bindings = new ArrayList<>();
                for (ResourcePattern r : resources) {
                    for (AccessControlEntry e : entries) {
                        bindings.add(new AclBinding(r, e));
                    }
                }
                admin.createAcls(bindings).all().get(30, TimeUnit.SECONDS);
                System.out.println("Adding ACLs: " + bindings);
            } else {
                List<AclBindingFilter> filters = new ArrayList<>();
                for (ResourcePattern r : resources) {
                    ResourcePatternFilter rf = new ResourcePatternFilter(r.resourceType(), r.name(), r.patternType());
                    if (entries.isEmpty()) {
                        filters.add(new AclBindingFilter(rf, AccessControlEntryFilter.ANY));
                    }
                    for (AccessControlEntry e : entries) {
                        filters.add(new AclBindingFilter(rf, e.toFilter()));
                    }
                }
                System.out.println("Removed ACLs: " + admin.deleteAcls(filters).all().get(30, TimeUnit.SECONDS));
            }
        }
    }

    private static AclOperation operation(String name) {
        AclOperation op = AclOperation.fromString(name.replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT));
        if (op == AclOperation.UNKNOWN || op == AclOperation.ANY) {
            usage("unknown operation " + name);
        }
        return op;
    }

    private static void usage(String why) {
        System.err.println("kafka-acls.sh stand-in: " + why);
        System.exit(2);
    }
}
