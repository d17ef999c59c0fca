// deploy/compose/compose.yaml (and its haproxy.cfg): every role and pipeline of deployedRoles() from
// the fedisrv image, a three-member MongoDB replica set, three Kafka nodes in one KRaft quorum, a
// Redis Cluster of three primaries and three replicas, and HAProxy in front. `docker compose up -d`.
import type { Yaml } from './yaml.ts';
import { deployedRoles } from './roles.ts';

const KAFKA_NODES = [1, 2, 3];
const MONGO_NODES = [1, 2, 3];
const REDIS_NODES = [1, 2, 3, 4, 5, 6];
/** A 16-byte id in base64url (22 characters), fixed so every node formats its storage into the same cluster. */
const KAFKA_CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qk';

const mongoUrl = `mongodb://${MONGO_NODES.map((n) => `mongo${n}:27017`).join(',')}/fedi?replicaSet=rs0`;
const kafkaBrokers = KAFKA_NODES.map((n) => `kafka${n}:9092`).join(',');
const redisNodes = REDIS_NODES.map((n) => `redis${n}:6379`).join(',');

function appService(role: ReturnType<typeof deployedRoles>[number]): Record<string, Yaml> {
  return {
    image: '${FEDISRV_IMAGE:-fedisrv:latest}',
    build: { context: '../..' },
    command: role.args,
    env_file: [{ path: '.env', required: false }],
    environment: {
      NODE_ENV: 'production',
      BIND: '0.0.0.0',
      LOCAL_DOMAIN: '${LOCAL_DOMAIN:-localhost}',
      MONGO_URL: mongoUrl,
      REDIS_CLUSTER_NODES: redisNodes,
      KAFKA_BROKERS: kafkaBrokers,
      KAFKA_PARTITIONS: '12',
      MEDIA_DIR: '/data/media',
    },
    volumes: ['media:/data/media'],
    depends_on: {
      'mongo-init': { condition: 'service_completed_successfully' },
      'redis-init': { condition: 'service_completed_successfully' },
      ...Object.fromEntries(KAFKA_NODES.map((n) => [`kafka${n}`, { condition: 'service_healthy' }])),
    },
    restart: 'unless-stopped',
    // SIGTERM drains (servers finish requests, pipelines commit); the process gives up after 30 s.
    stop_grace_period: '40s',
    deploy: { replicas: role.replicas },
  };
}

