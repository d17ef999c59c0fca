// Local infrastructure for `npm start` and the tests: reuse a server already answering on its port,
// otherwise install (once) and start it, wait until it is ready, and remember that we started it.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { localInfraEnv, localInfraSettings, type LocalInfraSettings, type ServerName } from './settings.ts';
import { serverSpecs, type ServerSpec } from './servers.ts';
import { ensureCacheDir, ensureDebianPackages, ensureKafka, ensureMongoServer } from './install.ts';
import { diedStarting, isRunning, readPidFile, sleep, startDetached, stopStarted, withLock } from './processes.ts';

export { localInfraSettings, localInfraEnv };
export type { LocalInfraSettings };

type Say = (message: string) => void;
const NAMES: ServerName[] = ['redis', 'kafka', 'mongo'];

/** Installs what the managed servers need (apt packages, Kafka jars, the embedded MongoDB-wire server). */
export function installLocalInfra(s: LocalInfraSettings, say: Say = console.log): void {
  ensureCacheDir(s);
  const commands: Record<string, string> = { ffmpeg: 'ffmpeg' };
  if (!s.external.redis) commands['redis-server'] = 'redis-server';
  ensureDebianPackages(commands, say);
  if (!s.external.kafka) ensureKafka(s, say);
  if (!s.external.mongo) ensureMongoServer(s, say);
}

/**
 * Makes every managed server ready; returns the connection variables for them (REDIS_URL,
 * KAFKA_BROKERS, MONGO_URL). Fast when everything already answers.
 */
export async function ensureLocalInfra(s: LocalInfraSettings, say: Say = console.log): Promise<Record<string, string>> {
  const specs = serverSpecs(s);
  const managed = NAMES.filter((n) => !s.external[n]);
  const states = await Promise.all(managed.map((n) => specs[n].probe()));
  if (states.every((st) => st === 'ready')) return localInfraEnv(s);

  await withLock(s.runDir, async () => {
    mkdirSync(s.logDir, { recursive: true });
    const down: ServerSpec[] = [];
    for (const n of managed) {
      const spec = specs[n];
      const state = await spec.probe();
      if (state === 'foreign') {
        throw new Error(
          `${s.host}:${spec.port} is taken by something that does not answer as ${spec.label}; choose another port (${portVariable(n)}) or name a server (${urlVariable(n)})`,
        );
      }
      if (state === 'closed') down.push(spec);
    }
    if (down.length === 0) return;
    installLocalInfra(
      {
        ...s,
        external: { ...s.external, ...Object.fromEntries(NAMES.map((n) => [n, !down.some((d) => d.name === n)])) },
      },
      say,
    );
    await Promise.all(down.map((spec) => start(s, spec, say)));
  });
  return localInfraEnv(s);
}

async function start(s: LocalInfraSettings, spec: ServerSpec, say: Say): Promise<void> {
  const previous = readPidFile(s.runDir, spec.name);
  // Ours, still starting (or hung): wait for it rather than starting a second one.
  let started = previous && isRunning(previous) ? previous : null;
  const logFile = join(s.logDir, `${spec.name}.log`);
  if (!started) {
    const { command, args } = spec.prepare();
    say(`starting ${spec.label} on ${s.host}:${spec.port} (log: ${logFile})`);
    started = startDetached({ name: spec.name, command, args, runDir: s.runDir, logFile, cwd: s.varDir });
  }
  const deadline = Date.now() + spec.startTimeoutS * 1000;
  for (;;) {
    if ((await spec.probe()) === 'ready') return say(`${spec.label} ready on ${s.host}:${spec.port}`);
    if (diedStarting(started))
      throw new Error(`${spec.label} exited during start-up; last lines of ${logFile}:\n${tail(logFile)}`);
    if (Date.now() > deadline) throw new Error(`${spec.label} not ready after ${spec.startTimeoutS}s; see ${logFile}`);
    await sleep(250);
  }
}

/** Stops the servers this setup started (pid files in var/run); leaves every other server alone. */
export async function stopLocalInfra(s: LocalInfraSettings, say: Say = console.log): Promise<void> {
  const specs = serverSpecs(s);
  await Promise.all(
    NAMES.map(async (n) => {
      if (await stopStarted(s.runDir, n)) say(`stopped ${specs[n].label}`);
    }),
  );
}

export async function localInfraStatus(s: LocalInfraSettings): Promise<string[]> {
  const specs = serverSpecs(s);
  return Promise.all(
    NAMES.map(async (n) => {
      if (s.external[n]) return `${specs[n].label}: external (${urlVariable(n)})`;
      const state = await specs[n].probe();
      const ours = readPidFile(s.runDir, n);
      const owner = ours && isRunning(ours) ? `started here, pid ${ours.pid}` : 'not started here';
      return `${specs[n].label}: ${state} on ${s.host}:${specs[n].port} (${owner})`;
    }),
  );
}

/** var/local-infra.env: read by `npm start` (node --env-file-if-exists) so non-default ports reach the server. */
export function writeLocalInfraEnvFile(s: LocalInfraSettings): Record<string, string> {
  const env = localInfraEnv(s);
  mkdirSync(s.varDir, { recursive: true });
  const text = Object.entries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
  const file = join(s.varDir, 'local-infra.env');
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text);
  return env;
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function portVariable(n: ServerName): string {
  return { redis: 'REDIS_PORT', kafka: 'KAFKA_PORT', mongo: 'MONGO_PORT' }[n];
}

function urlVariable(n: ServerName): string {
  return { redis: 'REDIS_URL', kafka: 'KAFKA_BROKERS', mongo: 'MONGO_URL' }[n];
}
