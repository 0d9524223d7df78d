import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.ArrayOf;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Utils;

/**
 * The response harness: for every API key and every version floe advertises (those newer than
 * the client knows through `NewerVersions`), a valid request
 * (naming an existing topic, group, transaction where that makes sense), its answer parsed by
 * the Java client's own parser, and the parsed *ResponseData walked against the version's
 * schema for fields that came back null. A parse failure is a floe bug; a null is listed for a
 * reader to compare with what Kafka's broker sends (it sends null only in a few places).
 */
final class Responses {
    static final String TOPIC = "resp-topic"; // 3 partitions with records
    static final String ALTER_TOPIC = "resp-alter";
    static final String PARTS_TOPIC = "resp-parts";
    static final String DELREC_TOPIC = "resp-delrec";
    static final String GROUP = "resp-group"; // committed offsets, no members
    static final String CLASSIC = "resp-classic"; // one stable classic member
    static final String CONSUMER_GROUP = "resp-cg"; // one KIP-848 member

    private final String host;
    private final int port;
    private RawClient client;
    private Uuid topicId = Uuid.ZERO_UUID;
    private int partsCount = 1;
    private final List<String> nulls = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();
    private final Map<String, String> errors = new TreeMap<>();

    Responses(String bootstrap) {
        int colon = bootstrap.lastIndexOf(':');
        host = bootstrap.substring(0, colon);
        port = Integer.parseInt(bootstrap.substring(colon + 1));
    }

    void run() throws Exception {
        client = new RawClient(host, port);
        ApiVersionsResponseData versions = (ApiVersionsResponseData) client
                .send(new ApiVersionsRequestData().setClientSoftwareName("floe-java").setClientSoftwareVersion("1"), (short) 3)
                .data();
        Check.eq(Errors.NONE.code(), versions.errorCode(), "ApiVersions error");
        setUp();
        for (ApiVersionsResponseData.ApiVersion api : versions.apiKeys()) {
            if (!ApiKeys.hasId(api.apiKey())) {
                skipped.add("key " + api.apiKey() + " v" + api.minVersion() + "-" + api.maxVersion()
                        + ": not an API the 3.9.1 client knows");
                continue;
            }
            ApiKeys key = ApiKeys.forId(api.apiKey());
            for (short v = api.minVersion(); v <= api.maxVersion(); v++) {
                if (v < key.oldestVersion()) {
                    skipped.add(key.name + " v" + v + ": older than the 3.9.1 client's versions "
                            + key.oldestVersion() + "-" + key.latestVersion(true));
                    continue;
                }
                if (v > key.latestVersion(true)) {
                    NewerVersions.Newer newer = NewerVersions.of(key, v);
                    if (newer == null) {
                        failures.add(key.name + " v" + v + ": newer than the 3.9.1 client knows, and NewerVersions"
                                + " does not describe it");
                    } else {
                        probeNewer(key, v, newer);
                    }
                    continue;
                }
                probe(key, v);
            }
        }
        report();
    }

    // --- fixtures -------------------------------------------------------------------------

