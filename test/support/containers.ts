// Where a Docker engine is reachable (an operator's laptop, another CI), the tests can run on the
// same servers started as containers with testcontainers instead of deploy/local. The choice:
// TEST_INFRA=local|containers decides; otherwise servers named by MONGO_URL / REDIS_URL /
// KAFKA_BROKERS mean local (they are used as they are), and a reachable Docker engine means containers.
// This project's own machines have no Docker engine, so CI proves the deploy/local path.
import { existsSync } from 'node:fs';

export type InfraMode = 'local' | 'containers';

type Env = Record<string, string | undefined>;

export function chooseInfraMode(env: Env, dockerReachable: boolean): InfraMode {
  if (env.TEST_INFRA === 'local' || env.TEST_INFRA === 'containers') return env.TEST_INFRA;
  if (env.MONGO_URL || env.REDIS_URL || env.KAFKA_BROKERS) return 'local';
  return dockerReachable ? 'containers' : 'local';
}

/** True when a container runtime answers (checked only where one could be: DOCKER_HOST or the socket). */
export async function dockerReachable(env: Env = process.env): Promise<boolean> {
  if (!env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export interface RunningContainers {
  /** MONGO_URL, REDIS_URL and KAFKA_BROKERS for the tests. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** MongoDB 7, Redis 7 and a single-node KRaft Kafka 3.9 (Confluent 7.9), as containers. */
export async function startTestContainers(): Promise<RunningContainers> {
  const [{ MongoDBContainer }, { RedisContainer }, { KafkaContainer }] = await Promise.all([
    import('@testcontainers/mongodb'),
    import('@testcontainers/redis'),
    import('@testcontainers/kafka'),
  ]);
  const [mongo, redis, kafka] = await Promise.all([
    new MongoDBContainer('mongo:7').start(),
    new RedisContainer('redis:7').start(),
    new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start(),
  ]);
  return {
    env: {
      // The container runs a one-member replica set; connect to it directly.
      MONGO_URL: `${mongo.getConnectionString()}/fedi?directConnection=true`,
      REDIS_URL: `${redis.getConnectionUrl()}/0`,
      KAFKA_BROKERS: `${kafka.getHost()}:${kafka.getMappedPort(9093)}`,
    },
    async stop() {
      await Promise.all([mongo.stop(), redis.stop(), kafka.stop()]);
    },
  };
}
