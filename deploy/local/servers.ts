// How each local server is started: Redis (Debian), Kafka (KRaft, one combined broker+controller
// on the JVM) and the embedded MongoDB-wire server (deploy/local/mongo: mongo-java-server on an H2
// MVStore file, with this project's secondary indexes and query planner). Data under var/<server>.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { LocalInfraSettings, ServerName } from './settings.ts';
import { kafkaLibDir, mongoClassesDir, mongoLibDir } from './install.ts';
import { probeKafka, probeMongo, probeRedis, type ProbeResult } from './probes.ts';

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
      startTimeoutS: 30,
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
        writeFileSync(properties, kafkaProperties(host, ports.kafka, ports.kafkaController, dataDir));
        const classpath = `${kafkaLibDir(s)}/*`;
        const log4j = `-Dlog4j.configuration=file:${join(s.root, 'deploy/local/kafka/log4j.properties')}`;
        if (!existsSync(join(dataDir, 'meta.properties'))) {
          const format = spawnSync(
            'java',
            [
              '-cp',
              classpath,
              log4j,
              'kafka.tools.StorageTool',
              'format',
              '-t',
              clusterId(dir),
              '-c',
              properties,
              '-g',
            ],
            {
              encoding: 'utf8',
            },
          );
          if (format.status !== 0) throw new Error(`Kafka storage format failed:\n${format.stderr || format.stdout}`);
        }
        const args = [
          ...s.kafkaJvmOptions,
          '-XX:+ExitOnOutOfMemoryError',
          '-Djava.awt.headless=true',
          log4j,
          '-cp',
          classpath,
          'kafka.Kafka',
          properties,
        ];
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

/** Kafka's cluster id, kept with the data; it must not start with "-" (the tool would read an option). */
function clusterId(dir: string): string {
  const file = join(dir, 'cluster-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  let id: string;
  do id = randomBytes(16).toString('base64url');
  while (id.startsWith('-'));
  writeFileSync(file, id);
  return id;
}

function kafkaProperties(host: string, port: number, controllerPort: number, dataDir: string): string {
  // Single node: every replication factor is 1; the group settings make first joins fast in tests.
  // The log cleaner's dedupe buffer (of the compacted offsets topic) is on the heap, 128 MB by
  // default: 16 MB leaves the small default heap (settings.ts) to the broker.
  return `process.roles=broker,controller
node.id=1
controller.quorum.voters=1@${host}:${controllerPort}
listeners=PLAINTEXT://${host}:${port},CONTROLLER://${host}:${controllerPort}
advertised.listeners=PLAINTEXT://${host}:${port}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=${dataDir}
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
auto.create.topics.enable=true
delete.topic.enable=true
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.dedupe.buffer.size=16777216
`;
}
