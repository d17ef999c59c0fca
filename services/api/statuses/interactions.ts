// The statuses area's interactions (/api/v1/statuses/:id/…): favourite, bookmark, pin, mute and
// reblog with their undo, and who favourited or reblogged a status.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { collection } from '../../core/db/mongo.ts';
import type { AccountDoc, CachedAccount } from '../../core/model/accounts.ts';
import { accounts } from '../../core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../core/model/statuses.ts';
import { favourites } from '../../core/model/favourites.ts';
import { bookmarks } from '../../core/model/bookmarks.ts';
import {
  favouriteStatus,
  unfavouriteStatus,
  bookmarkStatus,
  unbookmarkStatus,
} from '../../core/interactions/favourites.ts';
import { findReblog, reblogStatus, unreblogStatus } from '../../core/interactions/reblogs.ts';
import { pinStatus, unpinStatus } from '../../core/interactions/pins.ts';
import { muteConversation, unmuteConversation } from '../../core/interactions/conversationMutes.ts';
import { requireUser } from '../plugins/auth.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import { notFound } from '../errors.ts';
import { StatusEntity, presentStatus } from '../../core/entities/status.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { findPage, pageParams, setLinkHeader, type PageParams } from '../pagination.ts';
import { IdParams, PageQuery, ReblogBody } from './schemas.ts';
import { idParam, viewerOf, visibilityOf, visibleStatusOr404, WRITE, READ } from './helpers.ts';

const FAVOURITES = { scopes: ['write', 'write:favourites'], user: 'required' as const };
const BOOKMARKS = { scopes: ['write', 'write:bookmarks'], user: 'required' as const };
const PINS = { scopes: ['write', 'write:accounts'], user: 'required' as const };
const MUTES = { scopes: ['write', 'write:mutes', 'follow'], user: 'required' as const };

/** The status with the viewer's flags, or 404 when it is gone. */
async function answer(core: Core, id: bigint, viewer: CachedAccount) {
  const status = await collection(core.db, statuses).findOne({ _id: id });
  if (!status) throw notFound();
  return presentStatus(core, status, viewer);
}

/** For undo actions: the status (deleted ones excepted) when the caller has the record, else only if visible. */
async function statusForUndo(
  core: Core,
  viewer: CachedAccount,
  rawId: string,
  hasRecord: (s: StatusDoc) => Promise<boolean>,
): Promise<StatusDoc> {
  const status = await collection(core.db, statuses).findOne({ _id: idParam(rawId), deletedAt: null });
  if (status && (await hasRecord(status))) return status;
  return visibleStatusOr404(core, viewer, rawId);
}

/** The original of a reblog (visibility-checked), or the status itself. */
async function properStatus(core: Core, viewer: CachedAccount, status: StatusDoc): Promise<StatusDoc> {
  return status.reblogOfId === null ? status : visibleStatusOr404(core, viewer, String(status.reblogOfId));
}

