// Notification policy and requests (Mastodon 4.3): GET/PATCH /api/v2/notifications/policy
// (accept/filter/drop per condition), the older boolean form at /api/v1/notifications/policy,
// and /api/v1/notifications/requests: list, show, accept, dismiss, the bulk forms with `id[]`,
// and `merged` (accepting is synchronous here, so it is always merged).
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import type { NotificationRequestDoc } from '../../core/model/notificationPolicies.ts';
import { policyOf, type EffectivePolicy } from '../../core/notifications/policy.ts';
import {
  acceptRequest,
  dismissRequest,
  ownRequest,
  policySummary,
  presentPolicyV2,
  requestsByIds,
  notificationRequestsPage,
  requestSubjects,
  updatePolicy,
  POLICY_FIELDS,
  type PolicyField,
} from '../../core/notifications/requests.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound } from '../errors.ts';
import { AccountEntity, presentAccounts, type Account } from '../../core/entities/account.ts';
import { StatusEntity, type Status } from '../../core/entities/status.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { pageParams, setRecordPageLinks } from '../pagination.ts';
import { CursorQuery, Empty, IdParams } from '../params.ts';
import { READ_NOTIFICATIONS as READ, WRITE_NOTIFICATIONS as WRITE } from '../scopes.ts';

const Str = Type.String({ maxLength: 100 });
const Loose = Type.Optional(Type.Object({}, { additionalProperties: true }));
const IdsBody = Type.Optional(
  Type.Object(
    { id: Type.Optional(Type.Union([Type.Array(Str, { maxItems: 100 }), Str])) },
    { additionalProperties: true },
  ),
);
const Summary = Type.Object({ pending_requests_count: Type.Integer(), pending_notifications_count: Type.Integer() });
const PolicyValue = Type.Union([Type.Literal('accept'), Type.Literal('filter'), Type.Literal('drop')]);
const PolicyV2 = Type.Object({
  for_not_following: PolicyValue,
  for_not_followers: PolicyValue,
  for_new_accounts: PolicyValue,
  for_private_mentions: PolicyValue,
  for_limited_accounts: PolicyValue,
  summary: Summary,
});
const PolicyV1 = Type.Object({
  filter_not_following: Type.Boolean(),
  filter_not_followers: Type.Boolean(),
  filter_new_accounts: Type.Boolean(),
  filter_private_mentions: Type.Boolean(),
  summary: Summary,
});
const RequestEntity = Type.Object({
  id: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  notifications_count: Type.String(),
  account: AccountEntity,
  last_status: Type.Optional(StatusEntity),
});

const V1_FIELDS: Record<string, PolicyField> = {
  filter_not_following: 'for_not_following',
  filter_not_followers: 'for_not_followers',
  filter_new_accounts: 'for_new_accounts',
  filter_private_mentions: 'for_private_mentions',
};

function truthy(v: unknown): boolean {
  return v === true || v === 1 || (typeof v === 'string' && /^(1|t|true|on)$/i.test(v));
}

function presentV1(p: EffectivePolicy) {
  const v2 = presentPolicyV2(p);
  return {
    filter_not_following: v2.for_not_following !== 'accept',
    filter_not_followers: v2.for_not_followers !== 'accept',
    filter_new_accounts: v2.for_new_accounts !== 'accept',
    filter_private_mentions: v2.for_private_mentions !== 'accept',
  };
}

function idList(raw: unknown): Id[] {
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.map((v) => parseId(v)).filter((v): v is Id => v !== null);
}

async function presentRequests(core: Core, docs: NotificationRequestDoc[], viewer: CachedAccount) {
  if (docs.length === 0) return [];
  const { senders: accountDocs, statuses: statusDocs } = await requestSubjects(core, docs);
  const [renderedAccounts, renderedStatuses] = await Promise.all([
    presentAccounts(core, accountDocs),
    presentStatuses(core, statusDocs, viewer),
  ]);
  const accountById = new Map<bigint, Account>(accountDocs.map((a, i) => [a._id, renderedAccounts[i] as Account]));
  const statusById = new Map<bigint, Status>(statusDocs.map((s, i) => [s._id, renderedStatuses[i] as Status]));
  return docs.flatMap((d) => {
    const account = accountById.get(d.fromAccountId);
    if (!account) return [];
    const status = d.lastStatusId === null ? undefined : statusById.get(d.lastStatusId);
    return [
      {
        id: String(d._id),
        created_at: d.createdAt.toISOString(),
        updated_at: d.updatedAt.toISOString(),
        notifications_count: String(d.notificationsCount),
        account,
        ...(status ? { last_status: status } : {}),
      },
    ];
  });
}

