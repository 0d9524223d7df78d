import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;

/**
 * Batches floe's cleaner rewrote (a compacted topic's), read with the client's own record
 * classes as a consumer reads them: each file `<name>.bin` holds one batch, `<name>.expect`
 * says what the client must find in it, one `key=value` a line: codec, base, last (offsets),
 * horizon (the delete horizon, or none), records (each kept record as offset:key:value, value
 * "null" for a tombstone, comma-separated). The CRC must hold.
 */
final class RewrittenBatches {
    private final Path dir;

    RewrittenBatches(Path dir) {
        this.dir = dir;
    }

    void run() throws Exception {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> listed = Files.list(dir)) {
            listed.filter(p -> p.toString().endsWith(".bin")).sorted().forEach(files::add);
        }
        Check.that(!files.isEmpty(), "batches to read in " + dir);
        for (Path file : files) {
            String name = file.getFileName().toString().replace(".bin", "");
            Check.run("rewritten batch " + name + " reads back", () -> read(file, name));
        }
    }

    private void read(Path file, String name) throws Exception {
        java.util.Map<String, String> expect = new java.util.HashMap<>();
        for (String line : Files.readAllLines(dir.resolve(name + ".expect"))) {
            int eq = line.indexOf('=');
            expect.put(line.substring(0, eq), line.substring(eq + 1));
        }
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(Files.readAllBytes(file)));
        List<RecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        Check.eq(1, batches.size(), name + ": batches in the file");
        RecordBatch batch = batches.get(0);
        batch.ensureValid();
        Check.eq(expect.get("codec"), batch.compressionType().name, name + ": codec");
        Check.eq(Long.parseLong(expect.get("base")), batch.baseOffset(), name + ": base offset");
        Check.eq(Long.parseLong(expect.get("last")), batch.lastOffset(), name + ": last offset");
        String horizon = batch.deleteHorizonMs().isPresent() ? Long.toString(batch.deleteHorizonMs().getAsLong()) : "none";
        Check.eq(expect.get("horizon"), horizon, name + ": delete horizon");
        List<String> found = new ArrayList<>();
        for (org.apache.kafka.common.record.Record record : batch) {
            String key = record.hasKey() ? new String(bytes(record.key())) : "null";
            String value = record.hasValue() ? new String(bytes(record.value())) : "null";
            found.add(record.offset() + ":" + key + ":" + value);
        }
        Check.eq(expect.get("records"), String.join(",", found), name + ": records");
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.get(out);
        return out;
    }
}
