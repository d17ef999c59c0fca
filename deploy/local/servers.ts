// How each local server is started: Redis (Debian), Kafka (KRaft, one combined broker+controller
// on the JVM) and the embedded MongoDB-wire server (deploy/local/mongo: mongo-java-server on an H2
// MVStore file, with this project's secondary indexes and query planner). Data under var/<server>.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalInfraSettings, ServerName } from './settings.ts';
import { kafkaLibDir, mongoClassesDir, mongoLibDir } from './install.ts';
import { probeKafka, probeMongo, probeRedis, type ProbeResult } from './probes.ts';
import { clusterId, formatKraftStorage, kraftArgs, kraftProperties, kraftRun } from './kafka/kraft.ts';

export interface ServerSpec {
  name: ServerName;
  label: string;
  port: number;
  probe(): Promise<ProbeResult>;
  /** Seconds to wait for readiness after start. */
  startTimeoutS: number;
  /** Prepares data directories and returns the command to run. */
  prepare(): { command: string; args: string[] };
}

export function serverSpecs(s: LocalInfraSettings): Record<ServerName, ServerSpec> {
  const { host, ports } = s;
  return {
    redis: {
      name: 'redis',
      label: 'Redis',
      port: ports.redis,
      probe: () => probeRedis(host, ports.redis),
      startTimeoutS: 120,
      prepare() {
        const dir = join(s.varDir, 'redis');
        mkdirSync(dir, { recursive: true });
        // AOF, fsync every second: what `npm start` needs to keep feeds and counters across restarts.
        const args = [
          '--bind',
          host,
          '--port',
          String(ports.redis),
          '--dir',
          dir,
          '--appendonly',
          'yes',
          '--appendfsync',
          'everysec',
          '--save',
          '',
        ];
        return { command: 'redis-server', args };
      },
    },
    kafka: {
      name: 'kafka',
      label: 'Kafka',
      port: ports.kafka,
      probe: () => probeKafka(host, ports.kafka),
      startTimeoutS: 120,
      prepare() {
        const dir = join(s.varDir, 'kafka');
        const dataDir = join(dir, 'data');
        mkdirSync(dataDir, { recursive: true });
        const properties = join(dir, 'server.properties');
        writeFileSync(properties, singleNodeProperties(host, ports.kafka, ports.kafkaController, dataDir));
        const run = kraftRun(s.root, kafkaLibDir(s), properties, dataDir, s.kafkaJvmOptions);
        formatKraftStorage(run, clusterId(dir));
        const args = kraftArgs(run);
        return { command: 'java', args };
      },
    },
    mongo: {
      name: 'mongo',
      label: 'embedded MongoDB-wire server',
      port: ports.mongo,
      probe: () => probeMongo(host, ports.mongo),
      startTimeoutS: 120,
      prepare() {
        const dir = join(s.varDir, 'mongo');
        mkdirSync(dir, { recursive: true });
        const args = [
          ...s.mongoJvmOptions,
          '-XX:+ExitOnOutOfMemoryError',
          '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
          '-cp',
          `${mongoClassesDir(s)}:${mongoLibDir(s)}/*`,
          'fedisrv.mongo.EmbeddedMongoServer',
          host,
          String(ports.mongo),
          join(dir, 'data.mv'),
          String(s.mongoCacheMb),
        ];
        return { command: 'java', args };
      },
    },
  };
}

/**
 * The single node: every replication factor is 1. The log cleaner's dedupe buffer (of the
 * compacted offsets topic) is on the heap, 128 MB by default: 16 MB leaves the small default heap
 * (settings.ts) to the broker. Its idle CPU counts in every post's (the api benchmark's tree CPU).
 */
export function singleNodeProperties(host: string, port: number, controllerPort: number, dataDir: string): string {
  return kraftProperties({
    host,
    nodeId: 1,
    port,
    controllerPort,
    voters: `1@${host}:${controllerPort}`,
    dataDir,
    replicas: 1,
    partitions: 1,
    offsetsPartitions: 1,
    transactionPartitions: 1,
    extra: [
      'log.cleaner.dedupe.buffer.size=16777216',
      // An idle single node spent about 15 % of a core; much of it the controller's no-op record
      // every 500 ms and the broker's heartbeat every 2 s, which tell a cluster that its
      // controller and brokers are alive, and here there is no other node to tell.
      'metadata.max.idle.interval.ms=10000',
      'broker.heartbeat.interval.ms=5000',
      'broker.session.timeout.ms=18000',
    ],
  });
}
