// The one entry point: `node services/main.ts <role>` with role
//   api               the Fastify REST/ActivityPub server (PORT)
//   streaming         the uWebSockets.js streaming server (STREAMING_PORT)
//   pipeline <name>   one consumer group from pipelines/index.ts (/health, /health/ready, /metrics on PORT)
//   all               all of the above in one process (the default; `npm start`)
// SIGTERM/SIGINT drain: servers stop accepting and finish in-flight requests, pipelines commit
// what they finished, connections close, exit 0.
import type { AddressInfo } from 'node:net';
import { migrateKeyNames } from './core/db/keyMigration.ts';
import { ConfigError, loadConfig, loadEnvironment, type Config } from './core/config.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { createCore, type Core } from './core/context.ts';
import { collectProcessMetrics } from './core/metrics.ts';
import { createKafkaEventSink } from './core/events/kafkaSink.ts';
import { buildApi } from './api/app.ts';
import { startStreamingServer } from './streaming/server.ts';
import { startOpsServer } from './api/health/opsServer.ts';
import { pipelines, sharedConsumers } from '../pipelines/index.ts';

type Role = { kind: 'api' } | { kind: 'streaming' } | { kind: 'pipeline'; name: string } | { kind: 'all' };

interface Part {
  name: string;
  /** The port it listens on, when it is a server (PORT or STREAMING_PORT 0: the one it got). */
  port?: number;
  stop(): Promise<void>;
}

/**
 * What a started process reports: in its `fedisrv started` log line, and to a parent that spawned
 * it with an IPC channel (tests start children on port 0 and read the ports they got from this).
 */
export interface StartedMessage {
  type: 'started';
  role: string;
  port: number | null;
  streamingPort: number | null;
}

const USAGE = 'usage: node services/main.ts [api | streaming | pipeline <name> | all]';
const SHUTDOWN_LIMIT_MS = 30_000;

/** Start-up problems the operator must fix: one line on stderr, exit code 1. */
function die(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function parseRole(args: string[]): Role {
  const [kind = 'all', name, ...rest] = args;
  if (kind === 'pipeline') {
    if (!name || rest.length > 0) die(`${USAGE} (pipelines: ${Object.keys(pipelines).join(', ') || 'none'})`);
    if (!Object.hasOwn(pipelines, name))
      die(`Unknown pipeline "${name}"; known: ${Object.keys(pipelines).join(', ') || 'none'}`);
    return { kind, name };
  }
  if ((kind === 'api' || kind === 'streaming' || kind === 'all') && name === undefined) return { kind };
  die(USAGE);
}

function readConfig(): Config {
  try {
    return loadConfig(loadEnvironment());
  } catch (err) {
    if (err instanceof ConfigError) die(err.message);
    throw err;
  }
}

async function startParts(role: Role, core: Core, logger: Logger, parts: Part[]): Promise<void> {
  const { config } = core;
  if (role.kind === 'api' || role.kind === 'all') {
    const app = await buildApi(core);
    await app.listen({ host: config.bindHost, port: config.port });
    parts.push({
      name: 'api',
      port: (app.server.address() as AddressInfo).port,
      async stop() {
        // close() stops accepting and waits for in-flight requests; it closes the connections that
        // are idle at that moment only, so keep-alive connections still busy then are swept once idle.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
        try {
          await app.close();
        } finally {
          clearInterval(sweep);
        }
      },
    });
  }
  if (role.kind === 'streaming' || role.kind === 'all') {
    const streaming = await startStreamingServer({ host: config.bindHost, port: config.streamingPort, logger, core });
    parts.push({ name: 'streaming', port: streaming.port, stop: () => streaming.stop() });
  }
  if (role.kind === 'pipeline') {
    // No API in this process: serve /health, /health/ready and /metrics on PORT for probes and Prometheus.
    const ops = await startOpsServer(core, config.bindHost, config.port);
    parts.push({ name: 'ops', port: ops.port, stop: () => ops.stop() });
  }
  const names = role.kind === 'pipeline' ? [role.name] : role.kind === 'all' ? Object.keys(pipelines) : [];
  // One process runs them all: the pipelines that can, read through two shared consumers (ADR 0013).
  const shared = role.kind === 'all' ? sharedConsumers(core) : undefined;
  for (const name of names) {
    const running = await pipelines[name](core, shared);
    parts.push({ name: `pipeline ${name}`, stop: () => running.stop() });
  }
  if (shared) {
    await shared.prompt.start();
    await shared.background.start();
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const role = parseRole(process.argv.slice(2));
  const logger = createLogger(config.logLevel, 'fedisrv');
  collectProcessMetrics();

  const parts: Part[] = [];
  let core: Core | null = null;
  let stopping: Promise<void> | null = null;

  const shutdown = (signal: string) => {
    stopping ??= (async () => {
      logger.info({ signal }, 'shutting down');
      const limit = setTimeout(() => {
        logger.error('shutdown took too long, exiting');
        process.exit(1);
      }, SHUTDOWN_LIMIT_MS);
      limit.unref();
      let failed = false;
      // Servers and pipelines drain side by side; the shared connections close last.
      await Promise.all(
        parts.map((p) =>
          p.stop().then(
            () => logger.info({ part: p.name }, 'stopped part'),
            (err: unknown) => {
              failed = true;
              logger.error({ err, part: p.name }, 'stop failed');
            },
          ),
        ),
      );
      await core?.close().catch((err: unknown) => {
        failed = true;
        logger.error({ err }, 'closing connections failed');
      });
      logger.info('stopped');
      process.exit(failed ? 1 : 0);
    })();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  try {
    // Creating the sink also creates the event topics (configured partition count).
    const sink = await createKafkaEventSink(config, logger);
    core = await createCore(config, { sink, logger });
    // Once per Redis, in the background of whichever process gets there first.
    void migrateKeyNames(core.redis, config.redisNamespace, logger).catch((err: unknown) =>
      logger.warn({ err }, 'moving Redis keys to their hash-tagged names failed; the next start tries again'),
    );
    await startParts(role, core, logger, parts);
  } catch (err) {
    if (stopping) return;
    logger.error({ err }, 'start-up failed');
    die(`Start-up failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const portOf = (...names: string[]) => parts.find((p) => names.includes(p.name))?.port ?? null;
  const started: StartedMessage = {
    type: 'started',
    role: role.kind === 'pipeline' ? `pipeline ${role.name}` : role.kind,
    port: portOf('api', 'ops'),
    streamingPort: portOf('streaming'),
  };
  logger.info(
    { role: started.role, port: started.port, streamingPort: started.streamingPort },
    `fedisrv started: ${parts.map((p) => p.name).join(', ')}`,
  );
  // A parent that spawned this process with an IPC channel waits for this; the channel must not
  // keep the process alive once the servers stop.
  if (process.send) {
    process.send(started);
    process.channel?.unref();
  }
}

void main();
