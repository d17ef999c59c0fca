// Three Kafka nodes in one KRaft quorum: each is broker and controller (three voters, so the quorum
// survives one node), topics are created with replication factor 3 and min.insync.replicas=2, so
// an acks=all producer keeps writing while one broker is down and loses nothing acknowledged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaLibDir } from '../install.ts';
import type { ClusterSettings } from './topology.ts';
import { clusterId, formatKraftStorage, kraftArgs, kraftProperties, kraftRun } from '../kafka/kraft.ts';

export interface KafkaNodeCommand {
  name: string;
  port: number;
  command: string;
  args: string[];
}

/** Writes each node's properties, formats its storage once (one cluster id for all), returns how to run it. */
export function prepareKafkaNodes(s: ClusterSettings): KafkaNodeCommand[] {
  const dir = join(s.dir, 'kafka');
  mkdirSync(dir, { recursive: true });
  const id = clusterId(dir);
  const voters = s.kafka.map((k) => `${k.id}@${s.host}:${k.controllerPort}`).join(',');
  return s.kafka.map((node) => {
    const nodeDir = join(dir, `node-${node.id}`);
    const dataDir = join(nodeDir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const properties = join(nodeDir, 'server.properties');
    writeFileSync(properties, nodeProperties(s.host, node, voters, dataDir));
    const run = kraftRun(s.root, kafkaLibDir(s.infra), properties, dataDir, s.kafkaJvmOptions);
    formatKraftStorage(run, id);
    return { name: `kafka-${node.id}`, port: node.port, command: 'java', args: kraftArgs(run) };
  });
}

export function nodeProperties(
  host: string,
  node: { id: number; port: number; controllerPort: number },
  voters: string,
  dataDir: string,
): string {
  return kraftProperties({
    host,
    nodeId: node.id,
    port: node.port,
    controllerPort: node.controllerPort,
    voters,
    dataDir,
    replicas: 3,
    partitions: 4,
    offsetsPartitions: 10,
    transactionPartitions: 4,
    extra: [
      'unclean.leader.election.enable=false',
      'num.replica.fetchers=1',
      'background.threads=2',
      'log.cleaner.threads=1',
      'log.cleaner.dedupe.buffer.size=8388608',
    ],
  });
}

function admin(s: ClusterSettings) {
  return new Kafka({
    clientId: 'fedisrv-cluster',
    brokers: s.kafka.map((k) => `${s.host}:${k.port}`),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1500,
    requestTimeout: 5000,
    retry: { retries: 1 },
  }).admin();
}

/** How many brokers the quorum has registered and unfenced (3 when the cluster is whole). */
export async function kafkaBrokerCount(s: ClusterSettings): Promise<number> {
  const a = admin(s);
  try {
    await a.connect();
    return (await a.describeCluster()).brokers.length;
  } catch {
    return 0;
  } finally {
    await a.disconnect().catch(() => undefined);
  }
}

/**
 * Consumer lag per consumer group of this deployment (`<prefix>.<pipeline>`, and
 * `<prefix>.delivery-worker`): end offsets minus committed offsets over the topics the group committed.
 */
export async function consumerLag(
  s: ClusterSettings,
  prefix: string,
  /** Filled, when given, with what lags: group → "topic/partition: n" entries. */
  where?: Map<string, string[]>,
): Promise<Map<string, number>> {
  const a = admin(s);
  const lag = new Map<string, number>();
  try {
    await a.connect();
    const groups = (await a.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith(`${prefix}.`) && !g.endsWith('.dlq-replay'));
    const ends = new Map<string, Map<number, number>>();
    for (const groupId of groups) {
      const committed = await a.fetchOffsets({ groupId });
      let total = 0;
      for (const t of committed) {
        if (!ends.has(t.topic)) {
          const offsets = await a.fetchTopicOffsets(t.topic);
          ends.set(t.topic, new Map(offsets.map((o) => [o.partition, Number(o.high)])));
        }
        const end = ends.get(t.topic) as Map<number, number>;
        for (const p of t.partitions) {
          const high = end.get(p.partition) ?? 0;
          const from = Number(p.offset) < 0 ? 0 : Number(p.offset);
          const behind = Math.max(0, high - from);
          total += behind;
          if (behind > 0 && where) {
            const group = groupId.slice(prefix.length + 1);
            where.set(group, [...(where.get(group) ?? []), `${t.topic}/${p.partition}: ${behind}`]);
          }
        }
      }
      lag.set(groupId.slice(prefix.length + 1), total);
    }
  } finally {
    await a.disconnect().catch(() => undefined);
  }
  return lag;
}

/** Replication settings of the event topics, to show that the cluster's defaults reached them. */
export async function topicReplication(
  s: ClusterSettings,
  topics: string[],
): Promise<Array<{ topic: string; replicas: number; minIsr: string }>> {
  const a = admin(s);
  try {
    await a.connect();
    const meta = await a.fetchTopicMetadata({ topics });
    const configs = await a.describeConfigs({
      includeSynonyms: false,
      resources: topics.map((name) => ({ type: 2, name, configNames: ['min.insync.replicas'] })),
    });
    return meta.topics.map((t) => ({
      topic: t.name,
      replicas: Math.min(...t.partitions.map((p) => p.replicas.length)),
      minIsr:
        configs.resources
          .find((r) => r.resourceName === t.name)
          ?.configEntries.find((c) => c.configName === 'min.insync.replicas')?.configValue ?? '?',
    }));
  } finally {
    await a.disconnect().catch(() => undefined);
  }
}
