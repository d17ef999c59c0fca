// `npm run cluster` for real (`npm run test:cluster`; not part of `npm test`: it starts some thirty
// processes): the topology comes up, a post made through HAProxy reaches a follower's WebSocket and
// SSE streams through HAProxy and the follower's home timeline, `cluster:status` lists every
// process with its pid, and `cluster:stop` returns only when every process it started has exited.
// Ports: CLUSTER_TEST_PORT_BASE (default 22400) to +199; data under var/cluster-test.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../services/core/config.ts';
import { createCore, type Core } from '../../services/core/context.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { pipelines } from '../../pipelines/index.ts';
import { clusterServerEnv, clusterSettings } from '../../deploy/local/cluster/topology.ts';
import { hasLiveThreads } from '../../deploy/local/processes.ts';
import { redisClusterNodesEnv } from '../../deploy/local/redisCluster.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { client } from '../support/http.ts';
import { eventually } from '../support/eventually.ts';

const root = join(__dirname, '..', '..');
const base = Number(process.env.CLUSTER_TEST_PORT_BASE ?? 22400);
const clusterEnv = { CLUSTER_DIR: 'var/cluster-test', CLUSTER_PORT_BASE: String(base), CLUSTER_PORT: String(base) };
const settings = clusterSettings(root, clusterEnv);
const publicUrl = `http://127.0.0.1:${base}`;

function cli(command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'deploy/local/cluster/cli.ts'), command], {
      cwd: root,
      env: { ...process.env, ...clusterEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

function startedPids(): number[] {
  const dirs = [settings.runDir, join(settings.dir, 'redis', 'run')];
  return dirs.flatMap((dir) => {
    try {
      return readdirSync(dir)
        .filter((f) => f.endsWith('.pid'))
        .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { pid: number }).pid);
    } catch {
      return [];
    }
  });
}

let core: Core | null = null;
let stopped = false;

beforeAll(async () => {
  rmSync(settings.dir, { recursive: true, force: true });
  const start = await cli('start');
  if (start.code !== 0) throw new Error(`cluster start failed:\n${start.output}`);
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...clusterServerEnv(settings, { REDIS_CLUSTER_NODES: redisClusterNodesEnv(settings.redisPorts) }),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  delete env.REDIS_NAMESPACE;
  delete env.KAFKA_TOPIC_PREFIX;
  const config = loadConfig(env);
  const logger = createLogger('warn', 'cluster-test');
  core = await createCore(config, { sink: await createKafkaEventSink(config, logger), logger });
}, 600_000);

afterAll(async () => {
  await core?.close();
  if (!stopped) await cli('stop');
  // The directory stays (logs for a failure); the next run starts from an empty one.
}, 300_000);

test('every role and pipeline runs as its own process, and the status lists each with its pid', async () => {
  const status = await cli('status');
  expect(status.code).toBe(0);
  const lines = status.output.split('\n');
  for (const name of Object.keys(pipelines)) expect(lines.some((l) => l.startsWith(`pipeline-${name}-1 `))).toBe(true);
  for (const name of ['api-1', 'api-2', 'streaming-1', 'streaming-2', 'pipeline-fanout-2', 'pipeline-delivery-2']) {
    const line = lines.find((l) => l.startsWith(`${name} `));
    expect(line).toMatch(/ \d+ +ready/);
  }
  expect(lines.filter((l) => /^kafka-\d /.test(l) && / 3\/3 brokers/.test(l))).toHaveLength(3);
  expect(lines.filter((l) => /^redis-\d+ +redis primary/.test(l))).toHaveLength(3);
  expect(lines.filter((l) => /^redis-\d+ +redis replica/.test(l))).toHaveLength(3);
});

test('a post made through HAProxy reaches a follower over WebSocket and SSE and lands in its home timeline', async () => {
  if (!core) throw new Error('no core');
  const alice: TestUser = await createTestUser(core);
  const bob: TestUser = await createTestUser(core);
  const call = client(publicUrl);
  const follow = await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token);
  expect(follow.status).toBe(200);

  const socket = new WebSocket(`ws://127.0.0.1:${base}/api/v1/streaming?stream=user`, [bob.token]);
  const wsUpdates: string[] = [];
  socket.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data)) as { event?: string; payload?: string };
    if (m.event === 'update') wsUpdates.push((JSON.parse(m.payload ?? '{}') as { id: string }).id);
  });
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', () => reject(new Error('WebSocket through HAProxy refused')), { once: true });
  });
  const sse = new AbortController();
  const sseRes = await fetch(`${publicUrl}/api/v1/streaming/user`, {
    headers: { authorization: `Bearer ${bob.token}` },
    signal: sse.signal,
  });
  expect(sseRes.status).toBe(200);
  expect(sseRes.headers.get('content-type')).toContain('text/event-stream');
  let sseText = '';
  const reader = sseRes.body!.getReader();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      sseText += Buffer.from(value as Uint8Array).toString('utf8');
    }
  })();

  try {
    // Subscriptions start asynchronously: post until one arrives on both streams (each post counts).
    const posted: string[] = [];
    await eventually(
      async () => {
        const res = await call('POST', '/api/v1/statuses', alice.token, {
          status: `through the cluster ${Date.now()}`,
        });
        expect(res.status).toBe(200);
        posted.push(res.body.id as string);
        return eventually(
          async () => posted.some((id) => wsUpdates.includes(id) && sseText.includes(`"id":"${id}"`)),
          5_000,
          'the post on both streams',
        ).catch(() => false);
      },
      90_000,
      'a post on the follower’s WebSocket and SSE streams through HAProxy',
    );
    const seen = posted.find((id) => wsUpdates.includes(id)) as string;
    const home = await eventually(
      async () => {
        const res = await call('GET', '/api/v1/timelines/home', bob.token);
        return res.status === 200 && (res.body as Array<{ id: string }>).some((s) => s.id === seen) ? res : false;
      },
      30_000,
      'the post in the follower’s home timeline',
    );
    expect(home.status).toBe(200);
  } finally {
    socket.close();
    sse.abort();
  }
}, 180_000);

test('cluster:stop returns only when every process it started has exited', async () => {
  await core?.close();
  core = null;
  const pids = startedPids();
  expect(pids.length).toBe(settings.processes.length + settings.kafka.length + settings.redisPorts.length + 2);
  const stop = await cli('stop');
  stopped = true;
  expect(stop.code).toBe(0);
  expect(pids.filter((pid) => hasLiveThreads(pid))).toEqual([]);
}, 300_000);
