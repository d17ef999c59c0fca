// Streaming requests that reach the API server: redirected to the streaming server when it lives at
// another address (STREAMING_API_BASE_URL, or the streaming port on a laptop), as Mastodon does;
// when it shares this address a proxy should have routed the request, so there is nothing here (404).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { streamingBaseUrl } from '../../core/entities/instance.ts';
import { notFound } from '../errors.ts';

const streamingRedirectArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  // ws(s) to http(s): clients follow the redirect with the same path and query.
  const base = streamingBaseUrl(core).replace(/^ws/, 'http').replace(/\/$/, '');
  const elsewhere = new URL(base).host !== core.config.webDomain;
  const redirect = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!elsewhere) throw notFound();
    return reply.redirect(`${base}${request.url}`, 302);
  };
  const open = { config: { auth: { user: 'none' as const } } };
  app.get('/api/v1/streaming', open, redirect);
  app.get('/api/v1/streaming/*', open, redirect);
};

export default streamingRedirectArea;