type PolicyChanges = Partial<Record<PolicyField, unknown>>;

/** The show and update routes of the caller's policy in one API version's shape, with its summary. */
function policyRoutes<E extends TSchema, P extends object>(
  core: Core,
  entity: E,
  present: (policy: EffectivePolicy) => P,
  changesOf: (body: Record<string, unknown>) => PolicyChanges,
) {
  const withSummary = async (policy: EffectivePolicy, accountId: Id) => ({
    ...present(policy),
    summary: await policySummary(core, accountId),
  });
  return {
    show: {
      schema: { response: { 200: entity } },
      config: { auth: READ },
      handler: async (request: FastifyRequest) => {
        const { account } = requireUser(request);
        return withSummary(await policyOf(core, account._id), account._id);
      },
    },
    update: {
      schema: { body: Loose, response: { 200: entity } },
      config: { auth: WRITE },
      handler: async (request: FastifyRequest) => {
        const { account } = requireUser(request);
        const changes = changesOf((request.body ?? {}) as Record<string, unknown>);
        return withSummary(await updatePolicy(core, account._id, changes), account._id);
      },
    },
  };
}

const notificationRequestsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  // ---- policy ----
  // Mastodon routes the policy as a Rails resource: PUT and PATCH both update it.
  const v2 = policyRoutes(core, PolicyV2, presentPolicyV2, (body) => {
    const changes: PolicyChanges = {};
    for (const f of POLICY_FIELDS) if (body[f] !== undefined) changes[f] = body[f];
    return changes;
  });
  app.get('/api/v2/notifications/policy', v2.show);
  app.patch('/api/v2/notifications/policy', v2.update);
  app.put('/api/v2/notifications/policy', v2.update);

  // v1 speaks of booleans (filter or accept) under its own names.
  const v1 = policyRoutes(core, PolicyV1, presentV1, (body) => {
    const changes: PolicyChanges = {};
    for (const [name, field] of Object.entries(V1_FIELDS))
      if (body[name] !== undefined) changes[field] = truthy(body[name]) ? 'filter' : 'accept';
    return changes;
  });
  app.get('/api/v1/notifications/policy', v1.show);
  app.patch('/api/v1/notifications/policy', v1.update);
  app.put('/api/v1/notifications/policy', v1.update);

  // ---- requests ----
  app.get(
    '/api/v1/notifications/requests',
    { schema: { querystring: CursorQuery, response: { 200: Type.Array(RequestEntity) } }, config: { auth: READ } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
      const page = await notificationRequestsPage(core, account._id, p);
      setRecordPageLinks(core, request, reply, page, p.limit, 'min_id');
      return presentRequests(core, page, account);
    },
  );

  app.get(
    '/api/v1/notifications/requests/merged',
    { schema: { response: { 200: Type.Object({ merged: Type.Boolean() }) } }, config: { auth: READ } },
    async () => ({ merged: true }),
  );

  app.get(
    '/api/v1/notifications/requests/:id',
    { schema: { params: IdParams, response: { 200: RequestEntity } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const req = await ownRequest(core, account._id, parseId(request.params.id));
      if (!req) throw notFound();
      const [out] = await presentRequests(core, [req], account);
      if (!out) throw notFound();
      return out;
    },
  );

  for (const [onePath, manyPath, run] of [
    ['/api/v1/notifications/requests/:id/accept', '/api/v1/notifications/requests/accept', acceptRequest],
    ['/api/v1/notifications/requests/:id/dismiss', '/api/v1/notifications/requests/dismiss', dismissRequest],
  ] as const) {
    app.post(
      onePath,
      { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const req = await ownRequest(core, account._id, parseId(request.params.id));
        if (!req) throw notFound();
        await run(core, req);
        return {};
      },
    );
    app.post(
      manyPath,
      { schema: { body: IdsBody, response: { 200: Empty } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const body = (request.body ?? {}) as { id?: unknown };
        for (const req of await requestsByIds(core, account._id, idList(body.id))) await run(core, req);
        return {};
      },
    );
  }
};

export default notificationRequestsArea;
