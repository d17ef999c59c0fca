// Real child processes for tests: the server (`services/main.ts <role>`) and helper scripts, run
// with the project's Node 24, on a test's own database, Redis namespace and Kafka topics.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../services/core/config.ts';
import type { StartedMessage } from '../../services/main.ts';

export const projectRoot = join(import.meta.dirname, '..', '..');
/** The project's Node 24 (the system node may be older). */
export const nodeBin = join(projectRoot, 'node_modules/.bin/node');
const execFileAsync = promisify(execFile);

/**
 * A TCP port nothing listens on right now (bound, then released), only where no server can report
 * the port it bound: Redis cluster nodes (`port 0` turns Redis's TCP listener off, and a node's
 * cluster bus port is derived from its port) and a Kafka broker address where nothing answers
 * (readiness). Every other server a test starts binds port 0 and reports the port it got
 * (startMain, reportedPort, test/support/listening.ts).
 * Chosen below the kernel's ephemeral range (32768 and up here): a port from `listen(0)` comes
 * from that range, and one of the many outgoing connections of tests running alongside (to Kafka,
 * MongoDB, Redis) could take it before the server binds it.
 */
export async function unusedPort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 22_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** The environment that points a server process at the servers and names of `config`. */
export function serverEnv(config: Config, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    MONGO_URL: config.mongoUrl,
    REDIS_URL: config.redisUrl,
    REDIS_CLUSTER_NODES: config.redisClusterNodes.join(','),
    REDIS_NAMESPACE: config.redisNamespace,
    KAFKA_BROKERS: config.kafkaBrokers.join(','),
    KAFKA_TOPIC_PREFIX: config.kafkaTopicPrefix,
    KAFKA_PARTITIONS: String(config.kafkaPartitions),
    KAFKA_FETCH_WAIT_MS: String(config.kafkaFetchWaitMs),
    LOG_LEVEL: config.logLevel,
    ...extra,
  };
}

export interface ChildRun {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything written to stdout and stderr so far. */
  output(): string;
}

/**
 * Starts `node <script> ...args` (script relative to the project root); `env` adds to process.env.
 * `ipc`: with a channel for the messages the child sends (process.send).
 */
export function startNode(script: string, args: string[], env: Record<string, string>, ipc = false): ChildRun {
  const nodeArgs = [join(projectRoot, script), ...args];
  return startProcess(nodeBin, nodeArgs, env, ipc);
}

/** Starts `command ...args` in the project root, its output kept; `env` adds to process.env. */
export function startProcess(command: string, args: string[], env: Record<string, string> = {}, ipc = false): ChildRun {
  const child = spawn(command, args, {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, exit, output: () => output };
}

/** A server process: what it reports once started (the ports it bound). */
export interface MainRun extends ChildRun {
  ready: Promise<StartedMessage>;
}

/**
 * Starts the server the way operators do: `services/main.ts <role...>`. Its servers bind port 0
 * (unless `env` names ports) and report the ports they got: `await started(run)`.
 */
export function startMain(role: string[], env: Record<string, string>): MainRun {
  const run = startNode('services/main.ts', role, { PORT: '0', STREAMING_PORT: '0', ...env }, true);
  const ready = new Promise<StartedMessage>((resolve) => {
    run.child.on('message', (m: StartedMessage) => {
      if (m.type === 'started') resolve(m);
    });
  });
  return { ...run, ready };
}

/** Resolves once the process has written `text` to its stdout. */
export function logged(run: ChildRun, text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!run.output().includes(text)) return;
      run.child.stdout?.off('data', check);
      resolve();
    };
    run.child.stdout?.on('data', check);
    check();
  });
}

/**
 * The port a child bound (it was given port 0) and printed: the first number `line` captures in
 * its output. Rejects (with its output) when the child exits first.
 */
export function reportedPort(run: ChildRun, line: RegExp): Promise<number> {
  const port = new Promise<number>((resolve) => {
    const check = () => {
      const m = line.exec(run.output());
      if (!m) return;
      run.child.stdout?.off('data', check);
      run.child.stderr?.off('data', check);
      resolve(Number(m[1]));
    };
    run.child.stdout?.on('data', check);
    run.child.stderr?.on('data', check);
    check();
  });
  return Promise.race([
    port,
    run.exit.then(({ code }) =>
      Promise.reject(new Error(`exited with ${code} before reporting its port:\n${run.output()}`)),
    ),
  ]);
}

/**
 * Resolves with the ports the server bound once it reports that it started; rejects (with its
 * output) when it exits first.
 */
export function started(run: MainRun): Promise<StartedMessage> {
  return Promise.race([
    run.ready,
    run.exit.then(({ code }) =>
      Promise.reject(new Error(`server exited with ${code} before starting:\n${run.output()}`)),
    ),
  ]);
}

/** Kills the process if it still runs (SIGKILL) and waits for it to be gone. */
export async function killChild(run: ChildRun): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  await run.exit;
}

/** Runs `node <script> ...args` to completion and parses the JSON line it printed last. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- what the script printed; tests check it field by field
export async function runNodeForJson(script: string, args: string[], timeoutMs = 60_000): Promise<any> {
  const { stdout } = await execFileAsync(nodeBin, [join(projectRoot, script), ...args], {
    cwd: projectRoot,
    timeout: timeoutMs,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}
