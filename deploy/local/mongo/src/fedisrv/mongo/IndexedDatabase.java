package fedisrv.mongo;

import java.util.ArrayList;
import java.util.List;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

import io.netty.channel.Channel;

/**
 * H2Database with IndexedCollection and persisted secondary indexes, and aggregations whose leading
 * $match (with a following $sort/$skip/$limit) runs through the query planner instead of a scan:
 * the driver's countDocuments is such an aggregation.
 */
final class IndexedDatabase extends H2Database {
    /**
     * H2Database's constructor opens the existing collections and indexes, calling our overrides before
     * our own fields are set; the backend hands the store over through this for that window.
     */
    static final ThreadLocal<MVStore> OPENING = new ThreadLocal<>();

    private final MVStore store;

    IndexedDatabase(String databaseName, MVStore store, CursorRegistry cursorRegistry) {
        super(databaseName, store, cursorRegistry);
        this.store = store;
    }

    private MVStore store() {
        return store != null ? store : OPENING.get();
    }

    private String namespace(String collectionName) {
        return getDatabaseName() + "." + collectionName;
    }

    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
        MVStore s = store();
        MVMap<Object, byte[]> dataMap = s.openMap("databases." + namespace(collectionName),
            new MVMap.Builder<Object, byte[]>().valueType(BsonDataTypes.StoredDocumentType.INSTANCE));
        MVMap<String, Object> metaMap = s.openMap("meta." + namespace(collectionName));
        return new IndexedCollection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                       boolean sparse) {
        // Same map name as H2Database gives unique indexes, so its dropIndex/drop remove ours too.
        MVMap<IndexEntry, Boolean> map = store().openMap(namespace(collectionName) + "._index_" + indexName,
            new MVMap.Builder<IndexEntry, Boolean>().keyType(BsonDataTypes.IndexEntryType.INSTANCE));
        return new SecondaryIndex(indexName, keys, sparse, map, "_id");
    }

    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                    boolean sparse) {
        // Its keys as a secondary index's (IndexEntry, without the _id): the same bytes on disk as the
        // KeyValues stored before, decoded only when a lookup compares them.
        MVMap<IndexEntry, Object> map = store().openMap(namespace(collectionName) + "._index_" + indexName,
            new MVMap.Builder<IndexEntry, Object>().keyType(BsonDataTypes.IndexEntryType.INSTANCE));
        return new UniqueIndex(map, indexName, keys, sparse);
    }

    @Override
    public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver,
                                  Oplog oplog) {
        if (command.equalsIgnoreCase("aggregate")) {
            Document result = aggregateFromMatch(query, databaseResolver, oplog);
            if (result != null) return result;
        }
        return super.handleCommand(channel, command, query, databaseResolver, oplog);
    }

    private Document aggregateFromMatch(Document query, DatabaseResolver databaseResolver, Oplog oplog) {
        if (!(query.get("aggregate") instanceof String collectionName)) return null;
        List<Document> pipeline = Aggregation.parse(query.get("pipeline"));
        if (pipeline.isEmpty() || !(pipeline.get(0).get("$match") instanceof Document match)) return null;
        if (pipeline.get(0).size() != 1) return null;
        MongoCollection<Object> collection = resolveCollection(collectionName, false);
        if (collection == null) return null;
        Document sort = null;
        int skip = 0;
        int limit = 0;
        int next = 1;
        // Fold $sort, $skip, $limit that directly follow the $match into the query (their order matters).
        while (next < pipeline.size() && pipeline.get(next).size() == 1) {
            Document stage = pipeline.get(next);
            if (stage.get("$sort") instanceof Document s && sort == null && skip == 0 && limit == 0) {
                sort = s;
            } else if (stage.get("$skip") instanceof Number n && limit == 0) {
                skip += n.intValue();
            } else if (stage.get("$limit") instanceof Number n && limit == 0 && n.intValue() > 0) {
                limit = n.intValue();
            } else {
                break;
            }
            next++;
        }
        if (query.containsKey("let")) return null;
        for (Document stage : pipeline) {
            if (stage.containsKey("$out") || stage.containsKey("$merge") || stage.containsKey("$changeStream")) return null;
        }
        Document selector = sort == null ? match : new Document("$query", match).append("$orderby", sort);
        List<Document> documents = new ArrayList<>();
        collection.handleQuery(new QueryParameters(selector, skip, limit)).forEach(documents::add);
        Aggregation rest = Aggregation.fromPipeline(pipeline.subList(next, pipeline.size()), databaseResolver, this,
            collection, oplog);
        rest.validate(query);
        List<Document> results = rest.runStages(documents.stream());
        Document cursor = new Document("id", Long.valueOf(0))
            .append("ns", namespace(collectionName))
            .append("firstBatch", results);
        Document response = new Document("cursor", cursor);
        response.put("ok", Double.valueOf(1.0));
        return response;
    }
}
