// Jest global setup for integration and e2e tests: the real servers must be up. Reuses whatever
// answers on the configured ports, otherwise starts them with deploy/local (first run installs);
// servers named by REDIS_URL / KAFKA_BROKERS / MONGO_URL are used as they are. Fast when all is up.
// The connection variables it settles on reach the test workers through process.env.
import { ensureLocalInfra, localInfraSettings } from '../../deploy/local/infra.ts';

export default async function globalSetup(_globalConfig: unknown, projectConfig: { rootDir: string }): Promise<void> {
  const settings = localInfraSettings(projectConfig.rootDir);
  const env = await ensureLocalInfra(settings, (m) => console.log(`[local-infra] ${m}`));
  for (const [name, value] of Object.entries(env)) process.env[name] ??= value;
}
