// Starts the server the way the README does (`services/main.ts all`, as `npm start` runs it after
// starting the infrastructure) in a child process with a test database and topic prefix, then checks
// the health endpoints of both servers and that SIGTERM drains and exits 0.
import { Kafka, logLevel } from 'kafkajs';
import { testConfig } from '../support/config.ts';
import { removeTestData } from '../support/core.ts';
import { killChild, logged, serverEnv, startMain, started, type MainRun } from '../support/processes.ts';

// Debug: the drain test waits for the `incoming request` line (info logs a request once, when answered).
const config = testConfig({ KAFKA_PARTITIONS: '1', LOG_LEVEL: 'debug' });

// Every test here shares one database, Redis namespace and topic prefix; all are removed at the end.
afterAll(() => removeTestData(config));

describe('smoke: services/main.ts all', () => {
  let server: MainRun | null = null;
  let port = 0;
  let streamingPort = 0;

  beforeAll(async () => {
    // Both servers bind port 0 and report the ports they got.
    server = startMain(['all'], serverEnv(config));
    const ports = await started(server);
    port = ports.port ?? 0;
    streamingPort = ports.streamingPort ?? 0;
    expect(port).toBeGreaterThan(0);
    expect(streamingPort).toBeGreaterThan(0);
  });

  afterAll(async () => {
    if (server) await killChild(server);
  });

  it('answers OK on /health', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });

  it('answers OK on the streaming health check (uWebSockets.js)', async () => {
    const res = await fetch(`http://127.0.0.1:${streamingPort}/api/v1/streaming/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });

  it('reports MongoDB, Redis and Kafka ready', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ready',
      checks: {
        mongodb: { status: 'up', latencyMs: expect.any(Number) },
        redis: { status: 'up', latencyMs: expect.any(Number) },
        kafka: { status: 'up', latencyMs: expect.any(Number) },
      },
    });
  });

  it('serves metrics on the streaming port too', async () => {
    const res = await fetch(`http://127.0.0.1:${streamingPort}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('process_cpu_seconds_total');
  });

  it('exposes Prometheus metrics with HTTP latency by route', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(
      /http_request_duration_seconds_count\{route="\/health",method="GET",status_code="200"\} [1-9]/,
    );
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('created the event topics at start-up', async () => {
    const admin = new Kafka({ brokers: config.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${config.kafkaTopicPrefix}.`));
      expect(topics.length).toBeGreaterThan(0);
    } finally {
      await admin.disconnect();
    }
  });

  it('drains on SIGTERM and exits 0', async () => {
    const s = server!;
    // A request the server has accepted before the signal still gets its answer.
    const inFlight = fetch(`http://127.0.0.1:${port}/health/ready`, { headers: { 'x-request-id': 'smoke-in-flight' } });
    await logged(s, '"reqId":"smoke-in-flight"');
    s.child.kill('SIGTERM');
    expect((await inFlight).status).toBe(200);
    const exit = await s.exit;
    if (exit.code !== 0) console.log(s.output());
    expect(exit).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain('"msg":"stopped"');
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });
});

describe('smoke: services/main.ts pipeline outbox', () => {
  it('runs one pipeline with /health and /metrics on PORT, and drains on SIGTERM', async () => {
    const s = startMain(['pipeline', 'outbox'], serverEnv(config));
    try {
      const { port, streamingPort } = await started(s);
      expect(streamingPort).toBeNull();
      expect(await (await fetch(`http://127.0.0.1:${port}/health`)).text()).toBe('OK');
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('outbox_relayed_total');
      s.child.kill('SIGTERM');
      expect(await s.exit).toEqual({ code: 0, signal: null });
    } finally {
      await killChild(s);
    }
  });
});

describe('smoke: invalid configuration', () => {
  it('stops start-up with one line naming the variable and exit code 1', async () => {
    const s = startMain(['all'], { PORT: 'not-a-port' });
    const { code } = await s.exit;
    expect(code).toBe(1);
    expect(s.output().trim().split('\n')).toEqual([
      'Invalid configuration: PORT must be a whole number, got "not-a-port"',
    ]);
  });
});
