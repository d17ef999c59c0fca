// Federation (manage_federation, as the admin API's domain block and allow routes): the known
// servers with their counts and delivery health (a breaker can be reset: "Mark as available"),
// domain blocks (create, edit, remove; the conflict message when a rule already covers the
// domain) and domain allows (limited federation mode).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import { collection } from '../../core/db/mongo.ts';
import { domainAllows, instanceDomainBlocks, type DomainBlockDoc } from '../../core/model/instanceDomainBlocks.ts';
import {
  createDomainBlock,
  deleteDomainBlock,
  getDomainBlock,
  updateDomainBlock,
} from '../../core/moderation/domainBlocks.ts';
import { createDomainAllow, deleteDomainAllow } from '../../core/moderation/domainAllows.ts';
import { knownInstances, markInstanceAvailable } from '../../core/moderation/instances.ts';
import { formCheckbox } from '../forms.ts';

const LISTED = 500;

const federationPages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  // ---- known servers ----

  app.get<{ Querystring: { by_domain?: string } }>('/admin/instances', async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    const search = String(request.query.by_domain ?? '').slice(0, 253);
    return view(reply, me, 'instances', 'admin.instances.title', {
      instances: await knownInstances(core, search),
      search,
      now: Date.now(),
    });
  });

  app.post<{ Params: { domain: string } }>(
    '/admin/instances/:domain/restart_delivery',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_federation');
      if (!me) return reply;
      await markInstanceAvailable(core, request.params.domain);
      return reply.redirect('/admin/instances', 303);
    },
  );

  // ---- domain blocks ----

  async function blocksPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const list = await collection(core.db, instanceDomainBlocks).find({}).sort({ domain: 1 }).limit(LISTED).toArray();
    return view(reply, me, 'domain_blocks', 'admin.domain_blocks.title', { blocks: list, error }, error ? 422 : 200);
  }

  const blockInput = (request: FastifyRequest) => ({
    severity: field(request, 'severity') || 'silence',
    rejectMedia: formCheckbox(request, 'reject_media'),
    rejectReports: formCheckbox(request, 'reject_reports'),
    privateComment: field(request, 'private_comment'),
    publicComment: field(request, 'public_comment'),
    obfuscate: formCheckbox(request, 'obfuscate'),
  });

  app.get('/admin/domain_blocks', async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    return blocksPage(reply, me);
  });

  app.post('/admin/domain_blocks', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    const error = await attempt(() =>
      createDomainBlock(core, { domain: field(request, 'domain'), ...blockInput(request) }, me.account._id),
    );
    if (error) return blocksPage(reply, me, error);
    return reply.redirect('/admin/domain_blocks', 303);
  });

  async function editPage(reply: FastifyReply, me: Staff, block: DomainBlockDoc, error: string | null = null) {
    return view(reply, me, 'domain_block_edit', 'admin.domain_blocks.edit', { block, error }, error ? 422 : 200);
  }

  app.get<{ Params: { id: string } }>('/admin/domain_blocks/:id/edit', async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    const id = idParam(request);
    const block = id === null ? null : await getDomainBlock(core, id).catch(() => null);
    if (!block) return reply.callNotFound();
    return editPage(reply, me, block);
  });

  app.post<{ Params: { id: string } }>(
    '/admin/domain_blocks/:id',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_federation');
      if (!me) return reply;
      const id = idParam(request);
      const block = id === null ? null : await getDomainBlock(core, id).catch(() => null);
      if (!block) return reply.callNotFound();
      const error = await attempt(() => updateDomainBlock(core, block._id, blockInput(request), me.account._id));
      if (error) return editPage(reply, me, block, error);
      return reply.redirect('/admin/domain_blocks', 303);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/domain_blocks/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_federation');
      if (!me) return reply;
      const id = idParam(request);
      if (id === null) return reply.callNotFound();
      const error = await attempt(() => deleteDomainBlock(core, id, me.account._id));
      if (error) return blocksPage(reply, me, error);
      return reply.redirect('/admin/domain_blocks', 303);
    },
  );

  // ---- domain allows ----

  async function allowsPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const list = await collection(core.db, domainAllows).find({}).sort({ domain: 1 }).limit(LISTED).toArray();
    return view(
      reply,
      me,
      'domain_allows',
      'admin.domain_allows.title',
      { allows: list, error, limited: core.config.limitedFederationMode },
      error ? 422 : 200,
    );
  }

  app.get('/admin/domain_allows', async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    return allowsPage(reply, me);
  });

  app.post('/admin/domain_allows', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    const error = await attempt(() => createDomainAllow(core, field(request, 'domain'), me.account._id));
    if (error) return allowsPage(reply, me, error);
    return reply.redirect('/admin/domain_allows', 303);
  });

  app.post<{ Params: { id: string } }>(
    '/admin/domain_allows/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_federation');
      if (!me) return reply;
      const id = idParam(request);
      if (id === null) return reply.callNotFound();
      const error = await attempt(() => deleteDomainAllow(core, id, me.account._id));
      if (error) return allowsPage(reply, me, error);
      return reply.redirect('/admin/domain_allows', 303);
    },
  );
};

export default federationPages;
