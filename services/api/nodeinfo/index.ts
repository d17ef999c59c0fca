// NodeInfo 2.0: `/.well-known/nodeinfo` points at `/nodeinfo/2.0`, the document other servers and
// crawlers read to learn the software, protocols, usage and registration state (core/instance/nodeinfo.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { NODEINFO_CONTENT_TYPE, NODEINFO_PROFILE, nodeInfo } from '../../core/instance/nodeinfo.ts';

const nodeinfoArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const open = { config: { auth: { user: 'none' as const } } };

  app.get('/.well-known/nodeinfo', open, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=259200');
    return { links: [{ rel: NODEINFO_PROFILE, href: `${core.config.baseUrl}/nodeinfo/2.0` }] };
  });

  app.get('/nodeinfo/2.0', open, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=1800');
    reply.type(NODEINFO_CONTENT_TYPE);
    return JSON.stringify(await nodeInfo(core));
  });
};

export default nodeinfoArea;
