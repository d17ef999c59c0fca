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
import { adminRecordRoutes } from './guard.ts';

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
  const blocks = adminRecordRoutes(core, 'domain_blocks', 'manage_federation', {
    list: [instanceDomainBlocks, {}, 'since_id'],
    get: getDomainBlock,
    remove: deleteDomainBlock,
    render: renderAdminDomainBlock,
  });
  app.get('/api/v1/admin/domain_blocks', blocks.list);
  app.get('/api/v1/admin/domain_blocks/:id', blocks.show);
  app.post(
    '/api/v1/admin/domain_blocks',
    blocks.create(BlockBody, (body, actor) =>
      createDomainBlock(core, { domain: body.domain ?? '', ...blockInput(body) }, actor),
    ),
  );
  app.put(
    '/api/v1/admin/domain_blocks/:id',
    blocks.update(BlockBody, (id, body, actor) => updateDomainBlock(core, id, blockInput(body), actor)),
  );
  app.delete('/api/v1/admin/domain_blocks/:id', blocks.remove);

  const allows = adminRecordRoutes(core, 'domain_allows', 'manage_federation', {
    list: [domainAllows, {}, 'since_id'],
    get: getDomainAllow,
    remove: deleteDomainAllow,
    render: renderAdminDomainAllow,
  });
  app.get('/api/v1/admin/domain_allows', allows.list);
  app.get('/api/v1/admin/domain_allows/:id', allows.show);
  app.post(
    '/api/v1/admin/domain_allows',
    allows.create(AllowBody, (body, actor) => createDomainAllow(core, body.domain ?? '', actor)),
  );
  app.delete('/api/v1/admin/domain_allows/:id', allows.remove);
};

export default federationRoutes;
