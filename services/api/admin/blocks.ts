// Admin sign-up and access rules: e-mail domain blocks, canonical e-mail blocks and IP blocks.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { canonicalEmailBlocks, emailDomainBlocks, ipBlocks } from '../../core/model/signUpBlocks.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import {
  createCanonicalEmailBlock,
  createEmailDomainBlock,
  deleteCanonicalEmailBlock,
  deleteEmailDomainBlock,
  getCanonicalEmailBlock,
  getEmailDomainBlock,
  matchingCanonicalEmailBlocks,
  renderCanonicalEmailBlock,
  renderEmailDomainBlock,
} from '../../core/moderation/emailBlocks.ts';
import {
  createIpBlock,
  deleteIpBlock,
  getIpBlock,
  renderIpBlock,
  updateIpBlock,
} from '../../core/moderation/ipBlocks.ts';
import { badRequest, validationFailed } from '../errors.ts';
import { BoolLike } from '../params.ts';
import { adminRecordRoutes } from './guard.ts';

const EmailDomainBody = Type.Object(
  { domain: Type.Optional(Type.String({ maxLength: 1_000 })), allow_with_approval: Type.Optional(BoolLike) },
  { additionalProperties: true },
);
const CanonicalBody = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 1_000 })),
    canonical_email_hash: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);
const IpBody = Type.Object(
  {
    ip: Type.Optional(Type.String({ maxLength: 100 })),
    severity: Type.Optional(Type.String({ maxLength: 50 })),
    comment: Type.Optional(Type.Union([Type.String({ maxLength: 5_000 }), Type.Null()])),
    expires_in: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 20 }), Type.Null()])),
  },
  { additionalProperties: true },
);

function expiresIn(value: number | string | null | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw validationFailed('Expires in is not a valid number of seconds');
  return n;
}

function ipBlockInput(body: Static<typeof IpBody>) {
  return {
    ip: body.ip,
    severity: body.severity,
    comment: body.comment ?? undefined,
    expiresIn: expiresIn(body.expires_in),
  };
}

const blocksRoutes: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const emailDomains = adminRecordRoutes(core, 'email_domain_blocks', 'manage_blocks', {
    list: [emailDomainBlocks, { parentId: null }, 'min_id'],
    get: getEmailDomainBlock,
    remove: deleteEmailDomainBlock,
    render: renderEmailDomainBlock,
  });
  app.get('/api/v1/admin/email_domain_blocks', emailDomains.list);
  app.get('/api/v1/admin/email_domain_blocks/:id', emailDomains.show);
  app.post(
    '/api/v1/admin/email_domain_blocks',
    emailDomains.create(EmailDomainBody, (body, actor) =>
      createEmailDomainBlock(
        core,
        { domain: body.domain, allowWithApproval: railsBoolean(body.allow_with_approval) },
        actor,
      ),
    ),
  );
  app.delete('/api/v1/admin/email_domain_blocks/:id', emailDomains.remove);

  const canonical = adminRecordRoutes(core, 'canonical_email_blocks', 'manage_blocks', {
    list: [canonicalEmailBlocks, {}, 'since_id'],
    get: getCanonicalEmailBlock,
    remove: deleteCanonicalEmailBlock,
    render: renderCanonicalEmailBlock,
  });
  app.get('/api/v1/admin/canonical_email_blocks', canonical.list);
  app.get('/api/v1/admin/canonical_email_blocks/:id', canonical.show);
  app.post(
    '/api/v1/admin/canonical_email_blocks/test',
    { schema: { body: Type.Optional(CanonicalBody) }, config: canonical.read },
    async (request) => {
      const email = request.body?.email;
      if (!email) throw badRequest('param is missing or the value is empty: email');
      return (await matchingCanonicalEmailBlocks(core, email)).map(renderCanonicalEmailBlock);
    },
  );
  app.post(
    '/api/v1/admin/canonical_email_blocks',
    canonical.create(CanonicalBody, (body, actor) =>
      createCanonicalEmailBlock(core, { email: body.email, canonicalEmailHash: body.canonical_email_hash }, actor),
    ),
  );
  app.delete('/api/v1/admin/canonical_email_blocks/:id', canonical.remove);

  const ips = adminRecordRoutes(core, 'ip_blocks', 'manage_blocks', {
    list: [ipBlocks, {}, 'since_id'],
    get: getIpBlock,
    remove: deleteIpBlock,
    render: renderIpBlock,
  });
  app.get('/api/v1/admin/ip_blocks', ips.list);
  app.get('/api/v1/admin/ip_blocks/:id', ips.show);
  app.post(
    '/api/v1/admin/ip_blocks',
    ips.create(IpBody, (body, actor) => createIpBlock(core, ipBlockInput(body), actor)),
  );
  app.put(
    '/api/v1/admin/ip_blocks/:id',
    ips.update(IpBody, (id, body, actor) => updateIpBlock(core, id, ipBlockInput(body), actor)),
  );
  app.delete('/api/v1/admin/ip_blocks/:id', ips.remove);
};

export default blocksRoutes;
