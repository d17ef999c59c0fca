// Blocks area: block/unblock an account and the paginated list of blocked accounts.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { blocks } from '../../core/model/blocks.ts';
import { blockAccount, unblockAccount } from '../../core/graph/block.ts';
import { AccountEntity } from '../../core/entities/account.ts';
import { AccountPageQuery, accountActionRoute, ownRecordsHandler } from '../graphParams.ts';
import { WRITE_BLOCKS as WRITE, READ_BLOCKS as READ } from '../scopes.ts';

const blocksArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  accountActionRoute(app, core, '/api/v1/accounts/:id/block', WRITE, blockAccount);
  accountActionRoute(app, core, '/api/v1/accounts/:id/unblock', WRITE, unblockAccount);

  app.get(
    '/api/v1/blocks',
    { schema: { querystring: AccountPageQuery, response: { 200: Type.Array(AccountEntity) } }, config: { auth: READ } },
    ownRecordsHandler(core, blocks, 'accountId', (r) => r.targetAccountId),
  );
};

export default blocksArea;
