// `npm run bench` runs every benchmark in test/bench, `npm run bench -- NAME [args]` one of them
// (test/bench/NAME.ts). Each is its own process on this Node, after the local servers are up, and
// ends with a line per target: `NAME: measured (target T) met|missed`. Never part of `npm test`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const { ensureLocalInfra, localInfraSettings } = await import('../../deploy/local/infra.ts');
const { loadEnvironment } = await import('../../services/core/config.ts');
const { printMachineReference } = await import('./lib.ts');

const root = join(import.meta.dirname, '..', '..');
const all = readdirSync(import.meta.dirname)
  // The rest are shared modules: helpers, the data set, the timelines benchmark's load worker, the
  // api benchmark's GC log preloaded into its server.
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts', 'dataSet.ts', 'openLoop.ts', 'nodeGcLog.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (name && !all.includes(name)) {
  console.error(`no benchmark "${name}"; there are: ${all.join(', ')}`);
  process.exit(2);
}
// Benchmarks that start servers of their own (api: `npm start`'s whole tree under var/bench-api).
// The local servers are started only for the others: beside api they would run unused, and a
// freshly started Kafka took 0.16 of a core through its posting phase (docs/benchmarks.md).
const OWN_SERVERS = new Set(['api']);
let infraEnv: Record<string, string> | null = null;
const localServers = async () =>
  (infraEnv ??= await ensureLocalInfra(localInfraSettings(root, loadEnvironment(join(root, '.env'))), (m) =>
    console.log(`[local-infra] ${m}`),
  ));
let failed = false;
for (const bench of name ? [name] : all) {
  const env = OWN_SERVERS.has(bench) ? {} : await localServers();
  console.log(`\n== ${bench}`);
  // Before and after: the machine's speed changes by the hour (lib.ts, machineReference).
  await printMachineReference('before');
  const r = spawnSync(process.execPath, [join(import.meta.dirname, `${bench}.ts`), ...(name ? args : [])], {
    stdio: 'inherit',
    env: { ...env, ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  await printMachineReference('after');
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
