package fedisrv.mongo;

import java.util.List;
import java.util.Set;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.bson.Document;

/**
 * A non-unique (secondary) index kept in its own MVStore map, so it is persisted with the data and
 * survives restarts without a rebuild. mongo-java-server accepts such indexes but ignores them; the
 * query planner (QueryPlanner) reads them instead. Array values are indexed per element (multikey).
 */
final class SecondaryIndex extends Index<Object> {
    private final MVMap<IndexEntry, Boolean> map;
    private final String idField;

    SecondaryIndex(String name, List<IndexKey> keys, boolean sparse, MVMap<IndexEntry, Boolean> map, String idField) {
        super(name, keys, sparse);
        this.map = map;
        this.idField = idField;
    }

    MVMap<IndexEntry, Boolean> map() {
        return map;
    }

    List<String> fields() {
        return keys();
    }

    private Set<KeyValue> entriesOf(Document document) {
        return getKeyValues(document);
    }

    private IndexEntry entry(KeyValue keyValue, Object id) {
        Object[] values = new Object[keyValue.size() + 1];
        for (int i = 0; i < keyValue.size(); i++) values[i] = storable(keyValue.get(i));
        values[values.length - 1] = id;
        return new IndexEntry(values);
    }

    /** MongoDB indexes a missing field as null; so do we (one representation, one ordering). */
    static Object storable(Object value) {
        return value instanceof Missing ? null : value;
    }

    private boolean skipSparse(KeyValue keyValue) {
        return isSparse() && keyValue.stream().allMatch(Missing::isNullOrMissing);
    }

    @Override
    public Object getPosition(Document document) {
        return document.get(idField);
    }

    @Override
    public void checkAdd(Document document, MongoCollection<Object> collection) {
        // non-unique: nothing can conflict
    }

    @Override
    public void add(Document document, Object position, MongoCollection<Object> collection) {
        for (KeyValue keyValue : entriesOf(document)) {
            if (!skipSparse(keyValue)) map.put(entry(keyValue, position), Boolean.TRUE);
        }
    }

    @Override
    public Object remove(Document document) {
        Object id = document.get(idField);
        for (KeyValue keyValue : entriesOf(document)) map.remove(entry(keyValue, id));
        return id;
    }

    @Override
    public boolean canHandle(Document query) {
        return false; // planned by QueryPlanner, not by mongo-java-server's single-index lookup
    }

    @Override
    public Iterable<Object> getPositions(Document query) {
        throw new UnsupportedOperationException("planned by QueryPlanner");
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

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Object> collection) {
        // non-unique: nothing can conflict
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Object position,
                              MongoCollection<Object> collection) {
        Set<KeyValue> before = entriesOf(oldDocument);
        Set<KeyValue> after = entriesOf(newDocument);
        if (before.equals(after)) return;
        for (KeyValue keyValue : before) if (!after.contains(keyValue)) map.remove(entry(keyValue, position));
        for (KeyValue keyValue : after) {
            if (!before.contains(keyValue) && !skipSparse(keyValue)) map.put(entry(keyValue, position), Boolean.TRUE);
        }
    }

    @Override
    public void drop() {
        map.clear();
    }
}
