// deploy/k8s: a kustomize base with a Deployment and PodDisruptionBudget per role and pipeline of
// deployedRoles(), Services and HorizontalPodAutoscalers for `api` and `streaming`, an Ingress
// routing as Mastodon's nginx example, and a KEDA ScaledObject per pipeline on its consumer lag
// (`kafka_consumer_lag`, exported on each pipeline's /metrics, read through Prometheus).
// MongoDB (replica set), Kafka and Redis Cluster are not part of it: name them in the ConfigMap.
import type { Yaml } from './yaml.ts';
import { deployedRoles, type DeployedRole } from './roles.ts';

const APP = 'fedisrv';
const IMAGE = 'fedisrv:latest';
/** Consumers beyond the partition count sit idle: the lag autoscaler stops there. */
const PARTITIONS = 12;

const labels = (role: DeployedRole) => ({ 'app.kubernetes.io/name': APP, 'app.kubernetes.io/component': role.name });

function deployment(role: DeployedRole): Yaml {
  const portName = role.kind === 'streaming' ? 'ws' : 'http';
  const annotations: Record<string, Yaml> =
    role.kind === 'streaming'
      ? {}
      : { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(role.port), 'prometheus.io/path': '/metrics' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${APP}-${role.name}`, labels: labels(role) },
    spec: {
      replicas: role.replicas,
      selector: { matchLabels: labels(role) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: labels(role), annotations },
        spec: {
          // SIGTERM drains: servers finish requests, pipelines commit; the process gives up after 30 s.
          terminationGracePeriodSeconds: 40,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
          containers: [
            {
              name: role.name,
              image: IMAGE,
              args: role.args,
              envFrom: [{ configMapRef: { name: APP } }, { secretRef: { name: APP, optional: true } }],
              env: [{ name: role.kind === 'streaming' ? 'STREAMING_PORT' : 'PORT', value: String(role.port) }],
              ports: [{ name: portName, containerPort: role.port }],
              startupProbe: {
                httpGet: { path: role.readinessPath, port: portName },
                periodSeconds: 5,
                failureThreshold: 36,
              },
              readinessProbe: {
                httpGet: { path: role.readinessPath, port: portName },
                periodSeconds: 10,
                failureThreshold: 3,
              },
              livenessProbe: {
                httpGet: { path: role.livenessPath, port: portName },
                periodSeconds: 20,
                failureThreshold: 3,
              },
              resources: {
                requests: { cpu: `${role.resources.cpuMillis}m`, memory: `${role.resources.memoryMiB}Mi` },
                limits: { memory: `${role.resources.memoryLimitMiB}Mi` },
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'media', mountPath: '/data/media' },
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: {} },
            // Local media files work for one node only; set the S3 variables (S3_ENABLED, ...) in production.
            { name: 'media', emptyDir: {} },
          ],
        },
      },
    },
  };
}

function podDisruptionBudget(role: DeployedRole): Yaml {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: `${APP}-${role.name}`, labels: labels(role) },
    // One pod at a time: drains never take a role away entirely while it has more than one replica.
    spec: { maxUnavailable: 1, selector: { matchLabels: labels(role) } },
  };
}

function service(role: DeployedRole): Yaml {
  const portName = role.kind === 'streaming' ? 'ws' : 'http';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${APP}-${role.name}`, labels: labels(role) },
    spec: {
      selector: labels(role),
      ports: [{ name: portName, port: role.port, targetPort: portName }],
    },
  };
}

function cpuAutoscaler(role: DeployedRole): Yaml {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: `${APP}-${role.name}`, labels: labels(role) },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `${APP}-${role.name}` },
      minReplicas: role.replicas,
      maxReplicas: 20,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
    },
  };
}

function lagScaledObject(role: DeployedRole): Yaml {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: `${APP}-${role.name}`, labels: labels(role) },
    spec: {
      scaleTargetRef: { name: `${APP}-${role.name}` },
      minReplicaCount: role.replicas,
      maxReplicaCount: PARTITIONS,
      cooldownPeriod: 300,
      triggers: [
        {
          type: 'prometheus',
          metadata: {
            serverAddress: 'http://prometheus.monitoring.svc:9090',
            query: `sum(kafka_consumer_lag{pipeline="${role.lagPipeline}"})`,
            // Messages waiting per replica before another one starts.
            threshold: '500',
          },
        },
      ],
    },
  };
}

function configMap(): Yaml {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: APP },
    data: {
      NODE_ENV: 'production',
      BIND: '0.0.0.0',
      LOCAL_DOMAIN: 'example.social',
      MONGO_URL: 'mongodb://mongo-0.mongo:27017,mongo-1.mongo:27017,mongo-2.mongo:27017/fedi?replicaSet=rs0',
      REDIS_CLUSTER_NODES: 'redis-cluster:6379',
      KAFKA_BROKERS: 'kafka-0.kafka:9092,kafka-1.kafka:9092,kafka-2.kafka:9092',
      KAFKA_PARTITIONS: String(PARTITIONS),
    },
  };
}

function ingress(): Yaml {
  const path = (p: string, name: string, port: string) => ({
    path: p,
    pathType: 'Prefix',
    backend: { service: { name: `${APP}-${name}`, port: { name: port } } },
  });
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: APP },
    spec: {
      rules: [
        {
          host: 'example.social',
          http: { paths: [path('/api/v1/streaming', 'streaming', 'ws'), path('/', 'api', 'http')] },
        },
      ],
    },
  };
}

/** File name → documents, plus kustomization.yaml listing them. */
export function k8sFiles(): Record<string, Yaml[]> {
  const roles = deployedRoles();
  const files: Record<string, Yaml[]> = { 'configmap.yaml': [configMap()], 'ingress.yaml': [ingress()] };
  for (const role of roles) {
    const docs: Yaml[] = [deployment(role), podDisruptionBudget(role)];
    if (role.kind !== 'pipeline') docs.push(service(role), cpuAutoscaler(role));
    if (role.lagPipeline) docs.push(lagScaledObject(role));
    files[`${role.name}.yaml`] = docs;
  }
  files['kustomization.yaml'] = [
    {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      labels: [{ pairs: { 'app.kubernetes.io/part-of': APP } }],
      resources: Object.keys(files).sort(),
      images: [{ name: IMAGE.split(':')[0], newTag: 'latest' }],
    },
  ];
  return files;
}
