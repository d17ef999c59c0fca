// Notifications area: v1 list/show/dismiss/clear/unread_count and the grouped v2 API
// (mastodon-api-endpoints.md, Notifications). Scopes read:notifications / write:notifications.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import {
  findOwnNotification,
  groupMembers,
  groupSendersPage,
  notificationsPage,
} from '../../core/notifications/pages.ts';
import type { AccountDoc, CachedAccount } from '../../core/model/accounts.ts';
import type { NotificationDoc } from '../../core/model/notifications.ts';
import {
  groupedTypes,
  unreadCount,
  type NotificationFilter,
  type NotificationGroupData,
} from '../../core/notifications/queries.ts';
import { groupByKey, groupPage, unreadGroupCount } from '../../core/notifications/groupPages.ts';
import { clearNotifications, deleteGroup } from '../../core/notifications/groups.ts';
import { dismissNotification } from '../../core/notifications/dismiss.ts';
import { findVisibleAccounts } from '../../core/accounts/queries.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound } from '../errors.ts';
import { AccountEntity, presentAccounts, presentPartialAccount, type Account } from '../../core/entities/account.ts';
import { NotificationEntity, presentNotifications, renderRefs } from '../../core/entities/notification.ts';
import { notificationExtras } from '../../core/entities/notificationExtras.ts';
import { pageParams, setLinkHeader, setRecordPageLinks } from '../pagination.ts';
import { CursorFields, Empty, IdParams } from '../params.ts';
import { READ_NOTIFICATIONS as READ, WRITE_NOTIFICATIONS as WRITE } from '../scopes.ts';

const Str = Type.String({ maxLength: 100 });
const StrList = Type.Union([Type.Array(Str, { maxItems: 100 }), Str]);
const ListQuery = Type.Object(
  {
    ...CursorFields,
    types: Type.Optional(StrList),
    exclude_types: Type.Optional(StrList),
    account_id: Type.Optional(Str),
    grouped_types: Type.Optional(StrList),
    expand_accounts: Type.Optional(Str),
    include_filtered: Type.Optional(Str),
  },
  { additionalProperties: true },
);
const GroupParams = Type.Object({ group_key: Type.String({ maxLength: 200 }) });
const Count = Type.Object({ count: Type.Integer() });

const GroupedResults = Type.Object({
  accounts: Type.Array(AccountEntity),
  partial_accounts: Type.Optional(Type.Array(Type.Unknown())),
  statuses: Type.Array(Type.Unknown()),
  notification_groups: Type.Array(Type.Unknown()),
});

function filterOf(q: {
  types?: unknown;
  exclude_types?: unknown;
  account_id?: unknown;
  include_filtered?: unknown;
}): NotificationFilter {
  return {
    types: q.types,
    excludeTypes: q.exclude_types,
    accountId: q.account_id,
    includeFiltered: q.include_filtered,
  };
}

function countLimit(raw: unknown): number {
  const n = Math.trunc(Number(raw));
  if (raw === undefined || !Number.isFinite(n) || n <= 0) return 100;
  return Math.min(n, 1000);
}

async function ownNotification(core: Core, account: AccountDoc, rawId: string): Promise<NotificationDoc> {
  const id = parseId(rawId);
  const n = id === null ? null : await findOwnNotification(core, account._id, id);
  if (!n) throw notFound();
  return n;
}

/** GroupedNotificationsResults for groups (accounts and statuses deduplicated). */
async function presentGroups(
  core: Core,
  viewer: CachedAccount,
  groups: NotificationGroupData[],
  opts: { paginated: boolean; partial: boolean },
) {
  const accountIds = groups.flatMap((g) => g.sampleAccountIds);
  const statusIds = groups.map((g) => g.statusId).filter((s): s is Id => s !== null);
  const refs = await renderRefs(core, accountIds, statusIds, viewer);
  const shown = groups.filter(
    (g) =>
      g.sampleAccountIds.some((a) => refs.accounts.has(a)) && (g.statusId === null || refs.statuses.has(g.statusId)),
  );
  const full = new Set<bigint>();
  const partial = new Set<bigint>();
  for (const g of shown) {
    const present = g.sampleAccountIds.filter((a) => refs.accounts.has(a));
    if (!opts.partial) present.forEach((a) => full.add(a));
    else {
      full.add(present[0]);
      present.slice(1).forEach((a) => partial.add(a));
    }
  }
  for (const a of full) partial.delete(a);
  // admin.report and moderation_warning groups carry their report or strike, the collection
  // types their collection, as in v1.
  const extras = await notificationExtras(
    core,
    shown.map((g) => g.mostRecent),
    viewer,
  );
  const out: Record<string, unknown> = {
    accounts: [...full].map((a) => refs.accounts.get(a)),
    statuses: [...new Set(shown.map((g) => g.statusId).filter((s): s is Id => s !== null))].map((s) =>
      refs.statuses.get(s),
    ),
    notification_groups: shown.map((g) => {
      const group: Record<string, unknown> = {
        group_key: g.groupKey,
        notifications_count: g.count,
        type: g.type,
        most_recent_notification_id: String(g.mostRecent._id),
      };
      if (opts.paginated) {
        group.page_min_id = String(g.pageMinId);
        group.page_max_id = String(g.mostRecent._id);
        group.latest_page_notification_at = g.mostRecent.createdAt.toISOString();
      }
      group.sample_account_ids = g.sampleAccountIds.filter((a) => refs.accounts.has(a)).map(String);
      if (g.statusId !== null) group.status_id = String(g.statusId);
      Object.assign(group, extras.get(g.mostRecent._id));
      return group;
    }),
  };
  if (opts.partial)
    out.partial_accounts = [...partial].map((a) => presentPartialAccount(refs.accounts.get(a) as Account));
  return out as {
    accounts: Account[];
    partial_accounts?: unknown[];
    statuses: unknown[];
    notification_groups: unknown[];
  };
}

const notificationsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  // ---- v1 ----
  app.get(
    '/api/v1/notifications',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(NotificationEntity) } }, config: { auth: READ } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
      const page = await notificationsPage(core, account._id, filterOf(request.query), p);
      setRecordPageLinks(core, request, reply, page, p.limit, 'min_id');
      return presentNotifications(core, page, account);
    },
  );

  app.get(
    '/api/v1/notifications/unread_count',
    { schema: { querystring: ListQuery, response: { 200: Count } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const q = request.query as Record<string, unknown>;
      return { count: await unreadCount(core, account._id, filterOf(request.query), countLimit(q.limit)) };
    },
  );

  // The same for v1 and v2: every notification goes.
  const clear = {
    schema: { response: { 200: Empty } },
    config: { auth: WRITE },
    handler: async (request: FastifyRequest) => {
      const { account } = requireUser(request);
      await clearNotifications(core, account._id);
      return {};
    },
  };
  app.post('/api/v1/notifications/clear', clear);

  app.get(
    '/api/v1/notifications/:id',
    { schema: { params: IdParams, response: { 200: NotificationEntity } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const n = await ownNotification(core, account, request.params.id);
      const [out] = await presentNotifications(core, [n], account);
      if (!out) throw notFound();
      return out;
    },
  );

  app.post(
    '/api/v1/notifications/:id/dismiss',
    { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      await dismissNotification(core, account._id, await ownNotification(core, account, request.params.id));
      return {};
    },
  );

  // ---- v2 (grouped) ----
  app.get(
    '/api/v2/notifications',
    { schema: { querystring: ListQuery, response: { 200: GroupedResults } }, config: { auth: READ } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
      const grouped = groupedTypes(request.query.grouped_types);
      const { groups, oldest, newest } = await groupPage(core, account._id, filterOf(request.query), grouped, p);
      setLinkHeader(core, request, reply, { oldest, newest, count: groups.length, limit: p.limit });
      return presentGroups(core, account, groups, {
        paginated: true,
        partial: request.query.expand_accounts === 'partial_avatars',
      });
    },
  );

  app.get(
    '/api/v2/notifications/unread_count',
    { schema: { querystring: ListQuery, response: { 200: Count } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const q = request.query as Record<string, unknown>;
      return {
        count: await unreadGroupCount(core, {
          accountId: account._id,
          filter: filterOf(request.query),
          grouped: groupedTypes(request.query.grouped_types),
          limit: countLimit(q.limit),
        }),
      };
    },
  );

  app.post('/api/v2/notifications/clear', clear);

  app.get(
    '/api/v2/notifications/:group_key',
    { schema: { params: GroupParams, response: { 200: GroupedResults } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const g = await groupByKey(core, account._id, request.params.group_key);
      if (!g) throw notFound();
      const out = await presentGroups(core, account, [g], { paginated: false, partial: false });
      if (out.notification_groups.length === 0) throw notFound();
      return out;
    },
  );

  app.post(
    '/api/v2/notifications/:group_key/dismiss',
    { schema: { params: GroupParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const key = request.params.group_key;
      const members = await groupMembers(core, account._id, key, 2);
      if (members.length === 0) throw notFound();
      if (key.startsWith('ungrouped-')) await dismissNotification(core, account._id, members[0]);
      else await deleteGroup(core, account._id, key);
      return {};
    },
  );

  app.get(
    '/api/v2/notifications/:group_key/accounts',
    {
      schema: { params: GroupParams, querystring: ListQuery, response: { 200: Type.Array(AccountEntity) } },
      config: { auth: READ },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      // Mastodon pages the group's notifications by id and answers their senders.
      const p = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
      const page = await groupSendersPage(core, account._id, request.params.group_key, p);
      if (page.length === 0 && p.maxId === null && p.minId === null && p.sinceId === null) throw notFound();
      setRecordPageLinks(core, request, reply, page, p.limit, 'min_id');
      return presentAccounts(
        core,
        await findVisibleAccounts(
          core,
          page.map((n) => n.fromAccountId),
        ),
      );
    },
  );
};

export default notificationsArea;
