// Configuration for tests: the real servers started by deploy/local (or named by MONGO_URL,
// REDIS_URL, KAFKA_BROKERS), with a database and topic prefix of the test's own, so test files run
// in parallel without seeing each other's data.
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../services/core/config.ts';

export function uniqueName(prefix = 't'): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  const name = uniqueName();
  const mongoBase = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi';
  const mongo = new URL(mongoBase);
  mongo.pathname = `/${name}`;
  return loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    MONGO_URL: mongo.toString(),
    KAFKA_TOPIC_PREFIX: name,
    REDIS_NAMESPACE: name,
    KAFKA_PARTITIONS: '2',
    // Test files stop their consumers often, and a stop waits for the fetch in flight.
    KAFKA_FETCH_WAIT_MS: '1000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...overrides,
  });
}
