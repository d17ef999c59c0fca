package fedisrv.mongo;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.UUID;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerException;

/**
 * A collection in the MVStore (mongo-java-server's H2Collection, with its maps and their names) whose
 * queries go through QueryPlanner: index range walks instead of full scans, and an early stop once
 * skip + limit documents are found when the index yields the sort order. Writes stay
 * mongo-java-server's (one lock per collection, so updates such as $inc are atomic).
 *
 * Documents are stored as their BSON bytes (BsonDataTypes.StoredDocumentType) and every read decodes
 * a new document: mongo-java-server's update path edits the document a query returned in place, so
 * readers never share an object the store or another reader holds (no torn reads, and findAndModify
 * never answers with a later update's value).
 */
final class IndexedCollection extends AbstractSynchronizedMongoCollection<Object> {
    private static final String DATA_SIZE_KEY = "dataSize";

    private final MVMap<Object, byte[]> dataMap;
    private final MVMap<String, Object> metaMap;

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                      MVMap<Object, byte[]> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
        this.dataMap = dataMap;
        this.metaMap = metaMap;
        metaMap.putIfAbsent(DATA_SIZE_KEY, Long.valueOf(0));
    }

    /** This collection's indexes of one kind (the planner weighs secondary and unique ones apart). */
    private <T> List<T> indexesOf(Class<T> kind) {
        List<T> result = new ArrayList<>();
        for (Index<Object> index : getIndexes()) if (kind.isInstance(index)) result.add(kind.cast(index));
        return result;
    }

    @Override
    protected void updateDataSize(int sizeDelta) {
        synchronized (metaMap) {
            Number value = (Number) metaMap.get(DATA_SIZE_KEY);
            metaMap.put(DATA_SIZE_KEY, Long.valueOf(value.longValue() + sizeDelta));
        }
    }

    @Override
    protected int getDataSize() {
        return ((Number) metaMap.get(DATA_SIZE_KEY)).intValue();
    }

    @Override
    protected Object addDocumentInternal(Document document) {
        Object key = getIdField() != null ? Utils.getSubdocumentValue(document, getIdField()) : UUID.randomUUID();
        // The unique _id index refused duplicates before this: one here is a broken store.
        if (dataMap.putIfAbsent(Missing.ofNullable(key), BsonDataTypes.encodeDocument(document)) != null)
            throw new MongoServerException("document with key '" + key + "' already existed in " + this);
        return key;
    }

    @Override
    public int count() {
        return dataMap.size();
    }

    @Override
    public boolean isEmpty() {
        return dataMap.isEmpty();
    }

    @Override
    protected Document getDocument(Object position) {
        byte[] stored = dataMap.get(position);
        return stored == null ? null : BsonDataTypes.decodeDocument(stored);
    }

    @Override
    protected void removeDocument(Object position) {
        if (dataMap.remove(position) == null) throw new NoSuchElementException("No document with key " + position);
    }

    @Override
    protected Stream<DocumentWithPosition<Object>> streamAllDocumentsWithPosition() {
        return dataMap.entrySet().stream()
            .map(e -> new DocumentWithPosition<>(BsonDataTypes.decodeDocument(e.getValue()), e.getKey()));
    }

    @Override
    protected void handleUpdate(Object position, Document oldDocument, Document newDocument) {
        dataMap.put(Missing.ofNullable(position), BsonDataTypes.encodeDocument(newDocument));
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        String idField = getIdField();
        QueryPlanner.Plan plan = idField == null ? null
            : QueryPlanner.plan(query, orderBy, indexesOf(SecondaryIndex.class), indexesOf(UniqueIndex.class), dataMap,
                idField);
        if (plan == null) return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);

        // Multikey entries can name a document more than once.
        Set<Object> seen = new HashSet<>();
        List<Document> matched = new ArrayList<>();
        int wanted = plan.ordered() && limit > 0 ? numberToSkip + limit : Integer.MAX_VALUE;
        Iterator<Object> ids = plan.ids();
        while (ids.hasNext() && matched.size() < wanted) {
            Object id = ids.next();
            if (!seen.add(id)) continue;
            Document document = getDocument(id);
            if (document != null && (plan.exact() || documentMatchesQuery(document, query))) matched.add(document);
        }
        // Matched above: the stream's own filter gets the empty query, which matches at once.
        return matchDocumentsFromStream(MATCH_ALL, matched.stream(), numberToSkip, limit, batchSize,
            plan.ordered() ? null : deriveComparator(orderBy), fieldSelector);
    }

    private static final Document MATCH_ALL = new Document();

    /** The map walked backwards: it is already in key (natural) order, so nothing is sorted. */
    private Stream<Document> reverseNaturalOrder() {
        Cursor<Object, byte[]> cursor = dataMap.cursor(null, null, true);
        Iterator<Document> documents = new Iterator<>() {
            @Override
            public boolean hasNext() {
                return cursor.hasNext();
            }

            @Override
            public Document next() {
                cursor.next();
                return BsonDataTypes.decodeDocument(cursor.getValue());
            }
        };
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(documents, Spliterator.ORDERED), false);
    }

    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        Stream<Document> documents = isNaturalDescending(orderBy)
            ? reverseNaturalOrder()
            : dataMap.values().stream().map(BsonDataTypes::decodeDocument);
        return matchDocumentsFromStream(documents, query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }
}
