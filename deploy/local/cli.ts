// node deploy/local/cli.ts install|start|stop|status|env|migrate-ferretdb
//   install  fetch/build what the servers need (apt packages, Kafka jars, the embedded MongoDB-wire
//            server) without starting
//   start    reuse or start Redis, Kafka and the MongoDB-wire server under ./var, wait until ready
//   stop     stop only the servers this setup started (pid files in var/run)
//   status   one line per server
//   env      print REDIS_URL / KAFKA_BROKERS / MONGO_URL for the managed servers
//   migrate-ferretdb  copy var/ferretdb (the previous default's data) into the embedded server
//   redis-cluster start|stop|status  a local Redis Cluster (3 primaries + 3 replicas) under
//            var/redis-cluster on REDIS_CLUSTER_PORT..+5 (default 7000); `start` prints REDIS_CLUSTER_NODES
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
import { formatRedisClusterStatus, redisClusterStatus, startRedisCluster, stopRedisCluster } from './redisCluster.ts';

const say = (message: string) => console.log(`[local-infra] ${message}`);

async function main(command: string | undefined, sub: string | undefined): Promise<void> {
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
    case 'redis-cluster': {
      const { dir, ports, busPortOffset } = settings.redisCluster;
      if (sub === 'start') {
        const { nodes } = await startRedisCluster({ dir, ports, busPortOffset, log: say });
        console.log(`REDIS_CLUSTER_NODES=${nodes.join(',')}`);
      } else if (sub === 'stop') await stopRedisCluster(dir, say);
      else if (sub === 'status')
        for (const line of formatRedisClusterStatus(await redisClusterStatus(dir, ports))) console.log(line);
      else {
        console.error('usage: node deploy/local/cli.ts redis-cluster start|stop|status');
        process.exitCode = 2;
      }
      return;
    }
    default:
      console.error(
        'usage: node deploy/local/cli.ts install|start|stop|status|env|migrate-ferretdb|redis-cluster start|stop|status',
      );
      process.exitCode = 2;
  }
}

main(process.argv[2], process.argv[3]).catch((err: unknown) => {
  console.error(`[local-infra] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
