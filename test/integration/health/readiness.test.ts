// Readiness and metrics of the API role against the real servers: ready when MongoDB, Redis and
// Kafka answer; 503 naming Kafka when its broker is unreachable.
import type { Core } from '../../../services/core/context.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { startTestServer, type TestServer } from '../../support/fixtures.ts';
import { unusedPort } from '../../support/processes.ts';

describe('GET /health/ready and /metrics', () => {
  const cores: Core[] = [];
  const servers: TestServer[] = [];

  /** GET on a fresh API server (real HTTP); `brokers` is where its readiness check looks for Kafka. */
  async function api(brokers?: string[]): Promise<(path: string) => Promise<Response>> {
    const { core } = await createTestCore();
    cores.push(core);
    // The readiness check has a Kafka client of its own, built from the configuration it is given.
    const server = await startTestServer(
      brokers ? { ...core, config: { ...core.config, kafkaBrokers: brokers } } : core,
    );
    servers.push(server);
    return (path) => fetch(`${server.url}${path}`);
  }

  afterAll(async () => {
    for (const server of servers) await server.close();
    for (const core of cores) await closeTestCore(core);
  });

  it('is ready when MongoDB, Redis and Kafka answer', async () => {
    const get = await api();
    const res = await get('/health/ready');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ready',
      checks: { mongodb: { status: 'up' }, redis: { status: 'up' }, kafka: { status: 'up' } },
    });
  });

  it('answers 503 and names Kafka when the broker is unreachable', async () => {
    const get = await api([`127.0.0.1:${await unusedPort()}`]);
    const res = await get('/health/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: 'unavailable',
      checks: { mongodb: { status: 'up' }, redis: { status: 'up' }, kafka: { status: 'down' } },
    });
    // Liveness is independent of the dependencies.
    expect(await (await get('/health')).text()).toBe('OK');
  });

  it('stays ready when the first of several brokers is down (the next check starts from another)', async () => {
    const { core } = await createTestCore();
    cores.push(core);
    const get = await api([`127.0.0.1:${await unusedPort()}`, ...core.config.kafkaBrokers]);
    // The first check may find the dead broker first; from then on the checks start from the live one.
    await get('/health/ready');
    for (let i = 0; i < 3; i++) {
      const res = await get('/health/ready');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ checks: { kafka: { status: 'up' } } });
    }
  });

  it('records request latency by route pattern, not by URL', async () => {
    const get = await api();
    await get('/health');
    await get('/no/such/path/123');
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const body = await res.text();
    expect(body).toMatch(/http_request_duration_seconds_count\{route="\/health",method="GET",status_code="200"\} \d+/);
    expect(body).toMatch(/http_request_duration_seconds_count\{route="unmatched",method="GET",status_code="404"\} \d+/);
    expect(body).not.toContain('/no/such/path');
  });
});
