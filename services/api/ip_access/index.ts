// IP rules with severity `no_access` (Mastodon's Rack::Attack blocklist): requests from those
// ranges get 403 on every route registered after this one (all API areas but health checks).
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { ipSeverities } from '../../core/moderation/ipBlocks.ts';
import { forbidden } from '../errors.ts';

const ipAccess: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.addHook('onRequest', async (request) => {
    if ((await ipSeverities(core, request.ip)).has('no_access')) throw forbidden('Blocked');
  });
};

export default fp(ipAccess, { name: 'ip-access' }) as unknown as FastifyPluginAsyncTypebox<AreaOptions>;
