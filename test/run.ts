// `npm test`: makes sure the local servers are up (deploy/local, unless REDIS_URL / KAFKA_BROKERS /
// MONGO_URL name others), runs jest, prints jest's summary and then one plain line
// `N passed, N failed, N skipped`, and exits non-zero on any failure. Extra arguments go to jest.
// Redis Cluster: REDIS_CLUSTER_NODES names one to test against; TEST_REDIS_CLUSTER=1 starts (or
// reuses) the local one of deploy/local/redisCluster.ts (var/redis-cluster, REDIS_CLUSTER_PORT..+5).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

if (Number(process.versions.node.split('.')[0]) < 24) {
  console.error(`npm test needs Node 24 (found ${process.version}); run it through npm after \`npm ci\`.`);
  process.exit(1);
}

const { ensureLocalInfra, localInfraSettings } = await import('../deploy/local/infra.ts');
const { loadEnvironment } = await import('../services/core/config.ts');

interface JestResults {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numRuntimeErrorTestSuites: number;
  success: boolean;
}

const root = join(import.meta.dirname, '..');
const environment = loadEnvironment(join(root, '.env'));
const settings = localInfraSettings(root, environment);
// Servers named in .env reach the tests too (the test configuration reads only process.env).
const namedServers = Object.fromEntries(
  ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'MONGO_URL']
    .filter((k) => environment[k])
    .map((k) => [k, environment[k] as string]),
);
if (environment.TEST_REDIS_CLUSTER === '1' && !environment.REDIS_CLUSTER_NODES) {
  const { startRedisCluster } = await import('../deploy/local/redisCluster.ts');
  const { dir, ports, busPortOffset } = settings.redisCluster;
  const { nodes } = await startRedisCluster({
    dir,
    ports,
    busPortOffset,
    log: (m) => console.log(`[local-infra] ${m}`),
  }).catch((err: unknown) => {
    console.error(`[local-infra] ${err instanceof Error ? err.message : String(err)}`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  });
  namedServers.REDIS_CLUSTER_NODES = nodes.join(',');
}
if (namedServers.REDIS_CLUSTER_NODES) console.log(`[local-infra] Redis Cluster: ${namedServers.REDIS_CLUSTER_NODES}`);
// With a reachable Docker engine the jest global setup starts containers instead (test/support/containers.ts).
const { chooseInfraMode, dockerReachable } = await import('./support/containers.ts');
const useContainers = chooseInfraMode({ ...environment, ...process.env }, await dockerReachable()) === 'containers';
const infraEnv = useContainers
  ? {}
  : await ensureLocalInfra(settings, (m) => console.log(`[local-infra] ${m}`)).catch((err: unknown) => {
      console.error(`[local-infra] ${err instanceof Error ? err.message : String(err)}`);
      console.log('0 passed, 1 failed');
      process.exit(1);
    });

mkdirSync(join(root, 'var'), { recursive: true });
// One file per run: several runs may share a checkout.
const resultsFile = join(root, 'var', `jest-results-${process.pid}.json`);
rmSync(resultsFile, { force: true });

const jest = spawnSync(
  process.execPath,
  [
    join(root, 'node_modules/jest/bin/jest.js'),
    '--maxWorkers=2',
    '--json',
    `--outputFile=${resultsFile}`,
    ...process.argv.slice(2),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...infraEnv,
      ...namedServers,
      ...process.env,
    },
  },
);

// A test file that cannot even run has no failed tests of its own; it counts as one failure.
const results = existsSync(resultsFile) ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as JestResults) : null;
rmSync(resultsFile, { force: true });
const passed = results?.numPassedTests ?? 0;
let failed = results ? results.numFailedTests + results.numRuntimeErrorTestSuites : 1;
const ok = jest.status === 0 && failed === 0;
if (!ok && failed === 0) failed = 1;
const skipped = (results?.numPendingTests ?? 0) + (results?.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok ? 0 : 1);
