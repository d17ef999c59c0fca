// A KRaft Kafka node as deploy/local runs it: its server.properties, the storage format run once
// per data directory, and the JVM command. The single node of `npm start` (every replication
// factor 1) and the three nodes of `npm run cluster` (replication 3, min.insync 2) share it.
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KraftNode {
  host: string;
  nodeId: number;
  port: number;
  controllerPort: number;
  /** `id@host:controllerPort,...` of every voter. */
  voters: string;
  dataDir: string;
  /** Replication factor of every topic and of the internal topics (min.insync is one less, at least 1). */
  replicas: number;
  /** Default partitions of new topics; internal topics get more on a cluster. */
  partitions: number;
  offsetsPartitions: number;
  transactionPartitions: number;
  /** Further `key=value` lines. */
  extra: readonly string[];
}

export function kraftProperties(n: KraftNode): string {
  const isr = Math.max(1, n.replicas - 1);
  return [
    'process.roles=broker,controller',
    `node.id=${n.nodeId}`,
    `controller.quorum.voters=${n.voters}`,
    `listeners=PLAINTEXT://${n.host}:${n.port},CONTROLLER://${n.host}:${n.controllerPort}`,
    `advertised.listeners=PLAINTEXT://${n.host}:${n.port}`,
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${n.dataDir}`,
    `num.partitions=${n.partitions}`,
    `default.replication.factor=${n.replicas}`,
    `min.insync.replicas=${isr}`,
    `offsets.topic.replication.factor=${n.replicas}`,
    `offsets.topic.num.partitions=${n.offsetsPartitions}`,
    `transaction.state.log.replication.factor=${n.replicas}`,
    `transaction.state.log.min.isr=${isr}`,
    `transaction.state.log.num.partitions=${n.transactionPartitions}`,
    // First joins fast (tests and fresh clusters).
    'group.initial.rebalance.delay.ms=0',
    'group.min.session.timeout.ms=1000',
    'auto.create.topics.enable=true',
    'delete.topic.enable=true',
    'num.network.threads=2',
    'num.io.threads=2',
    'num.recovery.threads.per.data.dir=1',
    ...n.extra,
    '',
  ].join('\n');
}

/** The cluster id of the storage under `dir`, made once and kept. */
export function clusterId(dir: string): string {
  const file = join(dir, 'cluster-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  let id: string;
  do id = randomBytes(16).toString('base64url');
  while (id.startsWith('-'));
  writeFileSync(file, id);
  return id;
}

export interface KraftRun {
  classpath: string;
  log4j: string;
  properties: string;
  dataDir: string;
  jvmOptions: readonly string[];
}

export function kraftRun(
  root: string,
  libDir: string,
  properties: string,
  dataDir: string,
  jvmOptions: readonly string[],
): KraftRun {
  return {
    classpath: `${libDir}/*`,
    log4j: `-Dlog4j.configuration=file:${join(root, 'deploy/local/kafka/log4j.properties')}`,
    properties,
    dataDir,
    jvmOptions,
  };
}

/** Formats the node's storage with the cluster id, once (a formatted directory has meta.properties). */
export function formatKraftStorage(run: KraftRun, id: string): void {
  if (existsSync(join(run.dataDir, 'meta.properties'))) return;
  const format = spawnSync(
    'java',
    ['-cp', run.classpath, run.log4j, 'kafka.tools.StorageTool', 'format', '-t', id, '-c', run.properties, '-g'],
    { encoding: 'utf8' },
  );
  if (format.status !== 0) throw new Error(`Kafka storage format failed:\n${format.stderr || format.stdout}`);
}

/** The broker's JVM arguments. */
export function kraftArgs(run: KraftRun): string[] {
  return [
    ...run.jvmOptions,
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    run.log4j,
    '-cp',
    run.classpath,
    'kafka.Kafka',
    run.properties,
  ];
}
