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
import {
  adminConfig,
  adminScopes,
  deleteHandler,
  idParam,
  IdParams,
  listHandler,
  moderator,
  PageQuery,
  showHandler,
} from './guard.ts';

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
  // E-mail domain blocks
  const ed = adminScopes('email_domain_blocks');
  const edRead = adminConfig(ed.read, 'manage_blocks');
  const edWrite = adminConfig(ed.write, 'manage_blocks');
  app.get(
    '/api/v1/admin/email_domain_blocks',
    { schema: { querystring: PageQuery }, config: edRead },
    listHandler(core, emailDomainBlocks, { parentId: null }, 'min_id', renderEmailDomainBlock),
  );
  app.get(
    '/api/v1/admin/email_domain_blocks/:id',
    { schema: { params: IdParams }, config: edRead },
    showHandler(core, getEmailDomainBlock, renderEmailDomainBlock),
  );
  app.post(
    '/api/v1/admin/email_domain_blocks',
    { schema: { body: Type.Optional(EmailDomainBody) }, config: edWrite },
    async (request) => {
      const body = request.body ?? {};
      const block = await createEmailDomainBlock(
        core,
        { domain: body.domain, allowWithApproval: railsBoolean(body.allow_with_approval) },
        moderator(request).account._id,
      );
      return renderEmailDomainBlock(block);
    },
  );
  app.delete(
    '/api/v1/admin/email_domain_blocks/:id',
    { schema: { params: IdParams }, config: edWrite },
    deleteHandler(core, deleteEmailDomainBlock),
  );

  // Canonical e-mail blocks
  const ce = adminScopes('canonical_email_blocks');
  const ceRead = adminConfig(ce.read, 'manage_blocks');
  const ceWrite = adminConfig(ce.write, 'manage_blocks');
  app.get(
    '/api/v1/admin/canonical_email_blocks',
    { schema: { querystring: PageQuery }, config: ceRead },
    listHandler(core, canonicalEmailBlocks, {}, 'since_id', renderCanonicalEmailBlock),
  );
  app.get(
    '/api/v1/admin/canonical_email_blocks/:id',
    { schema: { params: IdParams }, config: ceRead },
    showHandler(core, getCanonicalEmailBlock, renderCanonicalEmailBlock),
  );
  app.post(
    '/api/v1/admin/canonical_email_blocks/test',
    { schema: { body: Type.Optional(CanonicalBody) }, config: ceRead },
    async (request) => {
      const email = request.body?.email;
      if (!email) throw badRequest('param is missing or the value is empty: email');
      return (await matchingCanonicalEmailBlocks(core, email)).map(renderCanonicalEmailBlock);
    },
  );
  app.post(
    '/api/v1/admin/canonical_email_blocks',
    { schema: { body: Type.Optional(CanonicalBody) }, config: ceWrite },
    async (request) => {
      const body = request.body ?? {};
      const block = await createCanonicalEmailBlock(
        core,
        { email: body.email, canonicalEmailHash: body.canonical_email_hash },
        moderator(request).account._id,
      );
      return renderCanonicalEmailBlock(block);
    },
  );
  app.delete(
    '/api/v1/admin/canonical_email_blocks/:id',
    { schema: { params: IdParams }, config: ceWrite },
    deleteHandler(core, deleteCanonicalEmailBlock),
  );

  // IP blocks
  const ip = adminScopes('ip_blocks');
  const ipRead = adminConfig(ip.read, 'manage_blocks');
  const ipWrite = adminConfig(ip.write, 'manage_blocks');
  app.get(
    '/api/v1/admin/ip_blocks',
    { schema: { querystring: PageQuery }, config: ipRead },
    listHandler(core, ipBlocks, {}, 'since_id', renderIpBlock),
  );
  app.get(
    '/api/v1/admin/ip_blocks/:id',
    { schema: { params: IdParams }, config: ipRead },
    showHandler(core, getIpBlock, renderIpBlock),
  );
  app.post('/api/v1/admin/ip_blocks', { schema: { body: Type.Optional(IpBody) }, config: ipWrite }, async (request) => {
    const body = request.body ?? {};
    const block = await createIpBlock(core, ipBlockInput(body), moderator(request).account._id);
    return renderIpBlock(block);
  });
  app.put(
    '/api/v1/admin/ip_blocks/:id',
    { schema: { params: IdParams, body: Type.Optional(IpBody) }, config: ipWrite },
    async (request) => {
      const body = request.body ?? {};
      const id = idParam(request.params.id);
      const block = await updateIpBlock(core, id, ipBlockInput(body), moderator(request).account._id);
      return renderIpBlock(block);
    },
  );
  app.delete(
    '/api/v1/admin/ip_blocks/:id',
    { schema: { params: IdParams }, config: ipWrite },
    deleteHandler(core, deleteIpBlock),
  );
};

export default blocksRoutes;
