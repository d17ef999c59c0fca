// What the social-graph routes share: the target account from `:id` (404 when it is not a visible
// account or not a number), and the list pagination of blocks, mutes, follows and requests.
import { CursorQuery, IdParams as AccountIdParams } from './params.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Filter } from 'mongodb';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Core } from '../core/context.ts';
import { parseId, type Id } from '../core/ids.ts';
import type { AccountDoc, CachedAccount } from '../core/model/accounts.ts';
import { findVisibleAccount, findVisibleAccounts, findVisibleCachedAccount } from '../core/accounts/queries.ts';
import { notFound } from './errors.ts';
import { requireUser, type AuthRequirement } from './plugins/auth.ts';
import { presentRelationship, RelationshipEntity, type Relationship } from '../core/entities/relationship.ts';
import type { CollectionDef } from '../core/db/mongo.ts';
import { findPageIn } from '../core/db/pages.ts';
import { pageParams, type PageParams, setRecordPageLinks } from './pagination.ts';
import { presentAccounts, type Account } from '../core/entities/account.ts';

/** `:id` of an account. */
export { AccountIdParams };

export const AccountPageQuery = CursorQuery;

export async function targetAccount(core: Core, rawId: string): Promise<AccountDoc> {
  const id = parseId(rawId);
  const account = id === null ? null : await findVisibleAccount(core, id);
  if (!account) throw notFound();
  return account;
}

/** targetAccount from the document cache, for reads that need no private key. */
export async function targetCachedAccount(core: Core, rawId: string): Promise<CachedAccount> {
  const id = parseId(rawId);
  const account = id === null ? null : await findVisibleCachedAccount(core, id);
  if (!account) throw notFound();
  return account;
}

/** Mastodon's account lists: 40 by default, 80 at most. */
export function accountPage(query: unknown): PageParams {
  return pageParams(query, { defaultLimit: 40, maxLimit: 80 });
}

/**
 * The accounts of a page of records (blocks, mutes, follows...), in the records' order, minus those
 * `hide` names; the Link header is set from the records (their ids are the cursor).
 */
export async function accountsOfRecords<R extends { _id: Id }>(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  records: R[],
  accountIdOf: (record: R) => Id,
  page: PageParams,
  hide: Set<bigint> = new Set(),
): Promise<{ record: R; account: AccountDoc }[]> {
  setRecordPageLinks(core, request, reply, records, page.limit);
  const found = new Map((await findVisibleAccounts(core, records.map(accountIdOf))).map((a) => [a._id, a]));
  const out: { record: R; account: AccountDoc }[] = [];
  for (const record of records) {
    const account = found.get(accountIdOf(record));
    // Suspended accounts vanish from every account list (they return when unsuspended).
    if (account && !hide.has(account._id) && !account.suspendedAt) out.push({ record, account });
  }
  return out;
}

/**
 * POST `path` (an /api/v1/accounts/:id/<action>): the caller does something to the account in `:id` (follow,
 * block, mute, pin...) and gets the relationship back, as every such Mastodon endpoint answers.
 */
export function accountActionRoute(
  app: FastifyInstance,
  core: Core,
  path: string,
  auth: AuthRequirement,
  operation: (core: Core, account: AccountDoc, target: AccountDoc) => Promise<unknown>,
): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post(
      path,
      { schema: { params: AccountIdParams, response: { 200: RelationshipEntity } }, config: { auth } },
      async (request) => actOnAccount(core, request, (account, target) => operation(core, account, target)),
    );
}

/**
 * What every /api/v1/accounts/:id/<action> does: the caller acts on the account in `:id` (404 when it
 * is not visible) and gets the relationship back.
 */
export async function actOnAccount(
  core: Core,
  request: FastifyRequest & { params: { id: string } },
  operation: (account: AccountDoc, target: AccountDoc) => Promise<unknown>,
): Promise<Relationship> {
  const { account } = requireUser(request);
  const target = await targetAccount(core, request.params.id);
  await operation(account, target);
  return presentRelationship(core, account, target);
}

/**
 * An account list paginated by its records (blocks, follows, requests, endorsements): the page of
 * `filter` in `def`, the Link header, and the accounts the records point at, minus `hide` of them.
 */
export async function recordAccountsPage<R extends { _id: Id }>(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  def: CollectionDef<R>,
  filter: Filter<R>,
  accountIdOf: (record: R) => Id,
  hide: (ids: Id[]) => Promise<Set<bigint>> = async () => new Set(),
): Promise<Account[]> {
  const page = accountPage(request.query);
  const records = await findPageIn(core.db, def, filter, page);
  const rows = await accountsOfRecords(
    core,
    request,
    reply,
    records,
    accountIdOf,
    page,
    await hide(records.map(accountIdOf)),
  );
  return presentAccounts(
    core,
    rows.map((r) => r.account),
    { viewerId: request.auth?.account?._id },
  );
}

/**
 * The handler of a list of the caller's own records (blocks, endorsements, follow requests), each
 * record's owner in `ownerField`: the accounts they point at, a page at a time.
 */
export function ownRecordsHandler<R extends { _id: Id }>(
  core: Core,
  def: CollectionDef<R>,
  ownerField: keyof R & string,
  accountIdOf: (record: R) => Id,
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<Account[]> => {
    const { account } = requireUser(request);
    const filter = { [ownerField]: account._id } as Filter<R>;
    return recordAccountsPage(core, request, reply, def, filter, accountIdOf);
  };
}
