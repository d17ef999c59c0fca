// The local production topology (`npm run cluster`): where everything lives and listens, and which
// server processes run. Pipelines come from pipelines/index.ts, so a new pipeline gets its process
// without an edit here; `fanout` and `delivery` (whose workers are the `delivery-worker` group) run twice.
import { join } from 'node:path';
import { pipelines } from '../../../pipelines/index.ts';
import { localInfraSettings, type LocalInfraSettings } from '../settings.ts';
import { REPLICAS } from '../../generate/roles.ts';

type Env = Record<string, string | undefined>;

// Processes per role and pipeline: the same counts as the Compose file and Kubernetes manifests.
const API_REPLICAS = REPLICAS.api ?? 1;
const STREAMING_REPLICAS = REPLICAS.streaming ?? 1;
export const KAFKA_NODES = 3;
export const REDIS_NODES = 6;

export type Role = { kind: 'api' } | { kind: 'streaming' } | { kind: 'pipeline'; name: string };

export interface RoleProcess {
  /** Unique, also the pid file's and log's name: `api-1`, `streaming-2`, `pipeline-fanout-1`. */
  name: string;
  role: Role;
  /** Arguments after `services/main.ts`. */
  args: string[];
  /** The port its health check answers on (PORT, or STREAMING_PORT for streaming). */
  port: number;
  healthPath: string;
}

export interface ClusterSettings {
  root: string;
  dir: string;
  runDir: string;
  logDir: string;
  host: string;
  publicPort: number;
  haproxyStatsPort: number;
  kafka: Array<{ id: number; port: number; controllerPort: number }>;
  redisPorts: number[];
  mongoPort: number;
  kafkaJvmOptions: string[];
  /** The single-node settings, pointed at the cluster's directory: reused for the MongoDB-wire server and installs. */
  infra: LocalInfraSettings;
  processes: RoleProcess[];
}

function int(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new Error(`Invalid configuration: ${name} must be a port number, got "${v}"`);
  return n;
}

/**
 * CLUSTER_PORT (public, default 3000) and CLUSTER_PORT_BASE (default 21000): base+1 HAProxy's stats,
 * base+10.. Kafka brokers, base+20.. their controllers, base+30.. Redis Cluster (its bus base+80..),
 * base+40 MongoDB-wire,
 * base+50.. api, base+60.. streaming, base+100.. pipelines. CLUSTER_DIR (default var/cluster).
 */
export function clusterSettings(root: string, env: Env): ClusterSettings {
  const base = int(env, 'CLUSTER_PORT_BASE', 21000);
  if (base + 199 > 65535) throw new Error('Invalid configuration: CLUSTER_PORT_BASE leaves no room for 200 ports');
  const dir = env.CLUSTER_DIR ? join(root, env.CLUSTER_DIR) : join(root, 'var', 'cluster');
  const host = '127.0.0.1';
  const mongoPort = base + 40;
  const single = localInfraSettings(root, env);
  const infra: LocalInfraSettings = {
    ...single,
    varDir: dir,
    runDir: join(dir, 'run'),
    logDir: join(dir, 'log'),
    ports: { ...single.ports, mongo: mongoPort },
    external: { redis: false, kafka: false, mongo: false },
    // Small heaps: nine JVM-and-Node servers and twenty Node processes share one small machine.
    mongoJvmOptions: (env.CLUSTER_MONGO_JVM_OPTS ?? '-Xms128m -Xmx1g -XX:+UseSerialGC').split(/\s+/).filter(Boolean),
  };
  const processes: RoleProcess[] = [];
  for (let i = 1; i <= API_REPLICAS; i++)
    processes.push({
      name: `api-${i}`,
      role: { kind: 'api' },
      args: ['api'],
      port: base + 49 + i,
      healthPath: '/health/ready',
    });
  for (let i = 1; i <= STREAMING_REPLICAS; i++)
    processes.push({
      name: `streaming-${i}`,
      role: { kind: 'streaming' },
      args: ['streaming'],
      port: base + 59 + i,
      healthPath: '/api/v1/streaming/health',
    });
  let next = base + 100;
  for (const name of Object.keys(pipelines)) {
    const replicas = REPLICAS[name] ?? 1;
    for (let i = 1; i <= replicas; i++)
      processes.push({
        name: `pipeline-${name}-${i}`,
        role: { kind: 'pipeline', name },
        args: ['pipeline', name],
        port: next++,
        healthPath: '/health/ready',
      });
  }
  return {
    root,
    dir,
    runDir: infra.runDir,
    logDir: infra.logDir,
    host,
    publicPort: int(env, 'CLUSTER_PORT', 3000),
    haproxyStatsPort: base + 1,
    kafka: Array.from({ length: KAFKA_NODES }, (_, i) => ({
      id: i + 1,
      port: base + 10 + i,
      controllerPort: base + 20 + i,
    })),
    redisPorts: Array.from({ length: REDIS_NODES }, (_, i) => base + 30 + i),
    mongoPort,
    kafkaJvmOptions: (
      env.CLUSTER_KAFKA_JVM_OPTS ?? '-Xms128m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k'
    )
      .split(/\s+/)
      .filter(Boolean),
    infra,
    processes,
  };
}

/** What every server process gets (on top of the environment and `.env`). */
export function clusterServerEnv(s: ClusterSettings, redisEnv: Record<string, string>): Record<string, string> {
  return {
    KAFKA_BROKERS: s.kafka.map((k) => `${s.host}:${k.port}`).join(','),
    MONGO_URL: `mongodb://${s.host}:${s.mongoPort}/fedi`,
    ...redisEnv,
    LOCAL_DOMAIN: `localhost:${s.publicPort}`,
    // Clients find the streaming API behind the same address (HAProxy routes it), not on a process's port.
    STREAMING_API_BASE_URL: `ws://localhost:${s.publicPort}`,
    MEDIA_DIR: join(s.dir, 'media'),
  };
}

export function roleLabel(role: Role): string {
  return role.kind === 'pipeline' ? `pipeline ${role.name}` : role.kind;
}
