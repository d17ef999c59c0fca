package fedisrv.mongo;

import java.util.List;
import java.util.Map.Entry;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;

/** A unique index (mongo-java-server enforces it) in an MVStore map with BSON-encoded keys. */
final class UniqueIndex extends AbstractUniqueIndex<Object> {
    private final MVMap<KeyValue, Object> map;

    UniqueIndex(MVMap<KeyValue, Object> map, String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.map = map;
    }

    /** The indexed fields, in key order (planned by QueryPlanner). */
    List<String> fields() {
        return keys();
    }

    @Override
    protected Object removeDocument(KeyValue keyValue) {
        return map.remove(keyValue);
    }

    @Override
    protected boolean putKeyPosition(KeyValue keyValue, Object position) {
        return map.putIfAbsent(keyValue, Missing.ofNullable(position)) == null;
    }

    @Override
    protected Iterable<Entry<KeyValue, Object>> getIterable() {
        return map.entrySet();
    }

    @Override
    protected Object getPosition(KeyValue keyValue) {
        return map.get(keyValue);
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
