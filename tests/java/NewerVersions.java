import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.types.ArrayOf;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.CompactArrayOf;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * The versions floe serves that are newer than the Java client 3.9.1 knows, each described by
 * the version it knows whose layout the newer one keeps, and the fields the newer layout adds
 * (from Kafka's message definitions, `clients/src/main/resources/common/message/*.json`).
 *
 * A request at the newer version is the known version's encoding read back with the client's
 * own schema and written in the newer layout (its added fields set as listed). The answer is
 * read in the newer layout with the client's type machinery, every byte of it, then written
 * in the known layout and parsed by the client's parser as any answer is. A request field the
 * newer layout removes is listed by its path and left out. A version whose newer layout differs
 * in a way this cannot describe (a response field removed, a type changed) needs a newer
 * client, and has no entry.
 *
 * A layout is rewritten only where the newer version adds something: the client's `Schema`
 * objects leave out the presence byte of a nullable struct (its generated readers handle it),
 * so a message holding one (ConsumerGroupHeartbeat's assignment) is passed through as it is.
 */
final class NewerVersions {
    /** A field the newer layout adds: inside `array` ("" for the top level, else a dotted path
     *  of array fields), after the field `after`, with the value a request sends. */
    record Added(String array, String after, Field field, Object value) {}

    /** A newer version: the known one it extends, what its request and response add, and the
     *  request fields it removes (dotted paths: "topics.partitions.partition_max_bytes"). */
    record Newer(short known, List<Added> request, List<Added> response, List<String> removed) {
        Newer(short known, List<Added> request, List<Added> response) {
            this(known, request, response, List.of());
        }
    }

    private static Added top(String after, String name, Type type, Object value) {
        return new Added("", after, new Field(name, type, ""), value);
    }

    private static final Map<ApiKeys, Map<Short, Newer>> TABLE = Map.ofEntries(
            // Version 12 is the same as 11 (transaction version 2 semantics).
            Map.entry(ApiKeys.PRODUCE, Map.of((short) 12, new Newer((short) 11, List.of(), List.of()))),
            // Version 18 adds a tagged HighWatermark to each partition (KIP-1166): absent, it
            // holds its default, so version 17's encoding is a version 18 request.
            Map.entry(ApiKeys.FETCH, Map.of((short) 18, new Newer((short) 17, List.of(), List.of()))),
            // Version 10 adds TimeoutMs (KIP-1075); 11 is the same as 10 (earliest-pending-upload).
            Map.entry(ApiKeys.LIST_OFFSETS, Map.of(
                    (short) 10, new Newer((short) 9, List.of(top("topics", "timeout_ms", Type.INT32, 30_000)), List.of()),
                    (short) 11, new Newer((short) 9, List.of(top("topics", "timeout_ms", Type.INT32, 30_000)), List.of()))),
            // Version 1 adds SubscribedTopicRegex (KIP-848); the member chooses its own id.
            Map.entry(ApiKeys.CONSUMER_GROUP_HEARTBEAT, Map.of((short) 1, new Newer((short) 0,
                    List.of(top("subscribed_topic_names", "subscribed_topic_regex", Type.COMPACT_NULLABLE_STRING, null)),
                    List.of()))),
            // Version 1 adds each member's MemberType (KIP-1099).
            Map.entry(ApiKeys.CONSUMER_GROUP_DESCRIBE, Map.of((short) 1, new Newer((short) 0, List.of(),
                    List.of(new Added("groups.members", "target_assignment", new Field("member_type", Type.INT8, ""), null))))),
            // Version 5 (transaction version 2) answers the producer id and epoch (KIP-890).
            Map.entry(ApiKeys.END_TXN, Map.of((short) 5, new Newer((short) 4, List.of(),
                    List.of(top("error_code", "producer_id", Type.INT64, null),
                            top("producer_id", "producer_epoch", Type.INT16, null))))),
            // Version 5 is the same as 4 (transaction version 2 semantics).
            Map.entry(ApiKeys.TXN_OFFSET_COMMIT, Map.of((short) 5, new Newer((short) 4, List.of(), List.of()))),
            // Version 2 adds TransactionalIdPattern (KIP-1152).
            Map.entry(ApiKeys.LIST_TRANSACTIONS, Map.of((short) 2, new Newer((short) 1,
                    List.of(top("duration_filter", "transactional_id_pattern", Type.COMPACT_NULLABLE_STRING, null)),
                    List.of()))),
            // Share groups (KIP-932): version 1, the first stable one (Kafka 4.1), keeps the
            // early-access version 0's layout of these three.
            Map.entry(ApiKeys.SHARE_GROUP_HEARTBEAT, Map.of((short) 1, new Newer((short) 0, List.of(), List.of()))),
            Map.entry(ApiKeys.SHARE_GROUP_DESCRIBE, Map.of((short) 1, new Newer((short) 0, List.of(), List.of()))),
            Map.entry(ApiKeys.SHARE_ACKNOWLEDGE, Map.of((short) 1, new Newer((short) 0, List.of(), List.of()))),
            // Version 1 adds MaxRecords and BatchSize, drops each partition's PartitionMaxBytes,
            // and answers AcquisitionLockTimeoutMs.
            Map.entry(ApiKeys.SHARE_FETCH, Map.of((short) 1, new Newer((short) 0,
                    List.of(top("max_bytes", "max_records", Type.INT32, 500),
                            top("max_records", "batch_size", Type.INT32, 500)),
                    List.of(top("error_message", "acquisition_lock_timeout_ms", Type.INT32, null)),
                    List.of("topics.partitions.partition_max_bytes")))));

    private NewerVersions() {}

    /** The entry for `key` at `version`, or null when there is none. */
    static Newer of(ApiKeys key, short version) {
        return TABLE.getOrDefault(key, Map.of()).get(version);
    }

    /** A request body at the newer version, from its encoding at the known one. */
    static ByteBuffer request(ApiKeys key, Newer newer, ByteBuffer known) {
        if (newer.request().isEmpty() && newer.removed().isEmpty()) {
            return known;
        }
        Schema knownSchema = key.messageType.requestSchemas()[newer.known()];
        Schema newerSchema = extend(knownSchema, newer.request(), newer.removed(), "");
        Struct read = knownSchema.read(known);
        Struct written = convert(read, newerSchema, newer.request(), "");
        ByteBuffer out = ByteBuffer.allocate(newerSchema.sizeOf(written));
        newerSchema.write(out, written);
        return out.flip();
    }

    /** An answer's body read in the newer layout (all of it), written in the known one. */
    static ByteBuffer response(ApiKeys key, Newer newer, ByteBuffer body) {
        if (newer.response().isEmpty()) {
            return body;
        }
        Schema knownSchema = key.messageType.responseSchemas()[newer.known()];
        Schema newerSchema = extend(knownSchema, newer.response(), List.of(), "");
        Struct read = newerSchema.read(body);
        if (body.hasRemaining()) {
            throw new IllegalStateException(body.remaining() + " bytes after the answer's last field");
        }
        Struct written = convert(read, knownSchema, List.of(), "");
        ByteBuffer out = ByteBuffer.allocate(knownSchema.sizeOf(written));
        knownSchema.write(out, written);
        return out.flip();
    }

    /** `schema` with the fields `added` places at `path` or below, without those `removed`
     *  names. */
    static Schema extend(Schema schema, List<Added> added, List<String> removed, String path) {
        List<Field> fields = new ArrayList<>();
        for (BoundField bound : schema.fields()) {
            Field def = bound.def;
            String here = path.isEmpty() ? def.name : path + "." + def.name;
            Type element = def.type.arrayElementType().orElse(null);
            if (removed.contains(here)) {
                continue; // gone from the newer layout
            } else if (element instanceof Schema inner) {
                Schema extended = extend(inner, added, removed, here);
                Type array = def.type instanceof CompactArrayOf
                        ? (def.type.isNullable() ? CompactArrayOf.nullable(extended) : new CompactArrayOf(extended))
                        : (def.type.isNullable() ? ArrayOf.nullable(extended) : new ArrayOf(extended));
                fields.add(new Field(def.name, array, def.docString, def.hasDefaultValue, def.defaultValue));
            } else {
                fields.add(def);
            }
            addAfter(def.name, added, path, fields);
        }
        return new Schema(fields.toArray(new Field[0]));
    }

    /** Appends the fields `added` places after `name` at `path`, each followed by its own. */
    private static void addAfter(String name, List<Added> added, String path, List<Field> fields) {
        for (Added a : added) {
            if (a.array().equals(path) && a.after().equals(name)) {
                fields.add(a.field());
                addAfter(a.field().name, added, path, fields);
            }
        }
    }

    /** `from`'s values in the layout `to`: fields `to` lacks are dropped, those `added` places
     *  here are set to their listed values, arrays of structs are converted element by element. */
    private static Struct convert(Struct from, Schema to, List<Added> added, String path) {
        Struct out = new Struct(to);
        for (BoundField bound : to.fields()) {
            String name = bound.def.name;
            Added extra = added.stream()
                    .filter(a -> a.array().equals(path) && a.field().name.equals(name)).findFirst().orElse(null);
            if (extra != null) {
                out.set(name, extra.value());
                continue;
            }
            Object value = from.get(name);
            Type element = bound.def.type.arrayElementType().orElse(null);
            if (element instanceof Schema inner && value instanceof Object[] items) {
                String here = path.isEmpty() ? name : path + "." + name;
                Object[] converted = new Object[items.length];
                for (int i = 0; i < items.length; i++) {
                    converted[i] = convert((Struct) items[i], inner, added, here);
                }
                value = converted;
            }
            out.set(name, value);
        }
        return out;
    }
}
