// Admin domain blocks and domain allows (federation rules; services/core/moderation/domainBlocks.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { domainAllows, instanceDomainBlocks } from '../../core/model/instanceDomainBlocks.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import {
  createDomainBlock,
  deleteDomainBlock,
  getDomainBlock,
  renderAdminDomainBlock,
  updateDomainBlock,
} from '../../core/moderation/domainBlocks.ts';
import {
  createDomainAllow,
  deleteDomainAllow,
  getDomainAllow,
  renderAdminDomainAllow,
} from '../../core/moderation/domainAllows.ts';
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

const BLOCKS = adminScopes('domain_blocks');
const ALLOWS = adminScopes('domain_allows');

const OptionalText = Type.Optional(Type.Union([Type.String({ maxLength: 5_000 }), Type.Null()]));
const BlockBody = Type.Object(
  {
    domain: Type.Optional(Type.String({ maxLength: 1_000 })),
    severity: Type.Optional(Type.String({ maxLength: 30 })),
    reject_media: Type.Optional(BoolLike),
    reject_reports: Type.Optional(BoolLike),
    obfuscate: Type.Optional(BoolLike),
    private_comment: OptionalText,
    public_comment: OptionalText,
  },
  { additionalProperties: true },
);
const AllowBody = Type.Object(
  { domain: Type.Optional(Type.String({ maxLength: 1_000 })) },
  { additionalProperties: true },
);

function blockInput(body: Partial<Record<string, unknown>>) {
  return {
    severity: typeof body.severity === 'string' && body.severity !== '' ? body.severity : undefined,
    rejectMedia: railsBoolean(body.reject_media),
    rejectReports: railsBoolean(body.reject_reports),
    obfuscate: railsBoolean(body.obfuscate),
    privateComment: body.private_comment as string | null | undefined,
    publicComment: body.public_comment as string | null | undefined,
  };
}

const federationRoutes: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const readBlocks = adminConfig(BLOCKS.read, 'manage_federation');
  const writeBlocks = adminConfig(BLOCKS.write, 'manage_federation');

  app.get(
    '/api/v1/admin/domain_blocks',
    { schema: { querystring: PageQuery }, config: readBlocks },
    listHandler(core, instanceDomainBlocks, {}, 'since_id', renderAdminDomainBlock),
  );
  app.get(
    '/api/v1/admin/domain_blocks/:id',
    { schema: { params: IdParams }, config: readBlocks },
    showHandler(core, getDomainBlock, renderAdminDomainBlock),
  );
  app.post(
    '/api/v1/admin/domain_blocks',
    { schema: { body: Type.Optional(BlockBody) }, config: writeBlocks },
    async (request) => {
      const body = request.body ?? {};
      const block = await createDomainBlock(
        core,
        { domain: body.domain ?? '', ...blockInput(body) },
        moderator(request).account._id,
      );
      return renderAdminDomainBlock(block);
    },
  );
  app.put(
    '/api/v1/admin/domain_blocks/:id',
    { schema: { params: IdParams, body: Type.Optional(BlockBody) }, config: writeBlocks },
    async (request) => {
      const id = idParam(request.params.id);
      const block = await updateDomainBlock(core, id, blockInput(request.body ?? {}), moderator(request).account._id);
      return renderAdminDomainBlock(block);
    },
  );
  app.delete(
    '/api/v1/admin/domain_blocks/:id',
    { schema: { params: IdParams }, config: writeBlocks },
    deleteHandler(core, deleteDomainBlock),
  );

  const readAllows = adminConfig(ALLOWS.read, 'manage_federation');
  const writeAllows = adminConfig(ALLOWS.write, 'manage_federation');
  app.get(
    '/api/v1/admin/domain_allows',
    { schema: { querystring: PageQuery }, config: readAllows },
    listHandler(core, domainAllows, {}, 'since_id', renderAdminDomainAllow),
  );
  app.get(
    '/api/v1/admin/domain_allows/:id',
    { schema: { params: IdParams }, config: readAllows },
    showHandler(core, getDomainAllow, renderAdminDomainAllow),
  );
  app.post(
    '/api/v1/admin/domain_allows',
    { schema: { body: Type.Optional(AllowBody) }, config: writeAllows },
    async (request) =>
      renderAdminDomainAllow(await createDomainAllow(core, request.body?.domain ?? '', moderator(request).account._id)),
  );
  app.delete(
    '/api/v1/admin/domain_allows/:id',
    { schema: { params: IdParams }, config: writeAllows },
    deleteHandler(core, deleteDomainAllow),
  );
};

export default federationRoutes;
