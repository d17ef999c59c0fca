// Where the local servers live and listen. Everything they write stays under <root>/var; downloaded
// and built artifacts are cached under ~/.cache/fedisrv (FEDISRV_CACHE) so later runs are warm.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { loadEnvironment } from '../../services/core/config.ts';

export type ServerName = 'redis' | 'kafka' | 'mongo';

export interface LocalInfraSettings {
  root: string;
  varDir: string;
  runDir: string;
  logDir: string;
  cacheDir: string;
  host: string;
  ports: { redis: number; kafka: number; kafkaController: number; mongo: number };
  /** Servers named by REDIS_URL / KAFKA_BROKERS / MONGO_URL: used as they are, never started here. */
  external: Record<ServerName, boolean>;
  kafkaJvmOptions: string[];
  mongoJvmOptions: string[];
  /** Page cache of the embedded MongoDB-wire server's store, in MB (MONGO_CACHE_MB). */
  mongoCacheMb: number;
  /**
   * The local Redis Cluster (deploy/local/redisCluster.ts): six ports from REDIS_CLUSTER_PORT, their
   * cluster buses REDIS_CLUSTER_BUS_OFFSET (default 10000) above.
   */
  redisCluster: { dir: string; ports: number[]; busPortOffset: number };
}

// The heap free ratios keep Kafka's heap close to its live data (HotSpot's defaults, 40 and 70 %,
// kept 10-25 MB more committed at the end of `npm run bench -- api`, with no measurable difference
// in its CPU: docs/benchmarks.md).
const COMPACT_HEAP = '-XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30';
/** Kafka's JVM: C1 only, for a fast start (drop -XX:TieredStopAtLevel=1 for long benchmark runs). */
export const KAFKA_JVM_DEFAULTS = `-Xms32m -Xmx192m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 ${COMPACT_HEAP}`;
// The MongoDB-wire server's old generation fills with the pages its commits replace: with a small
// young generation and Kafka's compact ratios it was collected in full about 70 times a posting
// run (40-100 ms stop-the-world pauses, every request in flight waiting). A fixed 64 MB young
// generation with roomy survivor spaces: most replaced pages die young, so a posting run has about
// one full collection instead of 2-3 and fewer young ones; the old generation's free-ratio bounds
// keep the RSS where it was (docs/benchmarks.md, 2026-11-30 evening). C1 only, as Kafka's: a freshly
// started server's C2 compiler thread took 2.2 s of CPU through a 4,000-post burst, half the
// server's, on the cores the request path needs; without it the posting p99 was lower in nine of
// nine alternated pairs and the JVM 40 MB smaller, at 0.7-1.5 ms more for the relationships of 40
// accounts and a fifth more for a search (docs/benchmarks.md, 2026-12-02). A busy long-running
// instance drops the flag in MONGO_JVM_OPTS.
export const MONGO_JVM_DEFAULTS =
  '-Xms96m -Xmx320m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:NewSize=64m -XX:MaxNewSize=64m -XX:SurvivorRatio=4 -XX:MinHeapFreeRatio=20 -XX:MaxHeapFreeRatio=40';
// The store's own page cache holds pages of BSON bytes (the OS caches the file under it): a small one
// keeps the hot inner pages while pages read once die young. At 16 MB, random reads over a big
// data set (40 of 100,000 accounts a call) pushed every page read through the old generation and
// the JVM collected in full 2-3 times a second: relationships p99 81-113 ms against 17.8 at 2 MB,
// with no measurable cost to posting (docs/benchmarks.md, 2026-12-01 morning).
export const MONGO_CACHE_MB_DEFAULT = 2;

type Env = Record<string, string | undefined>;

function port(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new Error(`Invalid configuration: ${name} must be a port number, got "${v}"`);
  return n;
}

function megabytes(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`Invalid configuration: ${name} must be a number of MB, got "${v}"`);
  return n;
}

/** `env` defaults to the process environment over `<root>/.env`, like the server's own configuration. */
export function localInfraSettings(root: string, env: Env = loadEnvironment(join(root, '.env'))): LocalInfraSettings {
  const varDir = join(root, 'var');
  const kafka = port(env, 'KAFKA_PORT', 19092);
  return {
    root,
    varDir,
    runDir: join(varDir, 'run'),
    logDir: join(varDir, 'log'),
    cacheDir: env.FEDISRV_CACHE || join(homedir(), '.cache', 'fedisrv'),
    host: '127.0.0.1',
    ports: {
      redis: port(env, 'REDIS_PORT', 6390),
      kafka,
      kafkaController: port(env, 'KAFKA_CONTROLLER_PORT', kafka + 1),
      mongo: port(env, 'MONGO_PORT', 27018),
    },
    external: { redis: Boolean(env.REDIS_URL), kafka: Boolean(env.KAFKA_BROKERS), mongo: Boolean(env.MONGO_URL) },
    // Sized for a small instance (the whole `npm start` tree within 1 GB, issue 24): a bigger one
    // raises the heaps (KAFKA_JVM_OPTS='-Xmx1g …', MONGO_JVM_OPTS='-Xmx3g …') and the page cache
    // (MONGO_CACHE_MB). The serial collector: no collector threads competing for the two cores,
    // and a heap that grows only as far as the live data needs.
    kafkaJvmOptions: (env.KAFKA_JVM_OPTS ?? KAFKA_JVM_DEFAULTS).split(/\s+/).filter(Boolean),
    mongoJvmOptions: (env.MONGO_JVM_OPTS ?? MONGO_JVM_DEFAULTS).split(/\s+/).filter(Boolean),
    mongoCacheMb: megabytes(env, 'MONGO_CACHE_MB', MONGO_CACHE_MB_DEFAULT),
    redisCluster: {
      dir: join(varDir, 'redis-cluster'),
      ports: Array.from({ length: 6 }, (_, i) => port(env, 'REDIS_CLUSTER_PORT', 7000) + i),
      busPortOffset: port(env, 'REDIS_CLUSTER_BUS_OFFSET', 10_000),
    },
  };
}

/** The connection settings for the servers this setup manages, in the server's variable names. */
export function localInfraEnv(s: LocalInfraSettings): Record<string, string> {
  const env: Record<string, string> = {};
  if (!s.external.redis) env.REDIS_URL = `redis://${s.host}:${s.ports.redis}/0`;
  if (!s.external.kafka) env.KAFKA_BROKERS = `${s.host}:${s.ports.kafka}`;
  if (!s.external.mongo) env.MONGO_URL = `mongodb://${s.host}:${s.ports.mongo}/fedi`;
  return env;
}
