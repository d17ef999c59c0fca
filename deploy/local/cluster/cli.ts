// node deploy/local/cluster/cli.ts start|stop|status   (npm run cluster, cluster:stop, cluster:status)
//   start   the production topology on this machine under var/cluster (CLUSTER_DIR), detached:
//           3 Kafka nodes (KRaft), a Redis Cluster (3 primaries, 3 replicas), the MongoDB-wire
//           server, 2 api and 2 streaming processes behind HAProxy on CLUSTER_PORT (default 3000),
//           one process per pipeline of pipelines/index.ts (two for fanout and delivery)
//   stop    stops what start started; returns when every one of those processes has exited
//   status  each process: role, pid, health, consumer lag
import { join } from 'node:path';
import { loadEnvironment } from '../../../services/core/config.ts';
import { clusterSettings } from './topology.ts';
import { clusterStatus, formatStatus, startCluster, stopCluster } from './cluster.ts';

const say = (message: string) => console.log(`[cluster] ${message}`);

async function main(command: string | undefined): Promise<void> {
  const root = join(import.meta.dirname, '..', '..', '..');
  const settings = clusterSettings(root, loadEnvironment(join(root, '.env')));
  switch (command) {
    case 'start':
      return startCluster(settings, say);
    case 'stop':
      return stopCluster(settings, say);
    case 'status':
      for (const line of formatStatus(await clusterStatus(settings))) console.log(line);
      return;
    default:
      console.error('usage: node deploy/local/cluster/cli.ts start|stop|status');
      process.exitCode = 2;
  }
}

main(process.argv[2]).catch((err: unknown) => {
  console.error(`[cluster] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
