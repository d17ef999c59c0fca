package fedisrv.mongo;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.bson.Document;

/**
 * An H2 collection whose queries go through QueryPlanner: index range walks instead of full scans,
 * and an early stop once skip + limit documents are found when the index yields the sort order.
 * Writes stay mongo-java-server's (one lock per collection, so updates such as $inc are atomic).
 *
 * Documents leave the store only as copies: mongo-java-server's update path edits the document a
 * query returned in place, and the store keeps handing out the object it holds, so without copies
 * an update would change documents that readers are still serialising (torn reads, and
 * findAndModify answering with a later update's value).
 */
final class IndexedCollection extends H2Collection {
    private final MVMap<Object, Document> dataMap;

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                      MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
        this.dataMap = dataMap;
    }

    private List<SecondaryIndex> secondaryIndexes() {
        List<SecondaryIndex> result = new ArrayList<>();
        for (Index<Object> index : getIndexes()) if (index instanceof SecondaryIndex s) result.add(s);
        return result;
    }

    private List<UniqueIndex> uniqueIndexes() {
        List<UniqueIndex> result = new ArrayList<>();
        for (Index<Object> index : getIndexes()) if (index instanceof UniqueIndex u) result.add(u);
        return result;
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        String idField = getIdField();
        QueryPlanner.Plan plan = idField == null ? null
            : QueryPlanner.plan(query, orderBy, secondaryIndexes(), uniqueIndexes(), dataMap, idField);
        if (plan == null) return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);

        // Multikey entries can name a document more than once.
        Set<Object> seen = new HashSet<>();
        List<Document> matched = new ArrayList<>();
        int wanted = plan.ordered() && limit > 0 ? numberToSkip + limit : Integer.MAX_VALUE;
        boolean projected = isProjection(fieldSelector);
        Iterator<Object> ids = plan.ids();
        while (ids.hasNext() && matched.size() < wanted) {
            Object id = ids.next();
            if (!seen.add(id)) continue;
            Document document = dataMap.get(id);
            if (document != null && (plan.exact() || documentMatchesQuery(document, query)))
                matched.add(projected ? document : Copies.of(document));
        }
        // Matched above: the stream's own filter gets the empty query, which matches at once.
        return matchDocumentsFromStream(MATCH_ALL, matched.stream(), numberToSkip, limit, batchSize,
            plan.ordered() ? null : deriveComparator(orderBy), fieldSelector);
    }

    private static final Document MATCH_ALL = new Document();

    /**
     * A projected answer is a new document made of the stored one's values, which nothing changes in
     * place (updates store copies, see above): only unprojected answers, which the update path edits,
     * need a copy. Most reads project (the document cache's views, id and field lists).
     */
    private static boolean isProjection(Document fieldSelector) {
        return fieldSelector != null && !fieldSelector.isEmpty();
    }

    @Override
    protected Document getDocument(Object position) {
        Document document = dataMap.get(position);
        return document == null ? null : Copies.of(document);
    }

    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        if (isNaturalDescending(orderBy)) return super.matchDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
        // A scan: only the matching documents are copied (and only for an unprojected answer).
        boolean projected = isProjection(fieldSelector);
        return matchDocumentsFromStream(MATCH_ALL, dataMap.values().stream().filter(d -> documentMatchesQuery(d, query))
            .map(d -> projected ? d : Copies.of(d)), numberToSkip, limit, batchSize, deriveComparator(orderBy),
            fieldSelector);
    }
}
