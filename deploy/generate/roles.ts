// The processes a deployment runs, one entry per role and per pipeline of pipelines/index.ts (so a
// new pipeline gets its Compose service, Deployment and autoscaler without an edit here). The
// Compose file, the Kubernetes manifests and `npm run cluster` (deploy/local/cluster) follow it.
import { pipelines } from '../../pipelines/index.ts';

export interface Resources {
  /** CPU request in millicores. */
  cpuMillis: number;
  /** Memory request and limit in MiB. */
  memoryMiB: number;
  memoryLimitMiB: number;
}

export interface DeployedRole {
  /** Service / Deployment name without the `fedisrv-` prefix: `api`, `streaming`, `pipeline-fanout`. */
  name: string;
  kind: 'api' | 'streaming' | 'pipeline';
  /** Arguments to `node services/main.ts`. */
  args: string[];
  /** The port it serves: PORT (api, a pipeline's /health, /health/ready, /metrics) or STREAMING_PORT. */
  port: number;
  readinessPath: string;
  livenessPath: string;
  replicas: number;
  /** The pipeline whose `kafka_consumer_lag{pipeline=...}` (from /metrics) drives its autoscaler; null: none. */
  lagPipeline: string | null;
  resources: Resources;
}

/**
 * Pipelines that consume no Kafka topic and so have no consumer lag: the outbox relay polls the
 * MongoDB outbox, the scheduler runs timers. They run one replica and get no lag autoscaler.
 */
export const WITHOUT_CONSUMER_LAG: ReadonlySet<string> = new Set(['outbox', 'scheduler']);

/** Replicas beyond one, by role or pipeline name; `npm run cluster` runs as many processes. */
export const REPLICAS: Readonly<Record<string, number>> = { api: 2, streaming: 2, fanout: 2, delivery: 2 };

/**
 * Memory from the resident size of each process in `npm run cluster` after start-up and a few
 * requests (api 200-330 MiB, streaming 160-190 MiB, an idle pipeline 160-180 MiB) plus headroom;
 * media decodes images with sharp and runs ffmpeg, so more. CPU requests are estimates (not
 * measured here): the API and fan-out do most of the work per post.
 */
const RESOURCES: Readonly<Record<string, Resources>> = {
  api: { cpuMillis: 500, memoryMiB: 384, memoryLimitMiB: 768 },
  streaming: { cpuMillis: 250, memoryMiB: 256, memoryLimitMiB: 512 },
  fanout: { cpuMillis: 250, memoryMiB: 256, memoryLimitMiB: 512 },
  delivery: { cpuMillis: 250, memoryMiB: 256, memoryLimitMiB: 512 },
  media: { cpuMillis: 500, memoryMiB: 512, memoryLimitMiB: 1024 },
};
const PIPELINE_DEFAULT: Resources = { cpuMillis: 100, memoryMiB: 192, memoryLimitMiB: 384 };

export function deployedRoles(): DeployedRole[] {
  const roles: DeployedRole[] = [
    {
      name: 'api',
      kind: 'api',
      args: ['api'],
      port: 3000,
      readinessPath: '/health/ready',
      livenessPath: '/health',
      replicas: REPLICAS.api,
      lagPipeline: null,
      resources: RESOURCES.api,
    },
    {
      name: 'streaming',
      kind: 'streaming',
      args: ['streaming'],
      port: 4000,
      readinessPath: '/api/v1/streaming/health',
      livenessPath: '/api/v1/streaming/health',
      replicas: REPLICAS.streaming,
      lagPipeline: null,
      resources: RESOURCES.streaming,
    },
  ];
  for (const name of Object.keys(pipelines)) {
    roles.push({
      name: `pipeline-${name}`,
      kind: 'pipeline',
      args: ['pipeline', name],
      port: 3000,
      readinessPath: '/health/ready',
      livenessPath: '/health',
      replicas: REPLICAS[name] ?? 1,
      lagPipeline: WITHOUT_CONSUMER_LAG.has(name) ? null : name,
      resources: RESOURCES[name] ?? PIPELINE_DEFAULT,
    });
  }
  return roles;
}
