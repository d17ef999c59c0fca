package fedisrv.mongo;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * How documents and index keys are stored in the MVStore: as BSON, the server's own wire format.
 * (H2's default would be Java serialization: several times larger and slower.)
 */
final class BsonDataTypes {
    private BsonDataTypes() {
    }

    /** A document's BSON bytes, to keep: index keys are written again with every change to their page. */
    private static byte[] encode(Document document, int capacity) {
        ByteBuf bytes = Unpooled.buffer(capacity);
        try {
            BsonEncoder.encodeDocument(document, bytes);
            byte[] encoded = new byte[bytes.readableBytes()];
            bytes.readBytes(encoded);
            return encoded;
        } finally {
            bytes.release();
        }
    }

    /** The next BSON document's bytes, copied out of the page being read. */
    private static byte[] readStored(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt()];
        buffer.get(bytes);
        return bytes;
    }

    /** The values of an index key from its stored bytes (`{v: [...]}`). */
    private static List<Object> decodeValues(byte[] stored) {
        return valuesOf(decodeDocument(stored));
    }

    /** A secondary index entry's values from its stored bytes (IndexEntry). */
    static Object[] decodeIndexValues(byte[] stored) {
        Object[] plain = decodePlainValues(stored);
        return plain != null ? plain : decodeValues(stored).toArray();
    }

    /**
     * `{v: [...]}` of numbers, strings, booleans, dates and nulls (nearly every index key) read
     * straight into an array, as BsonDecoder would decode them; null when it holds any other type.
     * A lookup decodes the keys its binary search compares, and the decoder's map and list for
     * each were most of what a page read allocated after the page itself.
     */
    static Object[] decodePlainValues(byte[] b) {
        ByteBuffer in = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        if (b.length < 12 || b[4] != 0x04 || b[5] != 'v' || b[6] != 0) return null;
        int end = 7 + in.getInt(7) - 1; // the array's terminating 0
        int pos = 11;
        Object[] values = new Object[4];
        int n = 0;
        while (pos < end) {
            byte type = b[pos++];
            while (b[pos] != 0) pos++; // the element's name: "0", "1", ...
            pos++;
            Object value;
            switch (type) {
                case 0x12 -> { value = in.getLong(pos); pos += 8; }
                case 0x10 -> { value = in.getInt(pos); pos += 4; }
                case 0x01 -> { value = in.getDouble(pos); pos += 8; }
                case 0x08 -> { value = b[pos] != 0; pos += 1; }
                case 0x0A -> value = null;
                case 0x09 -> { value = Instant.ofEpochMilli(in.getLong(pos)); pos += 8; }
                case 0x02 -> {
                    int length = in.getInt(pos); // with its terminating 0
                    value = new String(b, pos + 4, length - 1, StandardCharsets.UTF_8);
                    pos += 4 + length;
                }
                default -> { return null; }
            }
            if (n == values.length) values = Arrays.copyOf(values, n * 2);
            values[n++] = value;
        }
        return n == values.length ? values : Arrays.copyOf(values, n);
    }

    /** A secondary index entry's values as stored. */
    static byte[] encodeIndexValues(Object[] values) {
        return encode(new Document("v", Arrays.asList(values)), 64);
    }

    private static List<Object> valuesOf(Document wrapper) {
        return (List<Object>) wrapper.get("v");
    }

    /** A document as stored: its BSON bytes. */
    static byte[] encodeDocument(Document document) {
        return encode(document, 256);
    }

    /** A new document decoded from its stored bytes: the caller may change it. */
    static Document decodeDocument(byte[] stored) {
        return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(stored));
    }

    /**
     * Whole documents, the values of a collection's primary map, kept as their BSON bytes and decoded
     * by the reader that needs one. Decoded pages held every document of a page read for one of them
     * as maps of boxed values, several times their bytes: with the small default page cache, random
     * reads over a big collection decoded whole pages and filled the heap with short-lived maps (the
     * collector's work was most of the tail: docs/benchmarks.md, 2026-12-01). On disk the same bytes
     * as before (a BSON document carries its length).
     */
    static final class StoredDocumentType extends BasicDataType<byte[]> {
        static final StoredDocumentType INSTANCE = new StoredDocumentType();

        @Override
        public int getMemory(byte[] stored) {
            return 24 + stored.length;
        }

        @Override
        public void write(WriteBuffer buffer, byte[] stored) {
            buffer.put(stored);
        }

        @Override
        public byte[] read(ByteBuffer buffer) {
            return readStored(buffer);
        }

        @Override
        public byte[][] createStorage(int size) {
            return new byte[size][];
        }
    }

    /** Keys of secondary and unique indexes, ordered as BSON values (IndexEntry). */
    static final class IndexEntryType extends BasicDataType<IndexEntry> {
        static final IndexEntryType INSTANCE = new IndexEntryType();

        @Override
        public int getMemory(IndexEntry entry) {
            // Its bytes and, once decoded, its values (about three times the bytes); the same
            // figure before and after, as the page's memory is counted up and down with it.
            return 64 + 4 * entry.stored().length;
        }

        @Override
        public void write(WriteBuffer buffer, IndexEntry entry) {
            buffer.put(entry.stored());
        }

        @Override
        public IndexEntry read(ByteBuffer buffer) {
            return IndexEntry.stored(readStored(buffer));
        }

        @Override
        public int compare(IndexEntry a, IndexEntry b) {
            return a.compareTo(b);
        }

        @Override
        public IndexEntry[] createStorage(int size) {
            return new IndexEntry[size];
        }
    }
}
