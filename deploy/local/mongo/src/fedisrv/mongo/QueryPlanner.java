package fedisrv.mongo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeSet;
import java.util.regex.Pattern;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

/**
 * Chooses how to find a query's documents: a unique index looked up by key when the filter pins
 * every one of its fields to values, a secondary index walked over the key ranges the filter
 * pins down (equality, $in, ranges on a prefix of its fields), or the primary map for _id filters.
 * When the walk order equals the requested sort, the caller can stop after skip + limit matches.
 * Every candidate is still matched against the whole filter, so a plan only has to yield a superset,
 * unless the plan is exact: a filter of nothing but `_id` values names exactly the documents stored
 * under them (most reads of the document cache), and one of nothing but a unique index's fields
 * pinned to values those the index holds under them (relationships), which need no second look.
 */
final class QueryPlanner {
    /** Ranges of one field that a filter allows; points are equality values, sorted. */
    record Bounds(List<Object> points, Object low, boolean lowInclusive, Object high, boolean highInclusive) {
        boolean isPoints() {
            return points != null;
        }

        boolean isSinglePoint() {
            return points != null && points.size() == 1;
        }
    }

    /** A chosen access path: the _ids it yields, in order if `ordered`. */
    interface Plan {
        Iterator<Object> ids();

        boolean ordered();

        /** Every document it yields matches the filter. */
        default boolean exact() {
            return false;
        }
    }

    private static final int MAX_RANGES = 1000;

    private QueryPlanner() {
    }

    static Plan plan(Document query, Document orderBy, List<SecondaryIndex> indexes, List<UniqueIndex> uniques,
                     MVMap<Object, ?> primary, String idField) {
        Map<String, Bounds> bounds = boundsOf(query);
        List<Map.Entry<String, Integer>> sort = sortFields(orderBy);
        if (sort == null) return null; // $natural or something we do not plan
        Plan best = null;
        int bestScore = 0;
        for (SecondaryIndex index : indexes) {
            Candidate c = candidate(index.fields(), bounds, sort);
            if (c != null && c.score > bestScore) {
                bestScore = c.score;
                best = indexPlan(index.map(), index.fields().size(), c);
            }
        }
        // Every field of a unique index pinned to values: at most one document per combination, found
        // by key. Better than a walk of more entries than that (a viewer's follows of 40 accounts: 40
        // lookups, not the viewer's 10,000 follows), worse than a shorter one (the 40 accounts'
        // follows of the viewer, who has no followers: one empty range), so the walk is tried first.
        boolean byIdPoints = bounds.get(idField) != null && bounds.get(idField).isPoints();
        if (!byIdPoints) {
            for (UniqueIndex unique : uniques) {
                int lookups = uniqueLookups(unique, bounds);
                if (lookups < 0) continue;
                Plan walk = best == null ? null : prefetched(best, lookups);
                return walk != null ? walk : uniquePlan(unique, bounds, pinsOnly(query, unique.fields()));
            }
        }
        Candidate byId = candidate(List.of(idField), bounds, sort);
        if (byId != null && byId.score >= bestScore && byId.score > 0) {
            best = primaryPlan(primary, byId, query.size() == 1 && onlyEquality(query.get(idField))
                && exactPoints(bounds.get(idField)));
        }
        return best;
    }

    /**
     * The filter names these fields and nothing else, each by equality or `$in` alone: the documents
     * the unique index holds under the pinned keys are exactly those it matches (the keys of an
     * array field are its elements, as an equality with one of them matches it).
     */
    private static boolean pinsOnly(Document query, List<String> fields) {
        if (query.size() != fields.size()) return false;
        for (String field : fields) {
            if (!query.containsKey(field) || !onlyEquality(query.get(field))) return false;
        }
        return true;
    }

    /** A value, or an operator document of `$eq` or `$in` alone (no other operator to check). */
    private static boolean onlyEquality(Object condition) {
        if (!(condition instanceof Document d) || !hasOperator(d)) return true;
        return d.size() == 1 && (d.containsKey("$eq") || d.containsKey("$in"));
    }

    /** Values whose equality the stored key decides alone (not null, which also matches a missing field). */
    private static boolean exactPoints(Bounds b) {
        if (b == null || !b.isPoints()) return false;
        for (Object p : b.points()) {
            if (!(p instanceof Number || p instanceof String || p instanceof Boolean || p instanceof java.util.Date
                || p instanceof de.bwaldvogel.mongo.bson.ObjectId)) return false;
        }
        return true;
    }

    // ---- filter analysis ----

