package fedisrv.mongo;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;

import io.netty.channel.Channel;

/**
 * mongo-java-server's H2 backend with secondary indexes and planned queries (IndexedDatabase), and a
 * commit of the MVStore after every command that changed it, before the answer goes out: an
 * acknowledged write is in the file (the OS page cache) and so survives a kill -9 of this process.
 */
final class IndexedBackend extends H2Backend {
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
            commitIfChanged();
        }
    }

    void commitIfChanged() {
        if (store.hasUnsavedChanges()) store.commit();
    }
}
