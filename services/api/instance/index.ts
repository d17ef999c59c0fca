// Instance area: /api/v1/instance, /api/v2/instance and /api/v1/custom_emojis — public, cacheable
// capability documents every client reads at start.
import { getFeedAccess } from '../../core/settings/feedAccess.ts';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { instanceStats } from '../../core/instance/stats.ts';
import { getRegistrationsMode } from '../../core/settings/settings.ts';
import {
  InstanceEntity,
  InstanceV1Entity,
  presentInstance,
  presentInstanceV1,
  type InstanceFacts,
} from '../../core/entities/instance.ts';

async function instanceFacts(core: Core): Promise<InstanceFacts> {
  const [mode, stats, feedAccess] = await Promise.all([
    getRegistrationsMode(core),
    instanceStats(core),
    getFeedAccess(core),
  ]);
  return {
    title: core.config.localDomain,
    description: '',
    contactEmail: '',
    contactAccount: null,
    registrations: { enabled: mode !== 'closed' && !core.config.omniauthOnly, approvalRequired: mode === 'approved' },
    stats,
    feedAccess,
  };
}

const instanceArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const publicCache = 'public, max-age=60';
  const open = { config: { auth: { user: 'none' as const } } };

  app.get('/api/v2/instance', { ...open, schema: { response: { 200: InstanceEntity } } }, async (_request, reply) => {
    reply.header('cache-control', publicCache);
    return presentInstance(core, await instanceFacts(core));
  });

  app.get('/api/v1/instance', { ...open, schema: { response: { 200: InstanceV1Entity } } }, async (_request, reply) => {
    reply.header('cache-control', publicCache);
    reply.header('deprecation', '@1667260800'); // deprecated since 4.0 (RFC 9745)
    return presentInstanceV1(core, await instanceFacts(core));
  });

  // No custom emojis can be uploaded yet; the list is empty but real, and cacheable.
  app.get(
    '/api/v1/custom_emojis',
    { ...open, schema: { response: { 200: Type.Array(Type.Object({}, { additionalProperties: true })) } } },
    async (_request, reply) => {
      reply.header('cache-control', publicCache);
      return [];
    },
  );

  app.get('/api/v1/instance/rules', open, async () => []);
};

export default instanceArea;