export function composeFile(): Yaml {
  const services: Record<string, Yaml> = {};
  for (const role of deployedRoles()) services[role.name] = appService(role);
  services.haproxy = {
    image: 'haproxy:2.8',
    ports: ['${FEDISRV_PORT:-3000}:3000'],
    volumes: ['./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'],
    depends_on: ['api', 'streaming'],
    restart: 'unless-stopped',
  };
  for (const n of MONGO_NODES)
    services[`mongo${n}`] = {
      image: 'mongo:7',
      command: ['mongod', '--replSet', 'rs0', '--bind_ip_all'],
      volumes: [`mongo${n}:/data/db`],
      healthcheck: {
        test: ['CMD', 'mongosh', '--quiet', '--eval', 'db.adminCommand({ ping: 1 }).ok'],
        interval: '5s',
        retries: 30,
      },
      restart: 'unless-stopped',
    };
  const members = MONGO_NODES.map((n) => `{ _id: ${n - 1}, host: 'mongo${n}:27017' }`).join(', ');
  services['mongo-init'] = {
    image: 'mongo:7',
    command: [
      'mongosh',
      '--host',
      'mongo1',
      '--quiet',
      '--eval',
      `try { rs.status() } catch (e) { rs.initiate({ _id: 'rs0', members: [${members}] }) }`,
    ],
    depends_on: Object.fromEntries(MONGO_NODES.map((n) => [`mongo${n}`, { condition: 'service_healthy' }])),
    restart: 'on-failure',
  };
  for (const n of KAFKA_NODES)
    services[`kafka${n}`] = {
      image: 'apache/kafka:3.9.1',
      environment: {
        CLUSTER_ID: KAFKA_CLUSTER_ID,
        KAFKA_NODE_ID: String(n),
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_CONTROLLER_QUORUM_VOTERS: KAFKA_NODES.map((m) => `${m}@kafka${m}:9093`).join(','),
        KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://kafka${n}:9092`,
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
        // Topics the server creates get three replicas; acks=all writes need two in sync.
        KAFKA_DEFAULT_REPLICATION_FACTOR: '3',
        KAFKA_MIN_INSYNC_REPLICAS: '2',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '3',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '3',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '2',
        KAFKA_UNCLEAN_LEADER_ELECTION_ENABLE: 'false',
        KAFKA_LOG_DIRS: '/var/lib/kafka/data',
        KAFKA_HEAP_OPTS: '-Xms512m -Xmx1g',
      },
      volumes: [`kafka${n}:/var/lib/kafka/data`],
      healthcheck: {
        test: ['CMD-SHELL', '/opt/kafka/bin/kafka-broker-api-versions.sh --bootstrap-server localhost:9092 >/dev/null'],
        interval: '10s',
        timeout: '10s',
        retries: 30,
      },
      restart: 'unless-stopped',
    };
  for (const n of REDIS_NODES)
    services[`redis${n}`] = {
      image: 'redis:7',
      command: [
        'redis-server',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '5000',
        // Nodes tell clients their service name, which survives container restarts (an address does not).
        '--cluster-announce-hostname',
        `redis${n}`,
        '--cluster-preferred-endpoint-type',
        'hostname',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--save',
        '',
      ],
      volumes: [`redis${n}:/data`],
      healthcheck: { test: ['CMD', 'redis-cli', 'ping'], interval: '5s', retries: 30 },
      restart: 'unless-stopped',
    };
  services['redis-init'] = {
    image: 'redis:7',
    command: [
      'sh',
      '-c',
      `redis-cli -h redis1 cluster info | grep -q cluster_state:ok || redis-cli --cluster create ${REDIS_NODES.map((n) => `redis${n}:6379`).join(' ')} --cluster-replicas 1 --cluster-yes`,
    ],
    depends_on: Object.fromEntries(REDIS_NODES.map((n) => [`redis${n}`, { condition: 'service_healthy' }])),
    restart: 'on-failure',
  };
  const volumes: Record<string, Yaml> = { media: {} };
  for (const n of MONGO_NODES) volumes[`mongo${n}`] = {};
  for (const n of KAFKA_NODES) volumes[`kafka${n}`] = {};
  for (const n of REDIS_NODES) volumes[`redis${n}`] = {};
  return { name: 'fedisrv', services, volumes };
}

/** HAProxy in front, routing as Mastodon's nginx example: `/api/v1/streaming` to streaming, the rest to the API. */
export function composeHaproxyConfig(): string {
  const backend = (name: string, port: number, check: string, replicas: number) =>
    `backend ${name}
  balance ${name === 'streaming' ? 'leastconn' : 'roundrobin'}
  option httpchk
  http-check send meth GET uri ${check} ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
  # Every replica Compose runs (docker compose up --scale ${name}=N), found through Docker's DNS.
  server-template ${name}- ${Math.max(4, replicas * 2)} ${name}:${port} check resolvers docker init-addr none
`;
  const roles = deployedRoles();
  const replicas = (name: string) => roles.find((r) => r.name === name)?.replicas ?? 1;
  return `# Generated by deploy/generate (npm run deploy:generate); do not edit.
global
  maxconn 20000

resolvers docker
  nameserver dns 127.0.0.11:53
  hold valid 5s

defaults
  mode http
  option forwardfor
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout tunnel 1h
  retries 2
  option redispatch

frontend public
  bind :3000
  acl streaming path_beg /api/v1/streaming
  use_backend streaming if streaming
  default_backend api

${backend('api', 3000, '/health/ready', replicas('api'))}
${backend('streaming', 4000, '/api/v1/streaming/health', replicas('streaming'))}`;
}
