// Sign-up blocks (manage_blocks, as the admin API's routes): e-mail domain blocks (refuse, or
// send to the approval queue) and IP rules (sign-ups need approval, sign-ups blocked, no access),
// each created and removed through the same core operations as the API.
import type { FastifyReply } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import { collection } from '../../core/db/mongo.ts';
import { emailDomainBlocks, ipBlocks } from '../../core/model/signUpBlocks.ts';
import { createEmailDomainBlock, deleteEmailDomainBlock } from '../../core/moderation/emailBlocks.ts';
import { createIpBlock, deleteIpBlock } from '../../core/moderation/ipBlocks.ts';
import { formCheckbox } from '../forms.ts';

const LISTED = 500;
/** The expiry choices of Mastodon's IP rule form, in seconds (0: never). */
const EXPIRIES = [0, 86_400, 1_209_600, 2_419_200, 15_778_476, 31_556_952];

const blockPages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  async function emailPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const list = await collection(core.db, emailDomainBlocks)
      .find({ parentId: null })
      .sort({ domain: 1 })
      .limit(LISTED)
      .toArray();
    return view(
      reply,
      me,
      'email_domain_blocks',
      'admin.email_domain_blocks.title',
      { blocks: list, error },
      error ? 422 : 200,
    );
  }

  app.get('/admin/email_domain_blocks', async (request, reply) => {
    const me = await staff(request, reply, 'manage_blocks');
    if (!me) return reply;
    return emailPage(reply, me);
  });

  app.post('/admin/email_domain_blocks', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_blocks');
    if (!me) return reply;
    const error = await attempt(() =>
      createEmailDomainBlock(
        core,
        { domain: field(request, 'domain'), allowWithApproval: formCheckbox(request, 'allow_with_approval') },
        me.account._id,
      ),
    );
    if (error) return emailPage(reply, me, error);
    return reply.redirect('/admin/email_domain_blocks', 303);
  });

  app.post<{ Params: { id: string } }>(
    '/admin/email_domain_blocks/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_blocks');
      if (!me) return reply;
      const id = idParam(request);
      if (id === null) return reply.callNotFound();
      const error = await attempt(() => deleteEmailDomainBlock(core, id, me.account._id));
      if (error) return emailPage(reply, me, error);
      return reply.redirect('/admin/email_domain_blocks', 303);
    },
  );

  async function ipPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const list = await collection(core.db, ipBlocks).find({}).sort({ ip: 1 }).limit(LISTED).toArray();
    return view(
      reply,
      me,
      'ip_blocks',
      'admin.ip_blocks.title',
      { blocks: list, error, expiries: EXPIRIES },
      error ? 422 : 200,
    );
  }

  app.get('/admin/ip_blocks', async (request, reply) => {
    const me = await staff(request, reply, 'manage_blocks');
    if (!me) return reply;
    return ipPage(reply, me);
  });

  app.post('/admin/ip_blocks', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_blocks');
    if (!me) return reply;
    const expires = Number(field(request, 'expires_in'));
    const error = await attempt(() =>
      createIpBlock(
        core,
        {
          ip: field(request, 'ip'),
          severity: field(request, 'severity'),
          comment: field(request, 'comment'),
          expiresIn: EXPIRIES.includes(expires) ? expires : 0,
        },
        me.account._id,
      ),
    );
    if (error) return ipPage(reply, me, error);
    return reply.redirect('/admin/ip_blocks', 303);
  });

  app.post<{ Params: { id: string } }>(
    '/admin/ip_blocks/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_blocks');
      if (!me) return reply;
      const id = idParam(request);
      if (id === null) return reply.callNotFound();
      const error = await attempt(() => deleteIpBlock(core, id, me.account._id));
      if (error) return ipPage(reply, me, error);
      return reply.redirect('/admin/ip_blocks', 303);
    },
  );
};

export default blockPages;
