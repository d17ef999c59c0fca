// Federation (manage_federation, as the admin API's domain block and allow routes): the known
// servers with their counts and delivery health (a breaker can be reset: "Mark as available"),
// domain blocks (create, edit, remove; the conflict message when a rule already covers the
// domain) and domain allows (limited federation mode).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { listResource, type AdminArea, type Staff } from './kit.ts';
import type { DomainBlockDoc } from '../../core/model/instanceDomainBlocks.ts';
import { listedDomainAllows, listedDomainBlocks } from '../../core/moderation/adminLists.ts';
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

const federationPages: AdminArea = (app, kit) => {
  const { core, asStaff, view, attempt, field, idParam } = kit;

  // ---- known servers ----

  app.get<{ Querystring: { by_domain?: string } }>(
    '/admin/instances',
    asStaff('manage_federation', async (request, reply, me) => {
      const search = String(request.query.by_domain ?? '').slice(0, 253);
      return view(reply, me, 'instances', 'admin.instances.title', {
        instances: await knownInstances(core, search),
        search,
      });
    }),
  );

  app.post<{ Params: { domain: string } }>(
    '/admin/instances/:domain/restart_delivery',
    { preHandler: app.csrfProtection },
    asStaff('manage_federation', async (request, reply) => {
      await markInstanceAvailable(core, request.params.domain);
      return reply.redirect('/admin/instances', 303);
    }),
  );

  // ---- domain blocks ----

  const blockInput = (request: FastifyRequest) => ({
    severity: field(request, 'severity') || 'silence',
    rejectMedia: formCheckbox(request, 'reject_media'),
    rejectReports: formCheckbox(request, 'reject_reports'),
    privateComment: field(request, 'private_comment'),
    publicComment: field(request, 'public_comment'),
    obfuscate: formCheckbox(request, 'obfuscate'),
  });

  listResource(app, kit, 'manage_federation', {
    paths: { list: '/admin/domain_blocks', remove: '/admin/domain_blocks/:id/delete' },
    template: 'domain_blocks',
    load: async () => ({
      blocks: await listedDomainBlocks(core, LISTED),
    }),
    create: (request, me) =>
      createDomainBlock(core, { domain: field(request, 'domain'), ...blockInput(request) }, me.account._id),
    remove: (id, me) => deleteDomainBlock(core, id, me.account._id),
  });

  async function editPage(reply: FastifyReply, me: Staff, block: DomainBlockDoc, error: string | null = null) {
    return view(reply, me, 'domain_block_edit', 'admin.domain_blocks.edit', { block, error }, error ? 422 : 200);
  }

  async function blockOf(request: FastifyRequest): Promise<DomainBlockDoc | null> {
    const id = idParam(request);
    return id === null ? null : getDomainBlock(core, id).catch(() => null);
  }

  app.get<{ Params: { id: string } }>(
    '/admin/domain_blocks/:id/edit',
    asStaff('manage_federation', async (request, reply, me) => {
      const block = await blockOf(request);
      if (!block) return reply.callNotFound();
      return editPage(reply, me, block);
    }),
  );

  app.post<{ Params: { id: string } }>(
    '/admin/domain_blocks/:id',
    { preHandler: app.csrfProtection },
    asStaff('manage_federation', async (request, reply, me) => {
      const block = await blockOf(request);
      if (!block) return reply.callNotFound();
      const error = await attempt(() => updateDomainBlock(core, block._id, blockInput(request), me.account._id));
      if (error) return editPage(reply, me, block, error);
      return reply.redirect('/admin/domain_blocks', 303);
    }),
  );

  // ---- domain allows ----

  listResource(app, kit, 'manage_federation', {
    paths: { list: '/admin/domain_allows', remove: '/admin/domain_allows/:id/delete' },
    template: 'domain_allows',
    load: async () => ({
      allows: await listedDomainAllows(core, LISTED),
      limited: core.config.limitedFederationMode,
    }),
    create: (request, me) => createDomainAllow(core, field(request, 'domain'), me.account._id),
    remove: (id, me) => deleteDomainAllow(core, id, me.account._id),
  });
};

export default federationPages;
