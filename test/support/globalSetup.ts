// Jest global setup for integration and e2e tests: the real servers must be up. With a reachable
// Docker engine (or TEST_INFRA=containers) they start as containers (see containers.ts);
// otherwise deploy/local reuses whatever answers on the configured ports or starts the servers
// (first run installs); servers named by REDIS_URL / KAFKA_BROKERS / MONGO_URL are used as they are.
// The connection variables it settles on reach the test workers through process.env.
import { ensureLocalInfra, localInfraSettings } from '../../deploy/local/infra.ts';
import { chooseInfraMode, dockerReachable, startTestContainers, type RunningContainers } from './containers.ts';

declare global {
  var fedisrvContainers: RunningContainers | undefined;
}

export default async function globalSetup(_globalConfig: unknown, projectConfig: { rootDir: string }): Promise<void> {
  let env: Record<string, string>;
  if (chooseInfraMode(process.env, await dockerReachable()) === 'containers') {
    console.log('[test-infra] starting MongoDB, Redis and Kafka containers (testcontainers)');
    globalThis.fedisrvContainers = await startTestContainers();
    env = globalThis.fedisrvContainers.env;
  } else {
    env = await ensureLocalInfra(localInfraSettings(projectConfig.rootDir), (m) => console.log(`[local-infra] ${m}`));
  }
  for (const [name, value] of Object.entries(env)) process.env[name] ??= value;
}
