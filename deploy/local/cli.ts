// node deploy/local/cli.ts install|start|stop|status|env|migrate-ferretdb
//   install  fetch/build what the servers need (apt packages, Kafka jars, the embedded MongoDB-wire
//            server) without starting
//   start    reuse or start Redis, Kafka and the MongoDB-wire server under ./var, wait until ready
//   stop     stop only the servers this setup started (pid files in var/run)
//   status   one line per server
//   env      print REDIS_URL / KAFKA_BROKERS / MONGO_URL for the managed servers
//   migrate-ferretdb  copy var/ferretdb (the previous default's data) into the embedded server
import { join } from 'node:path';
import {
  ensureLocalInfra,
  installLocalInfra,
  writeLocalInfraEnvFile,
  localInfraEnv,
  localInfraSettings,
  localInfraStatus,
  stopLocalInfra,
} from './infra.ts';
import { migrateFerretdb } from './migrateFerretdb.ts';

const say = (message: string) => console.log(`[local-infra] ${message}`);

async function main(command: string | undefined): Promise<void> {
  const settings = localInfraSettings(join(import.meta.dirname, '..', '..'));
  switch (command) {
    case 'install':
      return installLocalInfra(settings, say);
    case 'start':
      await ensureLocalInfra(settings, say);
      writeLocalInfraEnvFile(settings);
      return;
    case 'stop':
      return stopLocalInfra(settings, say);
    case 'status':
      for (const line of await localInfraStatus(settings)) console.log(line);
      return;
    case 'env':
      for (const [k, v] of Object.entries(localInfraEnv(settings))) console.log(`${k}=${v}`);
      return;
    case 'migrate-ferretdb':
      await migrateFerretdb(settings, say);
      writeLocalInfraEnvFile(settings);
      return;
    default:
      console.error('usage: node deploy/local/cli.ts install|start|stop|status|env|migrate-ferretdb');
      process.exitCode = 2;
  }
}

main(process.argv[2]).catch((err: unknown) => {
  console.error(`[local-infra] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
