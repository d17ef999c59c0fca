// Detached server processes with pid files under var/run: a server is stopped only when its pid
// file says this setup started it and that process still works under this var/ directory.
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export interface Started {
  pid: number;
  /** The process's working directory: under var/, so a recycled pid is never mistaken for ours. */
  cwd: string;
}

export function pidFile(runDir: string, name: string): string {
  return join(runDir, `${name}.pid`);
}

export function readPidFile(runDir: string, name: string): Started | null {
  const file = pidFile(runDir, name);
  if (!existsSync(file)) return null;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Started;
    return typeof parsed.pid === 'number' ? parsed : null;
  } catch {
    return null;
  }
}

export function isRunning(started: Started): boolean {
  try {
    // Servers may change directory below the one they were started in (redis-server --dir does).
    return readlinkSync(`/proc/${started.pid}/cwd`).startsWith(started.cwd);
  } catch {
    return false;
  }
}

export function startDetached(opts: {
  name: string;
  command: string;
  args: string[];
  runDir: string;
  logFile: string;
  cwd: string;
  env?: NodeJS.ProcessEnv;
}): Started {
  mkdirSync(opts.runDir, { recursive: true });
  const log = openSync(opts.logFile, 'a');
  try {
    const child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', log, log],
    });
    if (child.pid === undefined) throw new Error(`could not start ${opts.command}`);
    child.unref();
    const started = { pid: child.pid, cwd: opts.cwd };
    writeFileSync(pidFile(opts.runDir, opts.name), JSON.stringify(started));
    return started;
  } finally {
    closeSync(log);
  }
}

/**
 * Whether a process started moments ago has died. Not `!isRunning`: between the fork and the
 * child's chdir its cwd is still ours, not the one it was started in (a loaded machine made a
 * starting MongoDB-wire server look "exited" that way); only the absence of the process counts.
 */
export function diedStarting(started: Started): boolean {
  return !isRunning(started) && !hasLiveThreads(started.pid);
}

/**
 * Whether any thread of `pid` is still alive. Not the same as `isRunning`: a JVM's main thread
 * can exit before its other threads, after which /proc/<pid>/cwd no longer reads while the process
 * still holds its ports and data-directory lock (a Kafka "stopped" that way made the next start
 * fail with "Kafka exited during start-up").
 */
export function hasLiveThreads(pid: number): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return tasks.some((tid) => {
    try {
      // The state follows the command name in parentheses (which may itself hold spaces).
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  });
}

/**
 * SIGTERM, then SIGKILL after `graceMs`; returns once every thread of the process has exited.
 * Returns whether something was stopped.
 */
export async function stopStarted(runDir: string, name: string, graceMs = 30_000): Promise<boolean> {
  const started = readPidFile(runDir, name);
  if (!started || !isRunning(started)) {
    rmSync(pidFile(runDir, name), { force: true });
    return false;
  }
  await stopProcess(started.pid, graceMs);
  rmSync(pidFile(runDir, name), { force: true });
  return true;
}

/** SIGTERM to a process known to be ours, SIGKILL after `graceMs`, then wait until it has exited. */
export async function stopProcess(pid: number, graceMs = 30_000): Promise<void> {
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (hasLiveThreads(pid) && Date.now() < deadline) await sleep(200);
  if (hasLiveThreads(pid)) signal(pid, 'SIGKILL');
  while (hasLiveThreads(pid)) await sleep(50);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A lock file so two `start`s (say, two test runs) do not race to start the same servers. */
export async function withLock<T>(runDir: string, fn: () => Promise<T>, timeoutMs = 30 * 60_000): Promise<T> {
  mkdirSync(runDir, { recursive: true });
  const file = join(runDir, 'infra.lock');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8'));
      if (!Number.isInteger(holder) || !alive(holder)) {
        rmSync(file, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${file} (held by pid ${holder})`, { cause: err });
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
