// Operations endpoints of the API role: readiness (`GET /health/ready`: MongoDB, Redis, Kafka) and
// Prometheus metrics (`GET /metrics`), plus the HTTP latency histogram every route feeds.
// (`GET /health`, Mastodon's liveness check, is in ../app.ts.) Registered without encapsulation so
// the latency hook sees every route. Operators should keep /metrics off the public internet.
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Histogram } from 'prom-client';
import { registry } from '../../core/metrics.ts';
import type { AreaOptions } from '../areas.ts';
import { createReadinessChecks } from './readiness.ts';

export const httpRequestSeconds = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency of the API, by route pattern, method and status code.',
  labelNames: ['route', 'method', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const Check = Type.Object({ status: Type.Union([Type.Literal('up'), Type.Literal('down')]), latencyMs: Type.Number() });
const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Object({ mongodb: Check, redis: Check, kafka: Check }),
});

const healthArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL, keeps the label set small; unmatched requests share one label.
    const route = request.routeOptions.url ?? 'unmatched';
    httpRequestSeconds.observe(
      { route, method: request.method, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  const readiness = createReadinessChecks(core);
  app.addHook('onClose', async () => readiness.close());

  app.get('/health/ready', { schema: { response: { 200: Readiness, 503: Readiness } } }, async (_request, reply) => {
    const checks = await readiness.check();
    const ready = Object.values(checks).every((c) => c.status === 'up');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
  });

  app.get('/metrics', async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });
};

export default fp(healthArea, { name: 'health' });