    static Map<String, Bounds> boundsOf(Document query) {
        Map<String, Bounds> result = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : query.entrySet()) {
            String key = e.getKey();
            if (key.equals("$and") && e.getValue() instanceof Collection<?> parts) {
                for (Object part : parts) {
                    if (part instanceof Document d) boundsOf(d).forEach(result::putIfAbsent);
                }
                continue;
            }
            if (key.startsWith("$")) continue; // $or, $nor, $expr...: a superset is fine
            Bounds b = boundsOfCondition(e.getValue());
            if (b != null) result.putIfAbsent(key, b);
        }
        return result;
    }

    private static boolean isPlainValue(Object v) {
        return !(v instanceof Collection) && !(v instanceof Pattern) && !(v instanceof BsonRegularExpression)
            && !(v instanceof Document d && (BsonRegularExpression.isRegularExpression(d) || hasOperator(d)));
    }

    private static boolean hasOperator(Document d) {
        for (String k : d.keySet()) if (k.startsWith("$")) return true;
        return false;
    }

    private static Bounds boundsOfCondition(Object condition) {
        if (!(condition instanceof Document d) || !hasOperator(d)) {
            return isPlainValue(condition) ? points(java.util.Collections.singletonList(nullable(condition))) : null;
        }
        if (d.containsKey("$eq")) {
            Object v = d.get("$eq");
            return isPlainValue(v) ? points(java.util.Collections.singletonList(nullable(v))) : null;
        }
        if (d.get("$in") instanceof Collection<?> values) {
            List<Object> pts = new ArrayList<>(values.size());
            for (Object v : values) {
                if (!isPlainValue(v)) return null;
                pts.add(nullable(v));
            }
            return pts.isEmpty() ? null : points(pts);
        }
        Object low = IndexEntry.LOW;
        Object high = IndexEntry.HIGH;
        boolean lowInc = true;
        boolean highInc = true;
        boolean any = false;
        for (Map.Entry<String, Object> op : d.entrySet()) {
            Object v = op.getValue();
            if (!isPlainValue(v) || v == null) continue;
            switch (op.getKey()) {
                case "$gt" -> { low = v; lowInc = false; any = true; }
                case "$gte" -> { low = v; lowInc = true; any = true; }
                case "$lt" -> { high = v; highInc = false; any = true; }
                case "$lte" -> { high = v; highInc = true; any = true; }
                default -> { }
            }
        }
        return any ? new Bounds(null, low, lowInc, high, highInc) : null;
    }

    private static Object nullable(Object v) {
        return SecondaryIndex.storable(v);
    }

    private static Bounds points(List<Object> values) {
        if (values.size() == 1) return new Bounds(values, null, true, null, true);
        // Sorted in place and deduplicated (a TreeSet's entries were an eighth of what a
        // relationships query allocated).
        values.sort(IndexEntry::compareValues);
        List<Object> distinct = new ArrayList<>(values.size());
        for (Object v : values) {
            if (distinct.isEmpty() || IndexEntry.compareValues(distinct.get(distinct.size() - 1), v) != 0) distinct.add(v);
        }
        return new Bounds(distinct, null, true, null, true);
    }

    /** The sort as (field, direction) pairs; null when it cannot be planned ($natural, $meta...). */
    private static List<Map.Entry<String, Integer>> sortFields(Document orderBy) {
        List<Map.Entry<String, Integer>> result = new ArrayList<>();
        if (orderBy == null) return result;
        for (Map.Entry<String, Object> e : orderBy.entrySet()) {
            if (e.getKey().startsWith("$") || !(e.getValue() instanceof Number n)) return null;
            result.add(Map.entry(e.getKey(), n.intValue() < 0 ? -1 : 1));
        }
        return result;
    }

    // ---- choosing ----

    /** How an index serves a query: the bounds of its leading fields, and whether it yields the sort. */
    record Candidate(List<Bounds> prefix, int score, boolean ordered, boolean reverse) {
    }

    private static Candidate candidate(List<String> fields, Map<String, Bounds> bounds,
                                       List<Map.Entry<String, Integer>> sort) {
        List<Bounds> prefix = new ArrayList<>();
        int ranges = 1;
        int singlePoints = 0;
        boolean leadingSinglePoints = true;
        for (String field : fields) {
            Bounds b = bounds.get(field);
            if (b == null) break;
            if (b.isPoints()) {
                ranges *= b.points().size();
                if (ranges > MAX_RANGES) break;
                prefix.add(b);
                if (b.isSinglePoint() && leadingSinglePoints) singlePoints++;
                else leadingSinglePoints = false;
            } else {
                prefix.add(b);
                break;
            }
        }
        // The walk yields the sort when, past the fields pinned to one value, the sort fields are the
        // next index fields, all in one direction (entries are stored ascending on every field).
        boolean ordered = false;
        boolean reverse = false;
        List<Map.Entry<String, Integer>> rest = new ArrayList<>();
        for (Map.Entry<String, Integer> s : sort) {
            Bounds b = bounds.get(s.getKey());
            int pos = fields.indexOf(s.getKey());
            if (b != null && b.isSinglePoint() && pos >= 0 && pos < singlePoints) continue;
            rest.add(s);
        }
        if (rest.isEmpty()) {
            ordered = true;
        } else if (prefix.size() <= singlePoints + 1 && fields.size() >= singlePoints + rest.size()) {
            // a multi-point or range field may lead the sort, but only as the first sort field
            boolean match = true;
            int dir = rest.get(0).getValue();
            for (int i = 0; i < rest.size(); i++) {
                if (!fields.get(singlePoints + i).equals(rest.get(i).getKey()) || rest.get(i).getValue() != dir) {
                    match = false;
                    break;
                }
            }
            if (match && prefix.size() == singlePoints + 1 && prefix.get(singlePoints).isPoints()
                && prefix.get(singlePoints).points().size() > 1) {
                match = false; // several $in values: each range is sorted, their concatenation is not
            }
            ordered = match;
            reverse = match && dir < 0;
        }
        int score = prefix.size() * 4 + (ordered && !sort.isEmpty() ? 3 : 0);
        if (prefix.isEmpty() && !(ordered && !sort.isEmpty())) return null;
        return new Candidate(prefix, score, ordered, reverse);
    }

    // ---- executing ----

    private static Plan indexPlan(MVMap<IndexEntry, Boolean> map, int width, Candidate c) {
        List<Object[]> lows = new ArrayList<>();
        List<Object[]> highs = new ArrayList<>();
        expand(c.prefix(), 0, new ArrayList<>(), width + 1, lows, highs);
        if (c.reverse()) {
            java.util.Collections.reverse(lows);
            java.util.Collections.reverse(highs);
        }
        boolean ordered = c.ordered();
        return new Plan() {
            @Override
            public Iterator<Object> ids() {
                return new Iterator<>() {
                    int range = -1;
                    Cursor<IndexEntry, Boolean> cursor;
                    Object next;

                    private boolean advance() {
                        while (true) {
                            if (cursor != null && cursor.hasNext()) {
                                next = cursor.next().id();
                                return true;
                            }
                            range++;
                            if (range >= lows.size()) return false;
                            IndexEntry low = new IndexEntry(lows.get(range));
                            IndexEntry high = new IndexEntry(highs.get(range));
                            cursor = c.reverse() ? map.cursor(high, low, true) : map.cursor(low, high, false);
                        }
                    }

                    @Override
                    public boolean hasNext() {
                        return next != null || advance();
                    }

                    @Override
                    public Object next() {
                        if (!hasNext()) throw new NoSuchElementException();
                        Object id = next;
                        next = null;
                        return id;
                    }
                };
            }

            @Override
            public boolean ordered() {
                return ordered;
            }
        };
    }

    /** Every combination of point values, each closed by its range field or by open sentinels. */
    private static void expand(List<Bounds> prefix, int i, List<Object> values, int width, List<Object[]> lows,
                               List<Object[]> highs) {
        if (i == prefix.size() || !prefix.get(i).isPoints()) {
            Object[] low = new Object[width];
            Object[] high = new Object[width];
            int n = values.size();
            for (int k = 0; k < n; k++) low[k] = high[k] = values.get(k);
            if (i < prefix.size()) {
                Bounds r = prefix.get(i);
                low[n] = r.low();
                high[n] = r.high();
                fill(low, n + 1, r.lowInclusive() ? IndexEntry.LOW : IndexEntry.HIGH);
                fill(high, n + 1, r.highInclusive() ? IndexEntry.HIGH : IndexEntry.LOW);
            } else {
                fill(low, n, IndexEntry.LOW);
                fill(high, n, IndexEntry.HIGH);
            }
            lows.add(low);
            highs.add(high);
            return;
        }
        for (Object point : prefix.get(i).points()) {
            values.add(point);
            expand(prefix, i + 1, values, width, lows, highs);
            values.remove(values.size() - 1);
        }
    }

    /** How many keys the filter pins in a unique index, or -1 when it does not pin all its fields. */
    private static int uniqueLookups(UniqueIndex index, Map<String, Bounds> bounds) {
        int combinations = 1;
        for (String field : index.fields()) {
            Bounds b = bounds.get(field);
            // Dotted paths and values that also match a missing field are left to the other plans.
            if (field.contains(".") || !exactPoints(b)) return -1;
            combinations *= b.points().size();
            if (combinations > MAX_RANGES) return -1;
        }
        return combinations;
    }

    /** The plan's ids read ahead when there are at most `limit` of them; null when there are more. */
    private static Plan prefetched(Plan plan, int limit) {
        List<Object> ids = new ArrayList<>();
        Iterator<Object> it = plan.ids();
        while (it.hasNext()) {
            if (ids.size() == limit) return null;
            ids.add(it.next());
        }
        return new SimplePlan(ids.iterator(), plan.ordered(), plan.exact());
    }

    private static Plan uniquePlan(UniqueIndex index, Map<String, Bounds> bounds, boolean exact) {
        List<String> fields = index.fields();
        List<Object> ids = new ArrayList<>();
        lookUp(index, fields, bounds, 0, new Document(), ids);
        return new SimplePlan(ids.iterator(), ids.size() <= 1, exact);
    }

    /**
     * Every combination of the fields' point values, looked up by the key a stored document with
     * those values has (the index's own key of it), without the streams and sets of its lookup by
     * document (a sixth of what a relationships query allocated).
     */
    private static void lookUp(UniqueIndex index, List<String> fields, Map<String, Bounds> bounds, int i, Document key,
                               List<Object> ids) {
        if (i == fields.size()) {
            for (KeyValue keyValue : index.getKeyValues(key)) {
                Object position = index.getPosition(keyValue);
                if (position != null && !(position instanceof Missing)) ids.add(position);
            }
            return;
        }
        for (Object point : bounds.get(fields.get(i)).points()) {
            key.put(fields.get(i), point);
            lookUp(index, fields, bounds, i + 1, key, ids);
        }
        key.remove(fields.get(i));
    }

    private static void fill(Object[] array, int from, Object value) {
        for (int k = from; k < array.length; k++) array[k] = value;
    }

    private static Plan primaryPlan(MVMap<Object, ?> primary, Candidate c, boolean exact) {
        Bounds b = c.prefix().isEmpty() ? new Bounds(null, IndexEntry.LOW, true, IndexEntry.HIGH, true) : c.prefix().get(0);
        boolean reverse = c.reverse();
        if (b.isPoints()) {
            List<Object> ids = new ArrayList<>();
            for (Object point : b.points()) {
                Object stored = storedKey(primary, point);
                if (stored != null) ids.add(stored);
            }
            if (reverse) java.util.Collections.reverse(ids);
            return new SimplePlan(ids.iterator(), c.ordered(), exact);
        }
        Object start = reverse ? b.high() : b.low();
        Iterator<Object> keys = reverse
            ? primary.keyIteratorReverse(start == IndexEntry.HIGH ? null : start)
            : primary.keyIterator(start == IndexEntry.LOW ? null : start);
        Iterator<Object> bounded = new Iterator<>() {
            Object next;
            boolean done;

            private boolean inRange(Object key) {
                int lo = IndexEntry.compareValues(key, b.low());
                int hi = IndexEntry.compareValues(key, b.high());
                return (lo > 0 || (lo == 0 && b.lowInclusive())) && (hi < 0 || (hi == 0 && b.highInclusive()));
            }

            private boolean pastEnd(Object key) {
                return reverse ? IndexEntry.compareValues(key, b.low()) < 0 : IndexEntry.compareValues(key, b.high()) > 0;
            }

            @Override
            public boolean hasNext() {
                while (next == null && !done) {
                    if (!keys.hasNext()) {
                        done = true;
                        break;
                    }
                    Object key = keys.next();
                    if (pastEnd(key)) {
                        done = true;
                        break;
                    }
                    if (inRange(key)) next = key;
                }
                return next != null;
            }

            @Override
            public Object next() {
                if (!hasNext()) throw new NoSuchElementException();
                Object key = next;
                next = null;
                return key;
            }
        };
        return new SimplePlan(bounded, c.ordered(), false);
    }

    /** The primary map is keyed by the stored _id object; an equal number may be stored as another type. */
    private static Object storedKey(MVMap<Object, ?> primary, Object id) {
        if (id == null) return null;
        if (primary.containsKey(id)) return id;
        if (id instanceof Number n) {
            Number normalized = Utils.normalizeNumber(n);
            for (Object variant : new Object[] {Long.valueOf(n.longValue()), Integer.valueOf(n.intValue()),
                Double.valueOf(n.doubleValue()), normalized}) {
                if (variant instanceof Number v && v.doubleValue() == n.doubleValue() && primary.containsKey(variant)) {
                    return variant;
                }
            }
        }
        return null;
    }

    private record SimplePlan(Iterator<Object> iterator, boolean ordered, boolean exact) implements Plan {
        @Override
        public Iterator<Object> ids() {
            return iterator;
        }
    }
}
