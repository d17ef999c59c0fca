package fedisrv.mongo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;

/** Deep copies of stored documents: nested documents and arrays copied, immutable values shared. */
final class Copies {
    private Copies() {
    }

    static Document of(Document document) {
        Document copy = new Document();
        for (Map.Entry<String, Object> e : document.entrySet()) copy.put(e.getKey(), value(e.getValue()));
        return copy;
    }

    private static Object value(Object value) {
        if (value instanceof Document d) return of(d);
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>(list.size());
            for (Object v : list) copy.add(value(v));
            return copy;
        }
        if (value instanceof byte[] bytes) return bytes.clone();
        return value; // String, numbers, Instant, ObjectId, BinData...: not changed in place
    }
}
