// One Fastify plugin per API area. Add an area by writing `services/api/<area>/index.ts` that
// exports a `FastifyPluginAsyncTypebox<AreaOptions>` and registering it here.
import type { FastifyInstance } from 'fastify';
import type { Core } from '../core/context.ts';

export interface AreaOptions {
  core: Core;
}

export async function registerAreas(_app: FastifyInstance, _core: Core): Promise<void> {
  // e.g. await app.register(accountsArea, { core });
}
