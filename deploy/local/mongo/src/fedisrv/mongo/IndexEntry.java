package fedisrv.mongo;

import java.io.Serializable;
import java.util.Arrays;

import de.bwaldvogel.mongo.backend.ValueComparator;

/**
 * One key of a secondary index: the indexed values in index order followed by the document's _id, so
 * every entry is unique and a range over the leading values yields the matching documents. A unique
 * index's keys are IndexEntries too, of the indexed values alone (UniqueIndex). Ordered
 * as MongoDB orders BSON values (ValueComparator), with LOW/HIGH sentinels for open range bounds.
 */
final class IndexEntry implements Serializable, Comparable<IndexEntry> {
    private static final long serialVersionUID = 1L;

    /** Sorts before every value; only used in range bounds, never stored. */
    static final Object LOW = new Sentinel(-1);
    /** Sorts after every value; only used in range bounds, never stored. */
    static final Object HIGH = new Sentinel(1);

    private static final ValueComparator VALUES = ValueComparator.ascWithoutListHandling();

    /**
     * The indexed values and the _id; null for an entry read from a page until something asks for
     * them. A page read decodes none of its keys: a lookup compares a handful of them (a binary
     * search), and decoding all of a page's keys for that was most of what a cache miss allocated
     * (docs/benchmarks.md, 2026-12-01 second morning). Volatile, like `stored`: pages are shared by
     * the server's threads, and an array is published only once it is complete.
     */
    private volatile Object[] values;

    /**
     * The entry as stored (BsonDataTypes.IndexEntryType), once written or read: a commit rewrites every
     * page it touched whole (copy-on-write), so an entry is written again with each change to its page,
     * and encoding it anew each time was most of the commits' CPU.
     */
    private volatile byte[] stored;

    IndexEntry(Object[] values) {
        this.values = values;
    }

    /** An entry as a page holds it: its bytes, decoded when first needed. */
    static IndexEntry stored(byte[] bytes) {
        IndexEntry entry = new IndexEntry(null);
        entry.stored = bytes;
        return entry;
    }

    Object[] values() {
        Object[] v = values;
        if (v == null) values = v = BsonDataTypes.decodeIndexValues(stored);
        return v;
    }

    /** Its stored bytes, encoded the first time they are needed. */
    byte[] stored() {
        byte[] s = stored;
        if (s == null) stored = s = BsonDataTypes.encodeIndexValues(values);
        return s;
    }

    Object id() {
        Object[] v = values();
        return v[v.length - 1];
    }

    @Override
    public int compareTo(IndexEntry other) {
        Object[] mine = values();
        Object[] theirs = other.values();
        int n = Math.min(mine.length, theirs.length);
        for (int i = 0; i < n; i++) {
            int c = compareValues(mine[i], theirs[i]);
            if (c != 0) return c;
        }
        return Integer.compare(mine.length, theirs.length);
    }

    static int compareValues(Object a, Object b) {
        if (a instanceof Sentinel sa) return b instanceof Sentinel sb ? Integer.compare(sa.sign, sb.sign) : sa.sign;
        if (b instanceof Sentinel sb) return -sb.sign;
        // Whole numbers (most keys: ids) as the comparator orders them, without the boxed copies its
        // normalisation makes on every comparison.
        if ((a instanceof Long || a instanceof Integer) && (b instanceof Long || b instanceof Integer))
            return Long.compare(((Number) a).longValue(), ((Number) b).longValue());
        return VALUES.compare(a, b);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IndexEntry e && compareTo(e) == 0;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(values());
    }

    @Override
    public String toString() {
        return Arrays.toString(values());
    }

    private static final class Sentinel implements Serializable {
        private static final long serialVersionUID = 1L;
        final int sign;

        Sentinel(int sign) {
            this.sign = sign;
        }

        private Object readResolve() {
            return sign < 0 ? LOW : HIGH;
        }
    }
}
