import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * A floe with SASL and ACLs: `secured <host:port> <admin-user> <admin-password>` against a
 * SASL_PLAINTEXT listener offering PLAIN and SCRAM-SHA-512, started with `--authorizer acl
 * --super-users User:<admin-user>` and the admin's PLAIN password in --sasl-plain-users-file.
 * Checks ACL create/describe/delete and SCRAM user administration through Admin, that the
 * ACLs are enforced on a SCRAM user, and that initTransactions without a TransactionalId ACL
 * fails with TransactionalIdAuthorizationException (not by timing out).
 */
final class SecuredScenario {
    private final String bootstrap;
    private final String adminUser;
    private final String adminPassword;
    private final String prefix = Clients.unique("sec");

    SecuredScenario(String bootstrap, String[] args) {
        this.bootstrap = bootstrap;
        this.adminUser = args.length > 2 ? args[2] : "admin";
        this.adminPassword = args.length > 3 ? args[3] : "admin-secret";
    }

    private Properties login(String mechanism, String user, String password) {
        String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
        return Clients.props("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", mechanism, "sasl.jaas.config",
                module + " required username=\"" + user + "\" password=\"" + password + "\";");
    }

    void run() throws Exception {
        Properties adminProps = Clients.base(bootstrap);
        adminProps.putAll(login("PLAIN", adminUser, adminPassword));
        String user = prefix + "-alice";
        String password = "alice-password";
        String topic = prefix + "-orders";
        try (Admin admin = Admin.create(adminProps)) {
            Check.run("the super user creates a topic (SASL/PLAIN)", () -> {
                try {
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(20, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    // createTopics' answer is checked by the admin scenario; here only the topic matters.
                    Check.that(Clients.eventually(Duration.ofSeconds(10), () -> admin.listTopics().names().get().contains(topic)),
                            "no topic: " + Check.describe(e));
                }
            });
            Check.run("alterUserScramCredentials upsert, describeUserScramCredentials", () -> {
                admin.alterUserScramCredentials(List.<UserScramCredentialAlteration>of(new UserScramCredentialUpsertion(user,
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), password))).all().get(20, TimeUnit.SECONDS);
                Map<String, UserScramCredentialsDescription> described = admin.describeUserScramCredentials(List.of(user))
                        .all().get(20, TimeUnit.SECONDS);
                Check.eq(List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)),
                        described.get(user).credentialInfos(), "credentials of " + user);
            });
            AclBinding write = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                    new AccessControlEntry("User:" + user, "*", AclOperation.WRITE, AclPermissionType.ALLOW));
            AclBinding describe = new AclBinding(new ResourcePattern(ResourceType.TOPIC, prefix, PatternType.PREFIXED),
                    new AccessControlEntry("User:" + user, "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW));
            Check.run("createAcls, describeAcls", () -> {
                admin.createAcls(List.of(write, describe)).all().get(20, TimeUnit.SECONDS);
                Collection<AclBinding> found = admin.describeAcls(new AclBindingFilter(
                        new ResourcePatternFilter(ResourceType.ANY, null, PatternType.ANY),
                        new AccessControlEntryFilter("User:" + user, null, AclOperation.ANY, AclPermissionType.ANY)))
                        .values().get(20, TimeUnit.SECONDS);
                Check.eq(2, found.size(), "ACLs of " + user + ": " + found);
                Check.that(found.contains(write) && found.contains(describe), "ACLs of " + user + ": " + found);
            });
            Check.run("a SCRAM-SHA-512 user writes where an ACL allows it", () -> {
                try (KafkaProducer<String, String> p = Clients.producer(bootstrap, login("SCRAM-SHA-512", user, password))) {
                    p.send(new ProducerRecord<>(topic, "k", "v")).get(20, TimeUnit.SECONDS);
                }
            });
            String bob = prefix + "-bob";
            Check.run("a second SCRAM user without any ACL", () -> admin.alterUserScramCredentials(
                    List.<UserScramCredentialAlteration>of(new UserScramCredentialUpsertion(bob,
                            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get(20, TimeUnit.SECONDS));
            for (String who : List.of(user, bob)) {
                Check.run("initTransactions without a TransactionalId ACL (" + (who.equals(bob) ? "user without any ACL"
                        : "user with a topic WRITE ACL") + "): TransactionalIdAuthorizationException", () -> {
                    Properties props = login("SCRAM-SHA-512", who, password);
                    props.put("transactional.id", who + "-txn");
                    // A broker that made the client wait would end in a TimeoutException.
                    props.put("max.block.ms", "60000");
                    try (KafkaProducer<String, String> p = Clients.producer(bootstrap, props)) {
                        p.initTransactions();
                        throw new AssertionError("initTransactions succeeded without an ACL");
                    } catch (TransactionalIdAuthorizationException e) {
                        // Refused, as Kafka refuses it.
                    } catch (org.apache.kafka.common.errors.TimeoutException e) {
                        throw new AssertionError("timed out instead of TransactionalIdAuthorizationException: " + e);
                    }
                });
            }
            Check.run("deleteAcls, then the user's writes are refused", () -> {
                Collection<AclBinding> deleted = admin.deleteAcls(List.of(write.toFilter())).all().get(20, TimeUnit.SECONDS);
                Check.eq(List.of(write), List.copyOf(deleted), "deleted ACLs");
                Collection<AclBinding> left = admin.describeAcls(new AclBindingFilter(
                        new ResourcePatternFilter(ResourceType.ANY, null, PatternType.ANY),
                        new AccessControlEntryFilter("User:" + user, null, AclOperation.ANY, AclPermissionType.ANY)))
                        .values().get(20, TimeUnit.SECONDS);
                Check.eq(List.of(describe), List.copyOf(left), "ACLs left");
                // Not idempotent: an idempotent producer without any WRITE is refused earlier, at
                // InitProducerId, with ClusterAuthorizationException (as by Kafka).
                Properties props = login("SCRAM-SHA-512", user, password);
                props.put("enable.idempotence", "false");
                try (KafkaProducer<String, String> p = Clients.producer(bootstrap, props)) {
                    p.send(new ProducerRecord<>(topic, "k", "v")).get(20, TimeUnit.SECONDS);
                    throw new AssertionError("a write without an ACL succeeded");
                } catch (ExecutionException e) {
                    Check.that(e.getCause() instanceof TopicAuthorizationException, "refused with " + Check.describe(e));
                }
            });
            Check.run("alterUserScramCredentials delete, then the user is not described", () -> {
                admin.alterUserScramCredentials(List.<UserScramCredentialAlteration>of(
                        new UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512))).all().get(20, TimeUnit.SECONDS);
                // all() lists a user it did not find with no credentials (the client skips
                // RESOURCE_NOT_FOUND there); description() reports the broker's error.
                try {
                    UserScramCredentialsDescription described = admin.describeUserScramCredentials(List.of(user))
                            .description(user).get(20, TimeUnit.SECONDS);
                    throw new AssertionError(user + " still described: " + described);
                } catch (ExecutionException e) {
                    Check.that(e.getCause() instanceof org.apache.kafka.common.errors.ResourceNotFoundException,
                            "describing a deleted user: " + Check.describe(e));
                }
            });
        }
    }
}
