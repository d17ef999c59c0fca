// The Fastify app of the `api` role: cross-cutting plugins first (ids, CORS, parameters, errors,
// auth), then one plugin per API area (see ./areas.ts).
import Fastify, { LogController, type FastifyInstance, type FastifyError, type FastifyBaseLogger } from 'fastify';
import cors from '@fastify/cors';
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Core } from '../core/context.ts';
import paramsPlugin, { parseQueryString } from './plugins/params.ts';
import authPlugin from './plugins/auth.ts';
import { DomainError } from './errors.ts';
import { registerAreas } from './areas.ts';
import { liveness } from '../core/db/mongoContact.ts';
import { requestLineLogger } from '../core/logger.ts';

export type Api = FastifyInstance;

export async function buildApi(core: Core): Promise<FastifyInstance> {
  // Routes use the TypeBox type provider: their input types come from their schemas.
  const log = core.logger.child({ role: 'api' });
  const requestLines = requestLineLogger(log);
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    trustProxy: core.config.trustedProxies,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { querystringParser: (s: string) => parseQueryString(s), ignoreTrailingSlash: true },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true } },
    // One info line per request, as Mastodon's production log (below): Fastify's own pair cost
    // twice the bytes and a second serialisation on every request.
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    request.log.debug({ req: request }, 'incoming request');
  });
  app.addHook('onResponse', async (request, reply) => {
    requestLines.info(
      { reqId: request.id, req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    );
  });

  // Mastodon's Rack::Cors rules (config/initializers/cors.rb): the API, the token endpoints, discovery
  // and the ActivityPub documents are open to every origin; the HTML OAuth pages are not. The
  // delegator's answer replaces the plugin's options, so it carries the methods and exposed headers.
  const openCors = {
    origin: '*',
    methods: ['POST', 'PUT', 'DELETE', 'GET', 'PATCH', 'OPTIONS'],
    // Mastodon-Async-Refresh since Mastodon 4.6 (mastodon#38914), so a web client can poll a thread's
    // backfill.
    exposedHeaders: [
      'Link',
      'Mastodon-Async-Refresh',
      'X-RateLimit-Reset',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-Request-Id',
      'Idempotency-Key',
    ],
    credentials: false,
  };
  await app.register(cors, {
    hook: 'onRequest',
    delegator: (req, cb) => {
      const path = (req.url ?? '').split('?')[0];
      cb(null, isCrossOriginPath(path) ? openCors : { origin: false });
    },
  });

  // The one place errors become answers: every DomainError of core's catalogue by its status, body
  // and headers; Fastify's schema validation as Mastodon's 400; other 4xx as they are; the rest 500.
  app.setErrorHandler((err: FastifyError | DomainError, request, reply) => {
    if (err instanceof DomainError) {
      reply.headers(err.headers);
      return reply.code(err.statusCode).send(err.body);
    }
    if (err.validation) {
      return reply
        .code(400)
        .send({ error: `Invalid parameter: ${err.message.replace(/^(body|querystring|params)\/?/, '')}` });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ error: err.message });
    }
    request.log.error({ err }, 'request failed');
    return reply.code(500).send({ error: 'There was a temporary problem serving your request, please try again' });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'Record not found' }));

  await app.register(paramsPlugin);
  await app.register(authPlugin, { core });

  // Liveness: OK unless MongoDB has been out of reach for MONGO_LIVENESS_SECONDS (the orchestrator
  // then restarts the process).
  app.get('/health', async (_req, reply) => {
    const live = liveness(core.mongoContact);
    return reply.code(live.status).type('text/plain').send(live.body);
  });

  await registerAreas(app, core);
  return app;
}

const CROSS_ORIGIN_PATH =
  /^\/(api\/|oauth\/(token|revoke|userinfo)$|\.well-known\/|nodeinfo\/|users\/|@[^/]+(\/\d+)?$|actor(\/|$)|inbox$)/;

/** Paths a script on another origin may call (Mastodon's CORS resources). */
export function isCrossOriginPath(path: string): boolean {
  return CROSS_ORIGIN_PATH.test(path);
}
