// Stopping a local server waits until every thread of it has exited. A JVM (Kafka) can end its
// main thread before the others while shutting down: /proc/<pid>/cwd no longer reads then, yet the
// process still holds its ports and data-directory lock. Simulated with Python: on SIGTERM the
// main thread starts a "shutdown" thread and exits (pthread_exit); the process lives on for 1.5 s.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../support/eventually.ts';
import {
  diedStarting,
  hasLiveThreads,
  isRunning,
  readPidFile,
  startDetached,
  stopStarted,
} from '../../../deploy/local/processes.ts';

const SCRIPT = `
import ctypes, signal, threading, time
def term(*_):
    threading.Thread(target=lambda: time.sleep(1.5)).start()
    ctypes.CDLL(None).pthread_exit(None)
signal.signal(signal.SIGTERM, term)
print('ready', flush=True)
while True:
    time.sleep(0.05)
`;

/** The script printed "ready": its signal handling is in place. */
async function untilReady(log: string): Promise<void> {
  await eventually(async () => existsSync(log) && readFileSync(log, 'utf8').includes('ready'), 20_000, 'the script');
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fedisrv-stop-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('stopStarted returns only after the last thread exited, not when the main thread did', async () => {
  const started = startDetached({
    name: 'slow',
    command: 'python3',
    args: ['-c', SCRIPT],
    runDir: join(dir, 'run'),
    logFile: join(dir, 'slow.log'),
    cwd: dir,
  });
  await untilReady(join(dir, 'slow.log'));
  const begun = Date.now();
  let mainThreadGoneWhileAlive = false;
  const watch = setInterval(() => {
    if (!isRunning(started) && hasLiveThreads(started.pid)) mainThreadGoneWhileAlive = true;
  }, 20);
  try {
    expect(await stopStarted(join(dir, 'run'), 'slow', 10_000)).toBe(true);
  } finally {
    clearInterval(watch);
  }
  expect(mainThreadGoneWhileAlive).toBe(true);
  expect(Date.now() - begun).toBeGreaterThanOrEqual(1400);
  expect(hasLiveThreads(started.pid)).toBe(false);
  expect(readPidFile(join(dir, 'run'), 'slow')).toBeNull();
});

test('a process that ignores SIGTERM is killed after the grace period, and waited for', async () => {
  const started = startDetached({
    name: 'stubborn',
    command: 'python3',
    args: [
      '-c',
      'import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint("ready", flush=True)\nwhile True: time.sleep(0.05)',
    ],
    runDir: join(dir, 'run'),
    logFile: join(dir, 'stubborn.log'),
    cwd: dir,
  });
  await untilReady(join(dir, 'stubborn.log'));
  expect(await stopStarted(join(dir, 'run'), 'stubborn', 500)).toBe(true);
  expect(hasLiveThreads(started.pid)).toBe(false);
});

test('a starting process is not taken for dead; one that exits is', async () => {
  const start = (name: string, code: string) =>
    startDetached({
      name,
      command: 'python3',
      args: ['-c', code],
      runDir: join(dir, 'run'),
      logFile: join(dir, `${name}.log`),
      cwd: join(dir, name),
    });
  mkdirSync(join(dir, 'alive'));
  mkdirSync(join(dir, 'brief'));
  const alive = start('alive', 'import time\ntime.sleep(30)');
  // From the first moment on (before, between fork and chdir, its cwd is still ours).
  for (let i = 0; i < 20; i++) {
    expect(diedStarting(alive)).toBe(false);
    await new Promise((r) => setTimeout(r, 10));
  }
  const brief = start('brief', 'raise SystemExit(3)');
  await eventually(async () => diedStarting(brief), 10_000, 'the brief process gone');
  expect(await stopStarted(join(dir, 'run'), 'alive', 5_000)).toBe(true);
  expect(diedStarting(alive)).toBe(true);
});