    private void setUp() throws Exception {
        short createV = ApiKeys.CREATE_TOPICS.latestVersion();
        createTopic(TOPIC, 3);
        createTopic(ALTER_TOPIC, 1);
        createTopic(PARTS_TOPIC, 1);
        createTopic(DELREC_TOPIC, 1);
        for (int p = 0; p < 3; p++) {
            step(produce(TOPIC, p, (short) 9, RecordBatch.CURRENT_MAGIC_VALUE), (short) 9);
        }
        for (int i = 0; i < 10; i++) {
            step(produce(DELREC_TOPIC, 0, (short) 9, RecordBatch.CURRENT_MAGIC_VALUE), (short) 9);
        }
        MetadataResponseData meta = (MetadataResponseData) step(new MetadataRequestData()
                .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(TOPIC)))
                .setAllowAutoTopicCreation(false), ApiKeys.METADATA.latestVersion());
        topicId = meta.topics().iterator().next().topicId();
        Check.that(!topicId.equals(Uuid.ZERO_UUID), "Metadata gives " + TOPIC + " a topic id");
        step(offsetCommit(GROUP, (short) 9), (short) 9);
        joinAndSync(CLASSIC);
        step(new ConsumerGroupHeartbeatRequestData().setGroupId(CONSUMER_GROUP).setMemberId(Uuid.randomUuid().toString())
                .setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of(TOPIC))
                .setTopicPartitions(List.of()), ApiKeys.CONSUMER_GROUP_HEARTBEAT.latestVersion());
        long[] open = initTxn("resp-txn-open");
        step(addPartitionsV3("resp-txn-open", open), (short) 3);
        step(scramUpsert("resp-user"), (short) 0);
    }

    private void createTopic(String name, int partitions) throws Exception {
        CreateTopicsResponseData r = (CreateTopicsResponseData) step(new CreateTopicsRequestData()
                .setTopics(new CreateTopicsRequestData.CreatableTopicCollection(List.of(new CreateTopicsRequestData.CreatableTopic()
                        .setName(name).setNumPartitions(partitions).setReplicationFactor((short) 1)).iterator()))
                .setTimeoutMs(30_000), (short) 4);
        short code = r.topics().iterator().next().errorCode();
        Check.that(code == 0 || code == Errors.TOPIC_ALREADY_EXISTS.code(), "create " + name + ": " + Errors.forCode(code));
    }

    private long[] initTxn(String transactionalId) throws Exception {
        InitProducerIdResponseData r = (InitProducerIdResponseData) step(new InitProducerIdRequestData()
                .setTransactionalId(transactionalId).setTransactionTimeoutMs(60_000), (short) 4);
        Check.eq(Errors.NONE.code(), r.errorCode(), "InitProducerId " + transactionalId);
        return new long[] {r.producerId(), r.producerEpoch()};
    }

    /** A member of a classic group through JoinGroup (twice: the member id) and SyncGroup. */
    private String[] joinAndSync(String group) throws Exception {
        JoinGroupRequestData join = joinRequest(group, "");
        JoinGroupResponseData joined = (JoinGroupResponseData) step(join, ApiKeys.JOIN_GROUP.latestVersion());
        if (joined.errorCode() == Errors.MEMBER_ID_REQUIRED.code()) {
            joined = (JoinGroupResponseData) step(joinRequest(group, joined.memberId()), ApiKeys.JOIN_GROUP.latestVersion());
        }
        Check.eq(Errors.NONE.code(), joined.errorCode(), "JoinGroup " + group);
        step(syncRequest(group, joined.memberId(), joined.generationId()), ApiKeys.SYNC_GROUP.latestVersion());
        return new String[] {joined.memberId(), Integer.toString(joined.generationId())};
    }

    private JoinGroupRequestData joinRequest(String group, String memberId) {
        byte[] subscription = Utils.toArray(ConsumerProtocol.serializeSubscription(
                new ConsumerPartitionAssignor.Subscription(List.of(TOPIC))));
        return new JoinGroupRequestData().setGroupId(group).setSessionTimeoutMs(45_000).setRebalanceTimeoutMs(30_000)
                .setMemberId(memberId).setProtocolType("consumer")
                .setProtocols(new JoinGroupRequestData.JoinGroupRequestProtocolCollection(List.of(
                        new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(subscription)).iterator()));
    }

    private SyncGroupRequestData syncRequest(String group, String memberId, int generation) {
        byte[] assignment = Utils.toArray(ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(
                List.of(new org.apache.kafka.common.TopicPartition(TOPIC, 0)))));
        return new SyncGroupRequestData().setGroupId(group).setGenerationId(generation).setMemberId(memberId)
                .setProtocolType("consumer").setProtocolName("range")
                .setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(memberId)
                        .setAssignment(assignment)));
    }

    // --- requests --------------------------------------------------------------------------

    private ProduceRequestData produce(String topic, int partition, short version, byte magic) {
        MemoryRecords records = MemoryRecords.withRecords(magic, 0L, Compression.NONE,
                new SimpleRecord(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8),
                        ("v" + version).getBytes(StandardCharsets.UTF_8)));
        return new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000)
                .setTopicData(new ProduceRequestData.TopicProduceDataCollection(List.of(new ProduceRequestData.TopicProduceData()
                        .setName(topic).setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                                .setIndex(partition).setRecords(records)))).iterator()));
    }

    private OffsetCommitRequestData offsetCommit(String group, short version) {
        OffsetCommitRequestData.OffsetCommitRequestPartition partition = new OffsetCommitRequestData.OffsetCommitRequestPartition()
                .setPartitionIndex(0).setCommittedOffset(1).setCommittedMetadata("m");
        if (version == 1) {
            partition.setCommitTimestamp(System.currentTimeMillis());
        }
        OffsetCommitRequestData data = new OffsetCommitRequestData().setGroupId(group)
                .setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(TOPIC)
                        .setPartitions(List.of(partition))));
        if (version >= 2 && version <= 4) {
            data.setRetentionTimeMs(-1);
        }
        return data;
    }

    private AddPartitionsToTxnRequestData addPartitionsV3(String transactionalId, long[] producer) {
        return new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(transactionalId)
                .setV3AndBelowProducerId(producer[0]).setV3AndBelowProducerEpoch((short) producer[1])
                .setV3AndBelowTopics(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection(List.of(
                        new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(TOPIC).setPartitions(List.of(0)))
                        .iterator()));
    }

    private AlterUserScramCredentialsRequestData scramUpsert(String user) {
        byte[] salt = new byte[16];
        byte[] salted = new byte[64];
        new java.util.Random(7).nextBytes(salted);
        new java.util.Random(8).nextBytes(salt);
        return new AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName(user).setMechanism((byte) 2)
                        .setIterations(8192).setSalt(salt).setSaltedPassword(salted)));
    }

    /**
     * The request probed for `key` at `v`, after whatever steps it needs (a member, a producer
     * id, a topic to delete). Unlisted APIs are sent with the generated defaults.
     */
    private ApiMessage request(ApiKeys key, short v) throws Exception {
        String tag = "-v" + v;
        switch (key) {
            case PRODUCE:
                return produce(TOPIC, 0, v, v < 2 ? RecordBatch.MAGIC_VALUE_V0 : v == 2 ? RecordBatch.MAGIC_VALUE_V1 : RecordBatch.CURRENT_MAGIC_VALUE);
            case FETCH: {
                FetchRequestData.FetchTopic topic = new FetchRequestData.FetchTopic()
                        .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                                .setPartitionMaxBytes(1 << 20)));
                if (v >= 13) {
                    topic.setTopicId(topicId);
                } else {
                    topic.setTopic(TOPIC);
                }
                FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                        .setTopics(List.of(topic));
                if (v < 15) {
                    data.setReplicaId(-1);
                }
                if (v >= 4) {
                    // read_committed: Kafka answers abortedTransactions as a list (null only under
                    // read_uncommitted).
                    data.setIsolationLevel((byte) 1);
                }
                return data;
            }
            case LIST_OFFSETS: {
                List<ListOffsetsRequestData.ListOffsetsPartition> partitions = new ArrayList<>();
                partitions.add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1));
                partitions.add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(1).setTimestamp(-2));
                partitions.add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(2).setTimestamp(v >= 7 ? -3 : 0));
                if (v == 0) {
                    partitions.forEach(p -> p.setMaxNumOffsets(1));
                }
                return new ListOffsetsRequestData().setReplicaId(-1)
                        .setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC).setPartitions(partitions)));
            }
            case METADATA: {
                if (v >= 10) {
                    // By topic id, with the name left at "" as the 3.9.1 Admin sends it
                    // (describeTopics(TopicCollection.ofTopicIds(...))): the id decides.
                    MetadataResponseData byId = (MetadataResponseData) inspect(key, v, new MetadataRequestData()
                            .setAllowAutoTopicCreation(false)
                            .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setTopicId(topicId))), " (by topic id)");
                    if (byId != null && !(byId.topics().size() == 1 && byId.topics().iterator().next().topicId().equals(topicId)
                            && byId.topics().iterator().next().errorCode() == 0)) {
                        failures.add(key.name + " v" + v + " (by topic id, name \"\"): answers " + byId.topics());
                    }
                }
                MetadataRequestData data = new MetadataRequestData()
                        .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(TOPIC)));
                if (v >= 4) {
                    data.setAllowAutoTopicCreation(false);
                }
                if (v >= 8) {
                    data.setIncludeTopicAuthorizedOperations(true);
                }
                if (v >= 8 && v <= 10) {
                    data.setIncludeClusterAuthorizedOperations(true);
                }
                return data;
            }
            case OFFSET_COMMIT:
                return offsetCommit(GROUP, v);
            case OFFSET_FETCH:
                if (v < 8) {
                    return new OffsetFetchRequestData().setGroupId(GROUP).setTopics(List.of(
                            new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(TOPIC).setPartitionIndexes(List.of(0, 1))));
                }
                return new OffsetFetchRequestData().setGroups(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(GROUP).setTopics(List.of(
                                new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(TOPIC).setPartitionIndexes(List.of(0, 1)))),
                        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(CLASSIC).setTopics(null)));
            case FIND_COORDINATOR:
                if (v < 4) {
                    return new FindCoordinatorRequestData().setKey(GROUP);
                }
                return new FindCoordinatorRequestData().setKeyType((byte) 0).setCoordinatorKeys(List.of(GROUP, CLASSIC));
            case JOIN_GROUP: {
                String group = "resp-join" + tag;
                if (v < 4) {
                    return joinRequest(group, "");
                }
                // v4+: the first join is answered MEMBER_ID_REQUIRED (probed too), the second joins.
                JoinGroupRequestData first = joinRequest(group, "");
                JoinGroupResponseData r = (JoinGroupResponseData) inspect(key, v, first, " (first join)");
                return joinRequest(group, r == null ? "" : r.memberId());
            }
            case HEARTBEAT: {
                String[] member = joinAndSync("resp-hb" + tag);
                return new HeartbeatRequestData().setGroupId("resp-hb" + tag).setMemberId(member[0])
                        .setGenerationId(Integer.parseInt(member[1]));
            }
            case LEAVE_GROUP: {
                String[] member = joinAndSync("resp-leave" + tag);
                if (v < 3) {
                    return new LeaveGroupRequestData().setGroupId("resp-leave" + tag).setMemberId(member[0]);
                }
                return new LeaveGroupRequestData().setGroupId("resp-leave" + tag).setMembers(List.of(
                        new LeaveGroupRequestData.MemberIdentity().setMemberId(member[0])));
            }
            case SYNC_GROUP: {
                String group = "resp-sync" + tag;
                JoinGroupResponseData joined = (JoinGroupResponseData) step(joinRequest(group, ""), ApiKeys.JOIN_GROUP.latestVersion());
                joined = (JoinGroupResponseData) step(joinRequest(group, joined.memberId()), ApiKeys.JOIN_GROUP.latestVersion());
                SyncGroupRequestData sync = syncRequest(group, joined.memberId(), joined.generationId());
                if (v < 5) {
                    sync.setProtocolType(null).setProtocolName(null);
                }
                return sync;
            }
            case DESCRIBE_GROUPS: {
                // A KIP-848 group on its own (probed too), then the classic ones.
                DescribeGroupsRequestData kip848 = new DescribeGroupsRequestData().setGroups(List.of(CONSUMER_GROUP));
                inspect(key, v, kip848, " (a KIP-848 group)");
                DescribeGroupsRequestData data = new DescribeGroupsRequestData().setGroups(List.of(GROUP, CLASSIC, "resp-missing"));
                if (v >= 3) {
                    data.setIncludeAuthorizedOperations(true);
                }
                return data;
            }
            case LIST_GROUPS:
                return new ListGroupsRequestData();
            case SASL_HANDSHAKE:
                return new SaslHandshakeRequestData().setMechanism("PLAIN");
            case SASL_AUTHENTICATE:
                return new SaslAuthenticateRequestData().setAuthBytes("\0user\0password".getBytes(StandardCharsets.UTF_8));
            case API_VERSIONS:
                return v >= 3 ? new ApiVersionsRequestData().setClientSoftwareName("floe-java").setClientSoftwareVersion("1")
                        : new ApiVersionsRequestData();
            case CREATE_TOPICS: {
                CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName("resp-create" + tag)
                        .setNumPartitions(v >= 4 ? -1 : 2).setReplicationFactor((short) (v >= 4 ? -1 : 1))
                        .setConfigs(new CreateTopicsRequestData.CreatableTopicConfigCollection(List.of(
                                new CreateTopicsRequestData.CreatableTopicConfig().setName("retention.ms").setValue("3600000")).iterator()));
                return new CreateTopicsRequestData().setTimeoutMs(30_000)
                        .setTopics(new CreateTopicsRequestData.CreatableTopicCollection(List.of(topic).iterator()));
            }
            case DELETE_TOPICS: {
                String name = "resp-delete" + tag;
                createTopic(name, 1);
                if (v < 6) {
                    return new DeleteTopicsRequestData().setTopicNames(List.of(name)).setTimeoutMs(30_000);
                }
                return new DeleteTopicsRequestData().setTimeoutMs(30_000)
                        .setTopics(List.of(new DeleteTopicsRequestData.DeleteTopicState().setName(name)));
            }
            case DELETE_RECORDS:
                return new DeleteRecordsRequestData().setTimeoutMs(30_000).setTopics(List.of(
                        new DeleteRecordsRequestData.DeleteRecordsTopic().setName(DELREC_TOPIC).setPartitions(List.of(
                                new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(v + 1)))));
            case INIT_PRODUCER_ID:
                return new InitProducerIdRequestData().setTransactionalId("resp-init" + tag).setTransactionTimeoutMs(60_000);
            case OFFSET_FOR_LEADER_EPOCH: {
                OffsetForLeaderEpochRequestData data = new OffsetForLeaderEpochRequestData()
                        .setTopics(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection(List.of(
                                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(TOPIC).setPartitions(List.of(
                                        new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setLeaderEpoch(0))))
                                .iterator()));
                if (v >= 3) {
                    data.setReplicaId(-1);
                }
                return data;
            }
            case ADD_PARTITIONS_TO_TXN: {
                String id = "resp-addparts" + tag;
                long[] producer = initTxn(id);
                if (v <= 3) {
                    return addPartitionsV3(id, producer);
                }
                return new AddPartitionsToTxnRequestData().setTransactions(
                        new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection(List.of(
                                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId(id)
                                        .setProducerId(producer[0]).setProducerEpoch((short) producer[1]).setVerifyOnly(false)
                                        .setTopics(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection(List.of(
                                                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(TOPIC)
                                                        .setPartitions(List.of(0))).iterator()))).iterator()));
            }
            case ADD_OFFSETS_TO_TXN: {
                String id = "resp-addoffsets" + tag;
                long[] producer = initTxn(id);
                return new AddOffsetsToTxnRequestData().setTransactionalId(id).setProducerId(producer[0])
                        .setProducerEpoch((short) producer[1]).setGroupId("resp-txn-group");
            }
            case END_TXN: {
                String id = "resp-endtxn" + tag;
                long[] producer = initTxn(id);
                step(addPartitionsV3(id, producer), (short) 3);
                return new EndTxnRequestData().setTransactionalId(id).setProducerId(producer[0])
                        .setProducerEpoch((short) producer[1]).setCommitted(true);
            }
            case TXN_OFFSET_COMMIT: {
                String id = "resp-txoc" + tag;
                long[] producer = initTxn(id);
                step(new AddOffsetsToTxnRequestData().setTransactionalId(id).setProducerId(producer[0])
                        .setProducerEpoch((short) producer[1]).setGroupId("resp-txn-group"), (short) 3);
                TxnOffsetCommitRequestData data = new TxnOffsetCommitRequestData().setTransactionalId(id).setGroupId("resp-txn-group")
                        .setProducerId(producer[0]).setProducerEpoch((short) producer[1])
                        .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(TOPIC).setPartitions(List.of(
                                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1)
                                        .setCommittedMetadata("m")))));
                return data;
            }
            case DESCRIBE_ACLS: {
                DescribeAclsRequestData data = new DescribeAclsRequestData().setResourceTypeFilter((byte) 1)
                        .setOperation((byte) 1).setPermissionType((byte) 1);
                if (v == 0) {
                    data.setResourceTypeFilter((byte) 2).setResourceNameFilter(TOPIC);
                } else {
                    data.setPatternTypeFilter((byte) 1);
                }
                return data;
            }
            case CREATE_ACLS: {
                CreateAclsRequestData.AclCreation creation = new CreateAclsRequestData.AclCreation().setResourceType((byte) 2)
                        .setResourceName(TOPIC).setPrincipal("User:alice").setHost("*").setOperation((byte) 3)
                        .setPermissionType((byte) 3);
                if (v >= 1) {
                    creation.setResourcePatternType((byte) 3);
                }
                return new CreateAclsRequestData().setCreations(List.of(creation));
            }
            case DELETE_ACLS: {
                DeleteAclsRequestData.DeleteAclsFilter filter = new DeleteAclsRequestData.DeleteAclsFilter()
                        .setResourceTypeFilter((byte) 2).setResourceNameFilter(TOPIC).setPrincipalFilter("User:nobody")
                        .setOperation((byte) 1).setPermissionType((byte) 1);
                if (v >= 1) {
                    filter.setPatternTypeFilter((byte) 3);
                }
                return new DeleteAclsRequestData().setFilters(List.of(filter));
            }
            case DESCRIBE_CONFIGS: {
                DescribeConfigsRequestData data = new DescribeConfigsRequestData().setResources(List.of(
                        new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2).setResourceName(TOPIC)
                                .setConfigurationKeys(null),
                        new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 4).setResourceName("0")
                                .setConfigurationKeys(null)));
                if (v >= 1) {
                    data.setIncludeSynonyms(true);
                }
                if (v >= 3) {
                    data.setIncludeDocumentation(true);
                }
                return data;
            }
            case ALTER_CONFIGS:
                return new AlterConfigsRequestData().setResources(new AlterConfigsRequestData.AlterConfigsResourceCollection(List.of(
                        new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2).setResourceName(ALTER_TOPIC)
                                .setConfigs(new AlterConfigsRequestData.AlterableConfigCollection(List.of(
                                        new AlterConfigsRequestData.AlterableConfig().setName("retention.ms")
                                                .setValue(Long.toString(86_400_000L + v))).iterator()))).iterator()));
            case ALTER_REPLICA_LOG_DIRS:
                return new AlterReplicaLogDirsRequestData().setDirs(new AlterReplicaLogDirsRequestData.AlterReplicaLogDirCollection(List.of(
                        new AlterReplicaLogDirsRequestData.AlterReplicaLogDir().setPath("/nonexistent")
                                .setTopics(new AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopicCollection(List.of(
                                        new AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic().setName(TOPIC)
                                                .setPartitions(List.of(0))).iterator()))).iterator()));
            case DESCRIBE_LOG_DIRS:
                return new DescribeLogDirsRequestData().setTopics(null);
            case CREATE_PARTITIONS:
                return new CreatePartitionsRequestData().setTimeoutMs(30_000).setTopics(
                        new CreatePartitionsRequestData.CreatePartitionsTopicCollection(List.of(
                                new CreatePartitionsRequestData.CreatePartitionsTopic().setName(PARTS_TOPIC).setCount(++partsCount)
                                        .setAssignments(null)).iterator()));
            case CREATE_DELEGATION_TOKEN:
                return new CreateDelegationTokenRequestData().setMaxLifetimeMs(-1);
            case RENEW_DELEGATION_TOKEN:
                return new RenewDelegationTokenRequestData().setHmac(new byte[] {1, 2, 3}).setRenewPeriodMs(1000);
            case EXPIRE_DELEGATION_TOKEN:
                return new ExpireDelegationTokenRequestData().setHmac(new byte[] {1, 2, 3}).setExpiryTimePeriodMs(1000);
            case DESCRIBE_DELEGATION_TOKEN:
                return new DescribeDelegationTokenRequestData().setOwners(null);
            case DELETE_GROUPS: {
                String group = "resp-delgroup" + tag;
                step(offsetCommit(group, (short) 9), (short) 9);
                return new DeleteGroupsRequestData().setGroupsNames(List.of(group, "resp-missing"));
            }
            case ELECT_LEADERS: {
                ElectLeadersRequestData data = new ElectLeadersRequestData().setTimeoutMs(30_000).setTopicPartitions(
                        new ElectLeadersRequestData.TopicPartitionsCollection(List.of(
                                new ElectLeadersRequestData.TopicPartitions().setTopic(TOPIC).setPartitions(List.of(0))).iterator()));
                return data;
            }
            case INCREMENTAL_ALTER_CONFIGS:
                return new IncrementalAlterConfigsRequestData().setResources(
                        new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection(List.of(
                                new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2).setResourceName(TOPIC)
                                        .setConfigs(new IncrementalAlterConfigsRequestData.AlterableConfigCollection(List.of(
                                                new IncrementalAlterConfigsRequestData.AlterableConfig().setName("retention.ms")
                                                        .setConfigOperation((byte) 0).setValue(Long.toString(604_800_000L + v)))
                                                .iterator()))).iterator()));
            case ALTER_PARTITION_REASSIGNMENTS:
                return new AlterPartitionReassignmentsRequestData().setTimeoutMs(30_000).setTopics(List.of(
                        new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(TOPIC).setPartitions(List.of(
                                new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0).setReplicas(null)))));
            case LIST_PARTITION_REASSIGNMENTS:
                return new ListPartitionReassignmentsRequestData().setTimeoutMs(30_000).setTopics(null);
            case OFFSET_DELETE: {
                String group = "resp-offdel" + tag;
                step(offsetCommit(group, (short) 9), (short) 9);
                return new OffsetDeleteRequestData().setGroupId(group).setTopics(
                        new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection(List.of(
                                new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(TOPIC).setPartitions(List.of(
                                        new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0)))).iterator()));
            }
            case DESCRIBE_CLIENT_QUOTAS:
                return new DescribeClientQuotasRequestData().setComponents(List.of(
                        new DescribeClientQuotasRequestData.ComponentData().setEntityType("client-id").setMatchType((byte) 2)
                                .setMatch(null)));
            case ALTER_CLIENT_QUOTAS:
                return new AlterClientQuotasRequestData().setEntries(List.of(new AlterClientQuotasRequestData.EntryData()
                        .setEntity(List.of(new AlterClientQuotasRequestData.EntityData().setEntityType("client-id").setEntityName("resp-client")))
                        .setOps(List.of(new AlterClientQuotasRequestData.OpData().setKey("producer_byte_rate").setValue(1_048_576.0 + v)))));
            case DESCRIBE_USER_SCRAM_CREDENTIALS:
                return new DescribeUserScramCredentialsRequestData().setUsers(null);
            case ALTER_USER_SCRAM_CREDENTIALS:
                return scramUpsert("resp-user" + tag);
            case DESCRIBE_QUORUM:
                return new DescribeQuorumRequestData().setTopics(List.of(new DescribeQuorumRequestData.TopicData()
                        .setTopicName("__cluster_metadata").setPartitions(List.of(new DescribeQuorumRequestData.PartitionData().setPartitionIndex(0)))));
            case UPDATE_FEATURES:
                return new UpdateFeaturesRequestData().setTimeoutMs(30_000);
            case DESCRIBE_CLUSTER:
                return new DescribeClusterRequestData().setIncludeClusterAuthorizedOperations(true);
            case DESCRIBE_PRODUCERS:
                return new DescribeProducersRequestData().setTopics(List.of(
                        new DescribeProducersRequestData.TopicRequest().setName(TOPIC).setPartitionIndexes(List.of(0, 1, 2))));
            case UNREGISTER_BROKER:
                return new UnregisterBrokerRequestData().setBrokerId(99);
            case DESCRIBE_TRANSACTIONS:
                return new DescribeTransactionsRequestData().setTransactionalIds(List.of("resp-txn-open", "resp-missing"));
            case LIST_TRANSACTIONS:
                return new ListTransactionsRequestData();
            case CONSUMER_GROUP_HEARTBEAT:
                return new ConsumerGroupHeartbeatRequestData().setGroupId("resp-cg" + tag)
                        .setMemberId(v == 0 ? Uuid.randomUuid().toString() : Uuid.randomUuid().toString())
                        .setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of(TOPIC))
                        .setTopicPartitions(List.of());
            case CONSUMER_GROUP_DESCRIBE:
                return new ConsumerGroupDescribeRequestData().setGroupIds(List.of(CONSUMER_GROUP, "resp-missing"))
                        .setIncludeAuthorizedOperations(true);
            case GET_TELEMETRY_SUBSCRIPTIONS:
                return new GetTelemetrySubscriptionsRequestData();
            case PUSH_TELEMETRY: {
                GetTelemetrySubscriptionsResponseData sub = (GetTelemetrySubscriptionsResponseData) step(
                        new GetTelemetrySubscriptionsRequestData(), (short) 0);
                return new PushTelemetryRequestData().setClientInstanceId(sub.clientInstanceId())
                        .setSubscriptionId(sub.subscriptionId()).setMetrics(new byte[0]);
            }
            case LIST_CLIENT_METRICS_RESOURCES:
                return new ListClientMetricsResourcesRequestData();
            case SHARE_GROUP_HEARTBEAT:
                return new ShareGroupHeartbeatRequestData().setGroupId("resp-share" + tag)
                        .setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0)
                        .setSubscribedTopicNames(List.of(TOPIC));
            case SHARE_GROUP_DESCRIBE:
                // The group the heartbeat above made (a member, its assignment), and one that
                // does not exist.
                return new ShareGroupDescribeRequestData().setGroupIds(List.of("resp-share" + tag, "resp-missing"))
                        .setIncludeAuthorizedOperations(true);
            case SHARE_FETCH: {
                // A new share session over the topic's partitions, answered at once.
                List<ShareFetchRequestData.FetchPartition> partitions = new ArrayList<>();
                for (int p = 0; p < 3; p++) {
                    partitions.add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p)
                            .setPartitionMaxBytes(1 << 20));
                }
                List<ShareFetchRequestData.FetchTopic> topics = List.of(
                        new ShareFetchRequestData.FetchTopic().setTopicId(topicId).setPartitions(partitions));
                return new ShareFetchRequestData().setGroupId("resp-share").setMemberId(Uuid.randomUuid().toString())
                        .setShareSessionEpoch(0).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
                        .setTopics(topics);
            }
            case SHARE_ACKNOWLEDGE:
                // No session: SHARE_SESSION_NOT_FOUND, in the answer's shape.
                return new ShareAcknowledgeRequestData().setGroupId("resp-share")
                        .setMemberId(Uuid.randomUuid().toString()).setShareSessionEpoch(3);
            case DESCRIBE_TOPIC_PARTITIONS:
                return new DescribeTopicPartitionsRequestData().setResponsePartitionLimit(2000).setTopics(List.of(
                        new DescribeTopicPartitionsRequestData.TopicRequest().setName(TOPIC)));
            default:
                return key.messageType.newRequest();
        }
    }

    // --- probing and walking ---------------------------------------------------------------

    private void probe(ApiKeys key, short v) {
        ApiMessage request;
        try {
            request = request(key, v);
        } catch (Exception e) {
            failures.add(key.name + " v" + v + ": setting up the request failed: " + Check.describe(e));
            reconnect();
            return;
        }
        inspect(key, v, request, "");
    }

    /**
     * A version newer than the client knows (`NewerVersions`): the request built as its known
     * version and written in the newer layout, the answer read in the newer layout and parsed
     * as the known version.
     */
    private void probeNewer(ApiKeys key, short v, NewerVersions.Newer newer) {
        String label = key.name + " v" + v + " (as v" + newer.known() + " with the fields v" + v + " adds)";
        ByteBuffer body;
        try {
            ApiMessage request = request(key, newer.known());
            body = NewerVersions.request(key, newer, MessageUtil.toByteBuffer(request, newer.known()));
        } catch (Exception e) {
            failures.add(label + ": setting up the request failed: " + Check.describe(e));
            reconnect();
            return;
        }
        RequestHeader header = new RequestHeader(key, v, "floe-java-responses", 0);
        byte[] answer;
        try {
            answer = client.exchange(header, body);
        } catch (Exception e) {
            failures.add(label + ": " + Check.describe(e));
            reconnect();
            return;
        }
        AbstractResponse response;
        try {
            ByteBuffer buffer = ByteBuffer.wrap(answer);
            ResponseHeader.parse(buffer, key.responseHeaderVersion(v));
            response = AbstractResponse.parseResponse(key, NewerVersions.response(key, newer, buffer), newer.known());
        } catch (Exception e) {
            failures.add(label + ": Java's parser throws " + Check.describe(e) + "\n       answer bytes: " + hex(answer));
            reconnect();
            return;
        }
        Map<Errors, Integer> counts = new TreeMap<>(response.errorCounts());
        counts.remove(Errors.NONE);
        if (!counts.isEmpty()) {
            errors.put(label, counts.toString());
        }
        walk(response.data(), key.messageType.responseSchemas()[newer.known()], label + " ");
    }

    /** Sends the probe, records a parse failure or the nulls of its answer, returns the answer. */
    private ApiMessage inspect(ApiKeys key, short v, ApiMessage request, String note) {
        String label = key.name + " v" + v + note;
        RequestHeader header = client.header(request, v);
        byte[] answer;
        try {
            answer = client.exchange(header, request);
        } catch (Exception e) {
            failures.add(label + ": " + Check.describe(e));
            reconnect();
            return null;
        }
        AbstractResponse response;
        try {
            response = AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
        } catch (Exception e) {
            failures.add(label + ": Java's parser throws " + Check.describe(e) + "\n       answer bytes: " + hex(answer));
            reconnect();
            return null;
        }
        Map<Errors, Integer> counts = new TreeMap<>(response.errorCounts());
        counts.remove(Errors.NONE);
        if (!counts.isEmpty()) {
            errors.put(label, counts.toString());
        }
        Schema schema = key.messageType.responseSchemas()[v];
        walk(response.data(), schema, label + " ");
        return response.data();
    }

    /** Steps are requests a probe needs first; their answers are parsed but not reported. */
    private ApiMessage step(ApiMessage request, short v) throws Exception {
        return client.send(request, v).data();
    }

    private void reconnect() {
        try {
            client.close();
            client = new RawClient(host, port);
        } catch (Exception e) {
            throw new RuntimeException("reconnecting: " + e, e);
        }
    }

    /**
     * Walks a parsed message along its version's schema (so a field absent from the version,
     * left at a null default, is not reported), listing each field that is null.
     */
    private void walk(Object message, Schema schema, String path) {
        for (BoundField bound : schema.fields()) {
            if (bound.def.type instanceof TaggedFields) {
                for (org.apache.kafka.common.protocol.types.Field tagged : taggedFields((TaggedFields) bound.def.type)) {
                    visit(message, tagged.name, tagged.type, path, " (tagged)");
                }
            } else {
                visit(message, bound.def.name, bound.def.type, path, "");
            }
        }
    }

    private void visit(Object message, String schemaName, Type type, String path, String note) {
        Object value = fieldValue(message, schemaName);
        String here = path + (path.endsWith(" ") ? "" : ".") + camel(schemaName);
        if (value == NO_FIELD) {
            failures.add(here + ": no Java field for schema field " + schemaName + " (harness bug)");
            return;
        }
        if (value == null) {
            // (A struct's nullability is not in its Schema: only a non-struct can be flagged.)
            boolean flagged = !type.isNullable() && !(type instanceof Schema);
            nulls.add(here + note + (flagged ? " [schema says not nullable]" : ""));
            return;
        }
        if (type instanceof Schema) {
            walk(value, (Schema) type, here);
        } else if (type.isArray() && type.arrayElementType().isPresent() && type.arrayElementType().get() instanceof Schema) {
            int i = 0;
            for (Object element : (Collection<?>) value) {
                walk(element, (Schema) type.arrayElementType().get(), here + "[" + i++ + "]");
            }
        }
    }

    private static final Object NO_FIELD = new Object();

    private static Object fieldValue(Object message, String schemaName) {
        String wanted = schemaName.replace("_", "").toLowerCase();
        for (Class<?> c = message.getClass(); c != null; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!java.lang.reflect.Modifier.isStatic(f.getModifiers()) && f.getName().toLowerCase().equals(wanted)) {
                    try {
                        f.setAccessible(true);
                        return f.get(message);
                    } catch (IllegalAccessException e) {
                        throw new RuntimeException(e);
                    }
                }
            }
        }
        return NO_FIELD;
    }

    @SuppressWarnings("unchecked")
    private static Collection<org.apache.kafka.common.protocol.types.Field> taggedFields(TaggedFields type) {
        try {
            Field f = TaggedFields.class.getDeclaredField("fields");
            f.setAccessible(true);
            return ((Map<Integer, org.apache.kafka.common.protocol.types.Field>) f.get(type)).values();
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(e);
        }
    }

    private static String camel(String snake) {
        StringBuilder out = new StringBuilder();
        boolean up = false;
        for (char c : snake.toCharArray()) {
            if (c == '_') {
                up = true;
            } else {
                out.append(up ? Character.toUpperCase(c) : c);
                up = false;
            }
        }
        return out.toString();
    }

    private static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(bytes.length, 96); i++) {
            out.append(String.format("%02x", bytes[i]));
        }
        return out + (bytes.length > 96 ? "... (" + bytes.length + " bytes)" : "");
    }

    private void report() {
        System.out.println("== null fields in floe's answers (api version path)");
        nulls.forEach(n -> System.out.println("NULL " + n));
        System.out.println("== error codes in the answers (for reading; many are expected)");
        errors.forEach((label, counts) -> System.out.println("ERRORS " + label + " " + counts));
        System.out.println("== versions not probed");
        skipped.forEach(s -> System.out.println("SKIP " + s));
        System.out.println("== failures");
        failures.forEach(f -> Check.fail("responses " + f.substring(0, f.indexOf(':')), f.substring(f.indexOf(':') + 2)));
        if (failures.isEmpty()) {
            Check.passed++;
            System.out.println("PASS every advertised version answered and parsed");
        }
    }
}
