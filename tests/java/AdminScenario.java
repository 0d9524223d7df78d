import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ConsumerGroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;

/**
 * Every Admin call Spring's KafkaAdmin, Kafka Streams' InternalTopicManager and Connect's
 * TopicAdmin make, each checked for the values it returns.
 */
final class AdminScenario {
    private final String bootstrap;
    private final Admin admin;
    private final String prefix = Clients.unique("adm");
    private final String configured = prefix + "-configs";
    private final String defaults = prefix + "-defaults";
    private final String parts = prefix + "-parts";
    private final String doomed = prefix + "-delete";
    private Uuid configuredId;

    AdminScenario(String bootstrap) {
        this.bootstrap = bootstrap;
        this.admin = Clients.admin(bootstrap);
    }

    private static <T> T get(org.apache.kafka.common.KafkaFuture<T> future) throws Exception {
        return future.get(20, TimeUnit.SECONDS);
    }

    void run() throws Exception {
        Check.run("createTopics with configs: config(), numPartitions(), replicationFactor()", () -> {
            NewTopic topic = new NewTopic(configured, 3, (short) 1)
                    .configs(Map.of("retention.ms", "3600000", "max.message.bytes", "200000"));
            CreateTopicsResult result = admin.createTopics(List.of(topic));
            try {
                get(result.all());
                Check.eq(3, get(result.numPartitions(configured)), "numPartitions");
                Check.eq(1, get(result.replicationFactor(configured)), "replicationFactor");
                Config config = get(result.config(configured));
                Check.that(config != null, "config() is null");
                Check.eq("3600000", config.get("retention.ms").value(), "retention.ms in config()");
                Check.that(!get(result.topicId(configured)).equals(Uuid.ZERO_UUID), "topicId() is zero");
            } finally {
                awaitTopic(configured); // later checks use it even when the answer was wrong
            }
        });
        Check.run("createTopics validateOnly: answers and creates nothing", () -> {
            String name = prefix + "-validate";
            CreateTopicsResult result = admin.createTopics(List.of(new NewTopic(name, 2, (short) 1)),
                    new CreateTopicsOptions().validateOnly(true));
            get(result.all());
            Check.eq(2, get(result.numPartitions(name)), "numPartitions");
            Check.that(!get(admin.listTopics().names()).contains(name), "validateOnly created " + name);
        });
        Check.run("createTopics with numPartitions and replicationFactor empty (broker defaults)", () -> {
            CreateTopicsResult result = admin.createTopics(List.of(new NewTopic(defaults, Optional.empty(), Optional.empty())));
            try {
                get(result.all());
                Check.that(get(result.numPartitions(defaults)) >= 1, "numPartitions " + get(result.numPartitions(defaults)));
                Check.eq(1, get(result.replicationFactor(defaults)), "replicationFactor");
            } finally {
                awaitTopic(defaults);
            }
        });
        Check.run("createTopics replicationFactor -1 (Streams' replication.factor=-1)", () -> {
            String name = prefix + "-rf";
            CreateTopicsResult result = admin.createTopics(List.of(new NewTopic(name, 2, (short) -1)));
            try {
                get(result.all());
                Check.eq(2, get(result.numPartitions(name)), "numPartitions");
            } finally {
                awaitTopic(name);
            }
        });
        Check.run("createTopics an existing topic: TopicExistsException", () -> {
            try {
                get(admin.createTopics(List.of(new NewTopic(configured, 3, (short) 1))).all());
                throw new AssertionError("no error");
            } catch (java.util.concurrent.ExecutionException e) {
                Check.that(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException, "got " + e.getCause());
            }
        });
        Check.run("describeTopics by name (partitions, leader, replicas, isr, topic id)", () -> {
            TopicDescription d = get(admin.describeTopics(List.of(configured)).topicNameValues().get(configured));
            checkDescription(d, configured, 3);
            configuredId = d.topicId();
        });
        Check.run("describeTopics by topic id (TopicCollection.ofTopicIds)", () -> {
            Uuid id = configuredId != null ? configuredId : idFromMetadata(configured);
            TopicDescription d = get(admin.describeTopics(TopicCollection.ofTopicIds(List.of(id))).topicIdValues().get(id));
            checkDescription(d, configured, 3);
        });
        Check.run("describeTopics of a missing topic: UnknownTopicOrPartitionException", () -> {
            try {
                get(admin.describeTopics(List.of(prefix + "-missing")).allTopicNames());
                throw new AssertionError("no error");
            } catch (java.util.concurrent.ExecutionException e) {
                Check.that(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException, "got " + e.getCause());
            }
        });
        Check.run("listTopics (and listInternal)", () -> {
            Set<String> names = get(admin.listTopics().names());
            Check.that(names.contains(configured) && names.contains(defaults), "listTopics lacks created topics: " + names);
            Map<String, TopicListing> all = get(admin.listTopics(new ListTopicsOptions().listInternal(true)).namesToListings());
            Check.that(!all.get(configured).isInternal(), configured + " listed as internal");
            Check.that(!all.get(configured).topicId().equals(Uuid.ZERO_UUID), "listing has no topic id");
        });
        Check.run("describeConfigs topic with includeSynonyms and includeDocumentation", () -> {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, configured);
            Config config = get(admin.describeConfigs(List.of(resource),
                    new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true)).values().get(resource));
            ConfigEntry retention = config.get("retention.ms");
            Check.that(retention != null, "no retention.ms");
            Check.eq("3600000", retention.value(), "retention.ms");
            Check.eq(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.source(), "retention.ms source");
            Check.that(!retention.synonyms().isEmpty(), "retention.ms has no synonyms");
            Check.eq(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.synonyms().get(0).source(), "first synonym's source");
            Check.that(retention.documentation() != null && !retention.documentation().isEmpty(), "retention.ms has no documentation");
            Check.that(retention.type() == ConfigEntry.ConfigType.LONG, "retention.ms type " + retention.type());
            ConfigEntry cleanup = config.get("cleanup.policy");
            Check.that(cleanup != null && cleanup.value().equals("delete") && cleanup.isDefault(), "cleanup.policy " + cleanup);
            Check.eq("200000", config.get("max.message.bytes").value(), "max.message.bytes");
        });
        Check.run("describeConfigs broker", () -> {
            Collection<Node> nodes = get(admin.describeCluster().nodes());
            String id = Integer.toString(nodes.iterator().next().id());
            ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, id);
            Config config = get(admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true))
                    .values().get(resource));
            Check.that(config.entries().size() > 0, "no broker configs");
            Check.that(config.get("message.max.bytes") != null, "broker config lacks message.max.bytes: "
                    + config.entries().stream().map(ConfigEntry::name).collect(Collectors.toList()));
        });
        Check.run("incrementalAlterConfigs SET and DELETE, seen by describeConfigs", () -> {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, configured);
            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", ""), AlterConfigOp.OpType.DELETE)))).all());
            Config config = get(admin.describeConfigs(List.of(resource)).values().get(resource));
            Check.eq("7200000", config.get("retention.ms").value(), "retention.ms after SET");
            Check.that(config.get("max.message.bytes").isDefault(), "max.message.bytes after DELETE: " + config.get("max.message.bytes"));
            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all());
        });
        Check.run("incrementalAlterConfigs validateOnly changes nothing", () -> {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, configured);
            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET))),
                    new AlterConfigsOptions().validateOnly(true)).all());
            Config config = get(admin.describeConfigs(List.of(resource)).values().get(resource));
            Check.eq("3600000", config.get("retention.ms").value(), "retention.ms");
        });

        long base = System.currentTimeMillis() - 60_000;
        Check.run("listOffsets with every OffsetSpec", () -> {
            try (KafkaProducer<String, String> producer = Clients.producer(bootstrap, Clients.props())) {
                for (int i = 0; i < 5; i++) {
                    // Timestamps 10 s apart, the largest in the middle (maxTimestamp must find it).
                    long ts = base + (i == 2 ? 50_000 : i * 10_000L);
                    producer.send(new ProducerRecord<>(configured, 0, ts, "k" + i, "v" + i)).get(20, TimeUnit.SECONDS);
                }
            }
            TopicPartition tp = new TopicPartition(configured, 0);
            Check.eq(0L, get(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp)).offset(), "earliest");
            Check.eq(5L, get(admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)).offset(), "latest");
            ListOffsetsResult.ListOffsetsResultInfo at = get(admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(base + 25_000)))
                    .partitionResult(tp));
            Check.eq(2L, at.offset(), "forTimestamp(base+25s) offset");
            Check.eq(base + 50_000, at.timestamp(), "forTimestamp timestamp");
            ListOffsetsResult.ListOffsetsResultInfo max = get(admin.listOffsets(Map.of(tp, OffsetSpec.maxTimestamp())).partitionResult(tp));
            Check.eq(2L, max.offset(), "maxTimestamp offset");
            Check.eq(base + 50_000, max.timestamp(), "maxTimestamp timestamp");
            ListOffsetsResult.ListOffsetsResultInfo none = get(admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(base + 3_600_000)))
                    .partitionResult(tp));
            Check.eq(-1L, none.offset(), "forTimestamp after the last record");
            ListOffsetsResult.ListOffsetsResultInfo committed = get(admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                    new ListOffsetsOptions(org.apache.kafka.common.IsolationLevel.READ_COMMITTED)).partitionResult(tp));
            Check.eq(5L, committed.offset(), "latest under read_committed");
        });
        Check.run("deleteRecords, then earliest offset moves", () -> {
            TopicPartition tp = new TopicPartition(configured, 0);
            DeletedRecords deleted = get(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(2))).lowWatermarks().get(tp));
            Check.eq(2L, deleted.lowWatermark(), "lowWatermark");
            Check.eq(2L, get(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp)).offset(), "earliest after delete");
        });
        Check.run("createPartitions increaseTo(4), seen by describeTopics", () -> {
            try {
                get(admin.createTopics(List.of(new NewTopic(parts, 1, (short) 1))).all());
            } catch (Exception e) {
                awaitTopic(parts); // createTopics itself is checked above
            }
            get(admin.createPartitions(Map.of(parts, NewPartitions.increaseTo(4))).all());
            Check.that(Clients.eventually(Duration.ofSeconds(10), () -> partitionCount(parts) == 4),
                    "partitions after increaseTo(4): " + partitionCount(parts));
        });
        Check.run("createPartitions validateOnly changes nothing", () -> {
            get(admin.createPartitions(Map.of(parts, NewPartitions.increaseTo(6)), new CreatePartitionsOptions().validateOnly(true)).all());
            Check.eq(4, partitionCount(parts), "partitions");
        });
        Check.run("deleteTopics, then listTopics lacks it", () -> {
            try {
                get(admin.createTopics(List.of(new NewTopic(doomed, 1, (short) 1))).all());
            } catch (Exception e) {
                awaitTopic(doomed);
            }
            get(admin.deleteTopics(List.of(doomed)).all());
            Check.that(Clients.eventually(Duration.ofSeconds(10), () -> !get(admin.listTopics().names()).contains(doomed)),
                    doomed + " still listed");
        });

        consumerGroups();

        Check.run("describeCluster (nodes, controller, cluster id)", () -> {
            DescribeClusterResult cluster = admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true));
            Collection<Node> nodes = get(cluster.nodes());
            Check.that(!nodes.isEmpty(), "no nodes");
            Node node = nodes.iterator().next();
            Check.that(node.port() > 0 && !node.host().isEmpty(), "node " + node);
            Check.that(get(cluster.clusterId()) != null && !get(cluster.clusterId()).isEmpty(), "no cluster id");
            Node controller = get(cluster.controller());
            Check.that(controller != null && !controller.isEmpty(), "controller " + controller);
        });
        Check.run("describeLogDirs", () -> {
            int id = get(admin.describeCluster().nodes()).iterator().next().id();
            Map<String, LogDirDescription> dirs = get(admin.describeLogDirs(List.of(id)).descriptions().get(id));
            Check.that(!dirs.isEmpty(), "no log dirs");
            boolean found = dirs.values().stream().anyMatch(d -> d.replicaInfos().containsKey(new TopicPartition(configured, 0)));
            Check.that(found, "no log dir holds " + configured + "-0: " + dirs);
        });
        Check.run("describeFeatures", () -> {
            FeatureMetadata features = get(admin.describeFeatures().featureMetadata());
            Check.that(features.finalizedFeatures().containsKey("metadata.version"),
                    "finalized features lack metadata.version: " + features.finalizedFeatures());
            Check.that(features.supportedFeatures().containsKey("metadata.version"),
                    "supported features lack metadata.version: " + features.supportedFeatures());
        });

        transactions();

        Check.run("describeMetadataQuorum (DescribeQuorum, key 55)", () -> {
            QuorumInfo quorum = get(admin.describeMetadataQuorum().quorumInfo());
            Check.that(quorum.leaderId() >= 0, "leader " + quorum.leaderId());
            Check.that(quorum.highWatermark() > 0, "high watermark " + quorum.highWatermark());
            Check.that(quorum.voters().stream().anyMatch(v -> v.replicaId() == quorum.leaderId()
                    && v.logEndOffset() >= quorum.highWatermark()), "the leader among the voters: " + quorum);
        });
        quotas();
        admin.close(Duration.ofSeconds(5));
    }

    /** Client quotas as Kafka's kafka-client-quotas tool sets and reads them. */
    private void quotas() throws Exception {
        String user = prefix + "-user";
        String client = prefix + "-client";
        org.apache.kafka.common.quota.ClientQuotaEntity userClient = new org.apache.kafka.common.quota.ClientQuotaEntity(
                Map.of(org.apache.kafka.common.quota.ClientQuotaEntity.USER, user,
                        org.apache.kafka.common.quota.ClientQuotaEntity.CLIENT_ID, client));
        Map<String, String> defaultUserMap = new HashMap<>();
        defaultUserMap.put(org.apache.kafka.common.quota.ClientQuotaEntity.USER, null);
        org.apache.kafka.common.quota.ClientQuotaEntity defaultUser = new org.apache.kafka.common.quota.ClientQuotaEntity(defaultUserMap);
        Check.run("alterClientQuotas: validateOnly writes nothing; bad values are refused", () -> {
            get(admin.alterClientQuotas(List.of(new org.apache.kafka.common.quota.ClientQuotaAlteration(userClient, List.of(
                    new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0)))),
                    new AlterClientQuotasOptions().validateOnly(true)).all());
            Map<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> none = get(admin.describeClientQuotas(
                    org.apache.kafka.common.quota.ClientQuotaFilter.containsOnly(List.of(
                            org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity("user", user)))).entities());
            Check.that(none.isEmpty(), "validateOnly wrote " + none);
            try {
                get(admin.alterClientQuotas(List.of(new org.apache.kafka.common.quota.ClientQuotaAlteration(userClient, List.of(
                        new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("producer_byte_rate", 10.5))))).all());
                Check.that(false, "a fractional byte rate was accepted");
            } catch (java.util.concurrent.ExecutionException e) {
                Check.that(e.getCause() instanceof org.apache.kafka.common.errors.InvalidRequestException, "got " + e.getCause());
            }
        });
        Check.run("alterClientQuotas, then describeClientQuotas by entity, default and type", () -> {
            get(admin.alterClientQuotas(List.of(
                    new org.apache.kafka.common.quota.ClientQuotaAlteration(userClient, List.of(
                            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0),
                            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("request_percentage", 12.5))),
                    new org.apache.kafka.common.quota.ClientQuotaAlteration(defaultUser, List.of(
                            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("consumer_byte_rate", 2097152.0))))).all());
            Map<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> exact = get(admin.describeClientQuotas(
                    org.apache.kafka.common.quota.ClientQuotaFilter.containsOnly(List.of(
                            org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity("user", user),
                            org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity("client-id", client)))).entities());
            Check.eq(Map.of(userClient, Map.of("producer_byte_rate", 1048576.0, "request_percentage", 12.5)), exact, "by entity");
            Map<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> defaults = get(admin.describeClientQuotas(
                    org.apache.kafka.common.quota.ClientQuotaFilter.containsOnly(List.of(
                            org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofDefaultEntity("user")))).entities());
            Check.eq(Map.of(defaultUser, Map.of("consumer_byte_rate", 2097152.0)), defaults, "the default user");
            Map<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> users = get(admin.describeClientQuotas(
                    org.apache.kafka.common.quota.ClientQuotaFilter.contains(List.of(
                            org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntityType("user")))).entities());
            Check.that(users.containsKey(userClient) && users.containsKey(defaultUser), "any user: " + users);
        });
        Check.run("alterClientQuotas removes quotas; an entity without any is gone", () -> {
            get(admin.alterClientQuotas(List.of(
                    new org.apache.kafka.common.quota.ClientQuotaAlteration(userClient, List.of(
                            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("producer_byte_rate", null),
                            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("request_percentage", null))),
                    new org.apache.kafka.common.quota.ClientQuotaAlteration(defaultUser, List.of(
                            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("consumer_byte_rate", null))))).all());
            Map<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> left = get(admin.describeClientQuotas(
                    org.apache.kafka.common.quota.ClientQuotaFilter.all()).entities());
            Check.that(!left.containsKey(userClient) && !left.containsKey(defaultUser), "still there: " + left);
        });
    }

    private void consumerGroups() throws Exception {
        String group = prefix + "-group";
        TopicPartition p0 = new TopicPartition(configured, 0);
        TopicPartition p1 = new TopicPartition(configured, 1);
        Check.run("alterConsumerGroupOffsets on a new group, listConsumerGroupOffsets", () -> {
            get(admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(3, "meta"), p1, new OffsetAndMetadata(0))).all());
            Map<TopicPartition, OffsetAndMetadata> offsets = get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            Check.eq(3L, offsets.get(p0).offset(), "p0 offset");
            Check.eq("meta", offsets.get(p0).metadata(), "p0 metadata");
            Check.eq(0L, offsets.get(p1).offset(), "p1 offset");
        });
        Check.run("listConsumerGroups and describeConsumerGroups of an empty group", () -> {
            Collection<ConsumerGroupListing> groups = get(admin.listConsumerGroups().all());
            ConsumerGroupListing listing = groups.stream().filter(g -> g.groupId().equals(group)).findFirst()
                    .orElseThrow(() -> new AssertionError(group + " not listed"));
            Check.eq(Optional.of(ConsumerGroupState.EMPTY), listing.state(), "listed state");
            ConsumerGroupDescription d = get(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group));
            Check.eq(ConsumerGroupState.EMPTY, d.state(), "described state");
            Check.that(d.members().isEmpty(), "members " + d.members());
            Check.that(d.coordinator() != null && d.coordinator().id() >= 0, "coordinator " + d.coordinator());
        });
        String active = prefix + "-active";
        Check.run("describeConsumerGroups of a stable classic group with a member", () -> {
            try (KafkaConsumer<String, String> consumer = Clients.consumer(bootstrap, active, Clients.props())) {
                consumer.subscribe(List.of(configured));
                Check.that(Clients.eventually(Duration.ofSeconds(20), () -> {
                    consumer.poll(Duration.ofMillis(100));
                    return consumer.assignment().size() == 3;
                }), "assignment " + consumer.assignment());
                ConsumerGroupDescription d = get(admin.describeConsumerGroups(List.of(active)).describedGroups().get(active));
                Check.eq(ConsumerGroupState.STABLE, d.state(), "state");
                Check.eq(1, d.members().size(), "members");
                Check.eq(3, d.members().iterator().next().assignment().topicPartitions().size(), "member's assigned partitions");
                Check.eq("range", d.partitionAssignor(), "assignor");
            }
        });
        String kip848 = prefix + "-848";
        Check.run("describeConsumerGroups of a KIP-848 (group.protocol=consumer) group", () -> {
            try (KafkaConsumer<String, String> consumer = Clients.consumer(bootstrap, kip848, Clients.props("group.protocol", "consumer"))) {
                consumer.subscribe(List.of(configured));
                Check.that(Clients.eventually(Duration.ofSeconds(20), () -> {
                    consumer.poll(Duration.ofMillis(100));
                    return consumer.assignment().size() == 3;
                }), "assignment " + consumer.assignment());
                ConsumerGroupDescription d = get(admin.describeConsumerGroups(List.of(kip848)).describedGroups().get(kip848));
                Check.eq(1, d.members().size(), "members");
            }
        });
        Check.run("deleteConsumerGroupOffsets", () -> {
            get(admin.deleteConsumerGroupOffsets(group, Set.of(p1)).all());
            Map<TopicPartition, OffsetAndMetadata> offsets = get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            Check.eq(Set.of(p0), offsets.keySet(), "partitions with offsets");
        });
        Check.run("deleteConsumerGroups, then not listed", () -> {
            get(admin.deleteConsumerGroups(List.of(group)).all());
            Collection<ConsumerGroupListing> groups = get(admin.listConsumerGroups().all());
            Check.that(groups.stream().noneMatch(g -> g.groupId().equals(group)), group + " still listed");
        });
    }

    private void transactions() throws Exception {
        String txnId = prefix + "-txn";
        KafkaProducer<String, String> producer = Clients.producer(bootstrap, Clients.props("transactional.id", txnId));
        try {
            Check.run("listTransactions and describeTransactions of an ongoing transaction", () -> {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(configured, 1, "k", "v")).get(20, TimeUnit.SECONDS);
                Collection<TransactionListing> listed = get(admin.listTransactions().all());
                TransactionListing mine = listed.stream().filter(t -> t.transactionalId().equals(txnId)).findFirst()
                        .orElseThrow(() -> new AssertionError(txnId + " not listed: " + listed));
                Check.eq(TransactionState.ONGOING, mine.state(), "listed state");
                TransactionDescription d = get(admin.describeTransactions(List.of(txnId)).description(txnId));
                Check.eq(TransactionState.ONGOING, d.state(), "described state");
                Check.eq(Set.of(new TopicPartition(configured, 1)), d.topicPartitions(), "partitions in the transaction");
                Check.eq(mine.producerId(), d.producerId(), "producer id");
                Check.that(d.transactionStartTimeMs().isPresent(), "no start time");
            });
            Check.run("fenceProducers, then the fenced producer's commit fails", () -> {
                get(admin.fenceProducers(List.of(txnId)).all());
                try {
                    producer.commitTransaction();
                    throw new AssertionError("commit succeeded after fenceProducers");
                } catch (ProducerFencedException | InvalidProducerEpochException e) {
                    // what Kafka answers
                }
            });
        } finally {
            producer.close(Duration.ofSeconds(2));
        }
    }

    private void checkDescription(TopicDescription d, String name, int partitions) {
        Check.eq(name, d.name(), "name");
        Check.that(!d.isInternal(), "internal");
        Check.that(d.topicId() != null && !d.topicId().equals(Uuid.ZERO_UUID), "topic id " + d.topicId());
        Check.eq(partitions, d.partitions().size(), "partitions");
        for (TopicPartitionInfo p : d.partitions()) {
            Check.that(p.leader() != null && !p.leader().isEmpty(), "partition " + p.partition() + " leader " + p.leader());
            Check.that(!p.replicas().isEmpty() && !p.isr().isEmpty(), "partition " + p.partition() + " replicas/isr " + p);
        }
    }

    private int partitionCount(String topic) throws Exception {
        // Through the consumer's Metadata path, not describeTopics (checked on its own above).
        try (KafkaConsumer<String, String> c = Clients.consumer(bootstrap, null, Clients.props())) {
            return c.partitionsFor(topic).size();
        }
    }

    private Uuid idFromMetadata(String topic) throws Exception {
        return get(admin.listTopics().namesToListings()).get(topic).topicId();
    }

    private void awaitTopic(String topic) throws Exception {
        Clients.eventually(Duration.ofSeconds(10), () -> get(admin.listTopics().names()).contains(topic));
    }
}
