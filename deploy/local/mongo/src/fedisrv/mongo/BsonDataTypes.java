package fedisrv.mongo;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;

import de.bwaldvogel.mongo.backend.KeyValue;
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

    private static void writeBson(WriteBuffer buffer, Document document) {
        ByteBuf bytes = Unpooled.buffer(256);
        try {
            BsonEncoder.encodeDocument(document, bytes);
            buffer.put(bytes.nioBuffer());
        } finally {
            bytes.release();
        }
    }

    private static Document readBson(ByteBuffer buffer) {
        int length = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt();
        ByteBuffer slice = buffer.slice();
        slice.limit(length);
        buffer.position(buffer.position() + length);
        return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(slice));
    }

    private static List<Object> valuesOf(Document wrapper) {
        return (List<Object>) wrapper.get("v");
    }

    /** Whole documents, the values of a collection's primary map. */
    static final class DocumentType extends BasicDataType<Document> {
        static final DocumentType INSTANCE = new DocumentType();

        @Override
        public int getMemory(Document document) {
            return 128 + 96 * document.size();
        }

        @Override
        public void write(WriteBuffer buffer, Document document) {
            writeBson(buffer, document);
        }

        @Override
        public Document read(ByteBuffer buffer) {
            return readBson(buffer);
        }

        @Override
        public Document[] createStorage(int size) {
            return new Document[size];
        }
    }

    /** Keys of secondary indexes, ordered as BSON values (IndexEntry). */
    static final class IndexEntryType extends BasicDataType<IndexEntry> {
        static final IndexEntryType INSTANCE = new IndexEntryType();

        @Override
        public int getMemory(IndexEntry entry) {
            return 48 + 40 * entry.values.length;
        }

        @Override
        public void write(WriteBuffer buffer, IndexEntry entry) {
            writeBson(buffer, new Document("v", Arrays.asList(entry.values)));
        }

        @Override
        public IndexEntry read(ByteBuffer buffer) {
            return new IndexEntry(valuesOf(readBson(buffer)).toArray());
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

    /** Keys of unique indexes (mongo-java-server's KeyValue), ordered as BSON values. */
    static final class KeyValueType extends BasicDataType<KeyValue> {
        static final KeyValueType INSTANCE = new KeyValueType();

        @Override
        public int getMemory(KeyValue keyValue) {
            return 48 + 40 * keyValue.size();
        }

        @Override
        public void write(WriteBuffer buffer, KeyValue keyValue) {
            List<Object> values = new ArrayList<>(keyValue.size());
            for (Object v : keyValue) values.add(SecondaryIndex.storable(v));
            writeBson(buffer, new Document("v", values));
        }

        @Override
        public KeyValue read(ByteBuffer buffer) {
            return new KeyValue(valuesOf(readBson(buffer)));
        }

        @Override
        public int compare(KeyValue a, KeyValue b) {
            int n = Math.min(a.size(), b.size());
            for (int i = 0; i < n; i++) {
                int c = IndexEntry.compareValues(SecondaryIndex.storable(a.get(i)), SecondaryIndex.storable(b.get(i)));
                if (c != 0) return c;
            }
            return Integer.compare(a.size(), b.size());
        }

        @Override
        public KeyValue[] createStorage(int size) {
            return new KeyValue[size];
        }
    }
}