export const statusInteractions: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  // Interactions ----------------------------------------------------------------------------
  const action = (
    path: string,
    auth: typeof WRITE,
    handler: (core: Core, account: AccountDoc, rawId: string) => Promise<bigint>,
  ) =>
    app.post(
      path,
      { config: { auth }, schema: { params: IdParams, body: ReblogBody, response: { 200: StatusEntity } } },
      async (request) => {
        const { account } = requireUser(request);
        return answer(core, await handler(core, account, request.params.id), account);
      },
    );

  // Favourites and bookmarks of a reblog go to the original (Mastodon's models resolve
  // `status.reblog`); the answer is the status asked about.
  // Act on a status the caller can see (404 as for a missing one otherwise).
  const onVisible =
    (op: (c: Core, account: AccountDoc, status: StatusDoc) => Promise<unknown>) =>
    async (c: Core, account: AccountDoc, raw: string) => {
      const status = await visibleStatusOr404(c, account, raw);
      await op(c, account, status);
      return status._id;
    };
  // Undo a mark the caller made, even after losing access to the status (see statusForUndo).
  const undoMark =
    (
      marks: typeof favourites | typeof bookmarks,
      op: (c: Core, account: AccountDoc, status: StatusDoc) => Promise<unknown>,
    ) =>
    async (c: Core, account: AccountDoc, raw: string) => {
      const marked = async (s: StatusDoc) =>
        (await collection(c.db, marks).countDocuments({ accountId: account._id, statusId: s._id })) > 0;
      const status = await statusForUndo(c, account, raw, marked);
      await op(c, account, status);
      return status._id;
    };

  // Favourites and bookmarks of a reblog go to the original (Mastodon's models resolve
  // `status.reblog`); the answer is the status asked about.
  action(
    '/api/v1/statuses/:id/favourite',
    FAVOURITES,
    onVisible(async (c, account, status) => favouriteStatus(c, account, await properStatus(c, account, status))),
  );
  action('/api/v1/statuses/:id/unfavourite', FAVOURITES, undoMark(favourites, unfavouriteStatus));
  action(
    '/api/v1/statuses/:id/bookmark',
    BOOKMARKS,
    onVisible(async (c, account, status) => bookmarkStatus(c, account, await properStatus(c, account, status))),
  );
  action('/api/v1/statuses/:id/unbookmark', BOOKMARKS, undoMark(bookmarks, unbookmarkStatus));
  action('/api/v1/statuses/:id/pin', PINS, onVisible(pinStatus));
  action('/api/v1/statuses/:id/unpin', PINS, onVisible(unpinStatus));
  action('/api/v1/statuses/:id/mute', MUTES, onVisible(muteConversation));
  action('/api/v1/statuses/:id/unmute', MUTES, onVisible(unmuteConversation));

  app.post(
    '/api/v1/statuses/:id/reblog',
    { config: { auth: WRITE }, schema: { params: IdParams, body: ReblogBody, response: { 200: StatusEntity } } },
    async (request) => {
      const { account } = requireUser(request);
      let status = await visibleStatusOr404(core, account, request.params.id);
      if (status.reblogOfId !== null) status = await visibleStatusOr404(core, account, String(status.reblogOfId));
      const reblog = await reblogStatus(core, account, status, visibilityOf(request.body.visibility));
      return presentStatus(core, reblog, account);
    },
  );

  app.post(
    '/api/v1/statuses/:id/unreblog',
    { config: { auth: WRITE }, schema: { params: IdParams, response: { 200: StatusEntity } } },
    async (request, reply) => {
      const { account } = requireUser(request);
      await enforceRateLimit(core, reply, RATE_LIMITS.deletes, String(account._id));
      const status = await statusForUndo(
        core,
        account,
        request.params.id,
        async (s) => (await findReblog(core, account, s)) !== null,
      );
      await unreblogStatus(core, account, status);
      return answer(core, status._id, account);
    },
  );

  // Who interacted ---------------------------------------------------------------------------
  // The accounts behind a status's favourites or reblogs, newest first, paged by those records' ids.
  const whoInteracted = (
    path: string,
    records: (status: StatusDoc, p: PageParams) => Promise<{ _id: bigint; accountId: bigint }[]>,
  ) =>
    app.get(
      path,
      {
        config: { auth: READ },
        schema: { params: IdParams, querystring: PageQuery, response: { 200: Type.Array(AccountEntity) } },
      },
      async (request, reply) => {
        const status = await visibleStatusOr404(core, viewerOf(request), request.params.id);
        const p = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
        const page = await records(status, p);
        setLinkHeader(core, request, reply, {
          oldest: page.at(-1)?._id ?? null,
          newest: page[0]?._id ?? null,
          count: page.length,
          limit: p.limit,
          prevParam: 'since_id',
        });
        return presentAccountsInOrder(
          core,
          page.map((r) => r.accountId),
        );
      },
    );
  whoInteracted('/api/v1/statuses/:id/favourited_by', (status, p) =>
    findPage(collection(core.db, favourites), { statusId: status._id }, p),
  );
  whoInteracted('/api/v1/statuses/:id/reblogged_by', (status, p) =>
    findPage(collection(core.db, statuses), { reblogOfId: status._id, deletedAt: null }, p),
  );
};

async function presentAccountsInOrder(core: Core, ids: bigint[]) {
  const docs = await collection(core.db, accounts)
    .find({ _id: { $in: ids }, suspendedAt: null })
    .toArray();
  const byId = new Map(docs.map((d) => [d._id, d]));
  const ordered = ids.map((id) => byId.get(id)).filter((d) => d !== undefined);
  return presentAccounts(core, ordered);
}
