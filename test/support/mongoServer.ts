// The embedded MongoDB-wire server (deploy/local/mongo) of a test's own, on a data directory of its
// own, for tests that kill and restart it: the first start binds port 0 and reads the port the
// server printed; a restart binds that port again, so clients find the same server on the same data.
import { ensureMongoServer } from '../../deploy/local/install.ts';
import { probeMongo } from '../../deploy/local/probes.ts';
import { serverSpecs } from '../../deploy/local/servers.ts';
import { localInfraSettings } from '../../deploy/local/settings.ts';
import { eventually } from './eventually.ts';
import { killChild, projectRoot, reportedPort, startProcess, type ChildRun } from './processes.ts';

export interface OwnMongoServer {
  /** The port it listens on (known once started). */
  readonly port: number;
  /** Its process id while it runs. */
  readonly pid: number | undefined;
  /** Starts it (again, on the same port and data) and waits until it answers. */
  start(): Promise<void>;
  /** Stops it (SIGKILL unless told) and waits for the process to be gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function ownMongoServer(dir: string): OwnMongoServer {
  const settings = { ...localInfraSettings(projectRoot), varDir: dir };
  let port = 0;
  let run: ChildRun | null = null;
  return {
    get port() {
      return port;
    },
    get pid() {
      return run?.child.pid;
    },
    async start() {
      ensureMongoServer(settings, () => undefined);
      const { command, args } = serverSpecs({ ...settings, ports: { ...settings.ports, mongo: port } }).mongo.prepare();
      run = startProcess(command, args);
      port = await reportedPort(run, /embedded MongoDB-wire server listening on \S+:(\d+)/);
      await eventually(
        async () => (await probeMongo('127.0.0.1', port)) === 'ready',
        120_000,
        'the MongoDB-wire server',
      );
    },
    async stop(signal = 'SIGKILL') {
      const child = run;
      run = null;
      if (!child || child.child.exitCode !== null) return;
      if (signal === 'SIGKILL') return killChild(child);
      child.child.kill(signal);
      await child.exit;
    },
  };
}
