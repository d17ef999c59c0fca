package fedisrv.mongo;

import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;

/**
 * A unique index (mongo-java-server enforces it) in an MVStore map keyed by IndexEntry: a page read
 * keeps each key's bytes and decodes only those a lookup compares. Its keys were KeyValues decoded
 * whole on every page read, each with an entry in a weak map of their bytes: those objects were most
 * of what the collector copied in a relationships query's young collections (docs/benchmarks.md,
 * 2026-12-02 midday).
 */
final class UniqueIndex extends AbstractUniqueIndex<Object> {
    private final MVMap<IndexEntry, Object> map;

    UniqueIndex(MVMap<IndexEntry, Object> map, String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.map = map;
    }

    /** The indexed fields, in key order (planned by QueryPlanner). */
    List<String> fields() {
        return keys();
    }

    /** The key as stored: a missing field as null, as secondary indexes store it. */
    private static IndexEntry entry(KeyValue keyValue) {
        Object[] values = new Object[keyValue.size()];
        for (int i = 0; i < values.length; i++) values[i] = SecondaryIndex.storable(keyValue.get(i));
        return new IndexEntry(values);
    }

    @Override
    protected Object removeDocument(KeyValue keyValue) {
        return map.remove(entry(keyValue));
    }

    @Override
    protected boolean putKeyPosition(KeyValue keyValue, Object position) {
        return map.putIfAbsent(entry(keyValue), Missing.ofNullable(position)) == null;
    }

    @Override
    protected Iterable<Entry<KeyValue, Object>> getIterable() {
        return () -> new Iterator<>() {
            private final Iterator<Map.Entry<IndexEntry, Object>> entries = map.entrySet().iterator();

            @Override
            public boolean hasNext() {
                return entries.hasNext();
            }

            @Override
            public Entry<KeyValue, Object> next() {
                Map.Entry<IndexEntry, Object> e = entries.next();
                return new SimpleImmutableEntry<>(new KeyValue(e.getKey().values()), e.getValue());
            }
        };
    }

    @Override
    protected Object getPosition(KeyValue keyValue) {
        return map.get(entry(keyValue));
    }

    @Override
    public long getCount() {
        return map.sizeAsLong();
    }

    @Override
    public boolean isEmpty() {
        return map.isEmpty();
    }

    @Override
    public long getDataSize() {
        return getCount();
    }
}
