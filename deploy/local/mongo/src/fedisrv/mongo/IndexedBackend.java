package fedisrv.mongo;

import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;

import io.netty.channel.Channel;

/**
 * mongo-java-server's H2 backend with secondary indexes and planned queries (IndexedDatabase), and a
 * commit of the MVStore after every command that changed it, before the answer goes out: an
 * acknowledged write is in the file (the OS page cache) and so survives a kill -9 of this process.
 * Reads never commit: the background writer's housekeeping leaves unsaved changes of its own, and
 * committing those on a reader's path would stall it.
 *
 * Group commit: a commit stores every change made before it began, so a writer that finds a commit
 * under way waits for it and then needs one only if its change came after that commit began; the
 * writers that queued meanwhile share the next one (each netty thread serves several connections, so
 * under load several writes are answered per commit instead of one commit each).
 */
final class IndexedBackend extends H2Backend {
    private static final Set<String> READS = Set.of("find", "getmore", "count", "distinct", "listcollections",
        "listindexes", "listdatabases", "hello", "ismaster", "ping", "buildinfo", "serverstatus", "dbstats",
        "collstats", "killcursors", "endsessions", "getlasterror", "explain", "connectionstatus", "hostinfo",
        "whatsmyuri", "getparameter", "getlog", "getcmdlineopts", "getfreemonitoringstatus", "currentop");

    private final MVStore store;

    IndexedBackend(MVStore store) {
        super(primeOpening(store));
        this.store = store;
        IndexedDatabase.OPENING.remove();
    }

    /** H2Backend's constructor opens the existing databases: let them see the store (see OPENING). */
    private static MVStore primeOpening(MVStore store) {
        IndexedDatabase.OPENING.set(store);
        return store;
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        MVStore s = store != null ? store : IndexedDatabase.OPENING.get();
        IndexedDatabase.OPENING.set(s);
        try {
            return new IndexedDatabase(databaseName, s, getCursorRegistry());
        } finally {
            if (store != null) IndexedDatabase.OPENING.remove();
        }
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        try {
            return super.handleCommand(channel, databaseName, command, query);
        } finally {
            if (changes(command, query)) groupCommit();
        }
    }

    /** Changes made so far (numbered when their command finished), and the last number committed. */
    private final AtomicLong changed = new AtomicLong();
    private long committed;
    private final Object commitLock = new Object();

    /** Returns once a commit that began after this thread's change has finished. */
    private void groupCommit() {
        long mine = changed.incrementAndGet();
        synchronized (commitLock) {
            if (committed >= mine) return;
            long upTo = changed.get();
            commitDurably();
            committed = upTo;
        }
    }

    private static boolean changes(String command, Document query) {
        String name = command.toLowerCase(Locale.ROOT);
        if (name.equals("aggregate")) return String.valueOf(query.get("pipeline")).matches("(?s).*\\$(out|merge)\\b.*");
        return !READS.contains(name);
    }

    void commitIfChanged() {
        if (store.hasUnsavedChanges()) store.commit();
    }

    /**
     * Commits, and returns only once the changes made so far are written to the file. The store's
     * background writer also commits (MVStore.tryCommit), but writes its chunk asynchronously: when
     * it has just taken this thread's change, there is nothing left to commit here while the bytes
     * may still be on their way, and answering then could acknowledge a write a kill -9 loses. The
     * file store's operation barrier waits for the serialization and save executors to drain.
     */
    private void commitDurably() {
        long stored = store.hasUnsavedChanges() ? store.commit() : -1;
        if (stored >= 0) return; // written synchronously, after every store queued before it
        var fileStore = store.getFileStore();
        if (fileStore != null) fileStore.executeFileStoreOperation(() -> { });
    }
}
