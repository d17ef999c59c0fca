package fedisrv.mongo;

import java.io.File;
import java.util.List;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;

/**
 * The embedded MongoDB-wire server of `npm start` and the tests: mongo-java-server's protocol, query
 * and update engine on an H2 MVStore file, with this project's secondary indexes and query planner.
 *
 * Usage: EmbeddedMongoServer <host> <port> <data file> [cache MB]; port 0 binds a port the system
 * chooses, printed on the first line of standard output.
 */
public final class EmbeddedMongoServer {
    private EmbeddedMongoServer() {
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: EmbeddedMongoServer <host> <port> <data file> [cache MB]");
            System.exit(2);
        }
        // Netty checks a buffer's reference count on every byte it reads or writes: a fifth of this
        // server's CPU under posting load went to it (BSON of the wire and of every stored page).
        // Before any buffer class loads; -D on the command line still wins.
        if (System.getProperty("io.netty.buffer.checkAccessible") == null)
            System.setProperty("io.netty.buffer.checkAccessible", "false");
        if (System.getProperty("io.netty.buffer.checkBounds") == null)
            System.setProperty("io.netty.buffer.checkBounds", "false");
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        File file = new File(args[2]);
        int cacheMb = args.length > 3 ? Integer.parseInt(args[3]) : 256;
        File parent = file.getAbsoluteFile().getParentFile();
        if (parent != null) parent.mkdirs();

        // Every changing command commits before it is answered (IndexedBackend); the background
        // writer stays on for the store's housekeeping: reusing dead space and compacting the file.
        // Small pages: a commit rewrites every page it touched (copy-on-write) and an insert touches a
        // page per index. Compacting only below half full keeps the writer from rewriting the file.
        MVStore store = new MVStore.Builder().fileName(file.getPath()).cacheSize(cacheMb).pageSplitSize(4096)
            .autoCompactFillRate(50).open();
        // Old chunks only need to outlive a process kill, not a power loss: the page cache keeps them.
        store.setRetentionTime(5_000);
        IndexedBackend backend = new IndexedBackend(store);
        // The current Node driver needs wire version 9 or more; mongo-java-server says 8 by default.
        backend.version(new MongoVersion() {
            @Override
            public List<Integer> getVersionArray() {
                return List.of(4, 4, 0);
            }

            @Override
            public int getWireVersion() {
                return 9;
            }
        });
        MongoServer server = new MongoServer(backend);
        server.bind(host, port);
        // The port it got: with port 0 the system chose it, and whoever started the server reads it here.
        System.out.println("embedded MongoDB-wire server listening on " + host + ":" + server.getLocalAddress().getPort()
            + " (" + file + ")");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdownNow();
            backend.commitIfChanged();
            store.close();
        }, "shutdown"));
    }
}
