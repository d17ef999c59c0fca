package fedisrv.mongo;

import java.io.Serializable;
import java.util.Arrays;

import de.bwaldvogel.mongo.backend.ValueComparator;

/**
 * One key of a secondary index: the indexed values in index order followed by the document's _id, so
 * every entry is unique and a range over the leading values yields the matching documents. Ordered
 * as MongoDB orders BSON values (ValueComparator), with LOW/HIGH sentinels for open range bounds.
 */
final class IndexEntry implements Serializable, Comparable<IndexEntry> {
    private static final long serialVersionUID = 1L;

    /** Sorts before every value; only used in range bounds, never stored. */
    static final Object LOW = new Sentinel(-1);
    /** Sorts after every value; only used in range bounds, never stored. */
    static final Object HIGH = new Sentinel(1);

    private static final ValueComparator VALUES = ValueComparator.ascWithoutListHandling();

    final Object[] values;

    /**
     * The entry as stored (BsonDataTypes.IndexEntryType), once written or read: a commit rewrites every
     * page it touched whole (copy-on-write), so an entry is written again with each change to its page,
     * and encoding it anew each time was most of the commits' CPU.
     */
    transient byte[] stored;

    IndexEntry(Object[] values) {
        this.values = values;
    }

    Object id() {
        return values[values.length - 1];
    }

    @Override
    public int compareTo(IndexEntry other) {
        int n = Math.min(values.length, other.values.length);
        for (int i = 0; i < n; i++) {
            int c = compareValues(values[i], other.values[i]);
            if (c != 0) return c;
        }
        return Integer.compare(values.length, other.values.length);
    }

    static int compareValues(Object a, Object b) {
        if (a instanceof Sentinel sa) return b instanceof Sentinel sb ? Integer.compare(sa.sign, sb.sign) : sa.sign;
        if (b instanceof Sentinel sb) return -sb.sign;
        return VALUES.compare(a, b);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IndexEntry e && compareTo(e) == 0;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(values);
    }

    @Override
    public String toString() {
        return Arrays.toString(values);
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
