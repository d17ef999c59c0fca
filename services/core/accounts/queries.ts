// Reading accounts the way the REST API may show them: accounts of unconfirmed or unapproved users
// stay hidden everywhere except lookup by acct.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { accounts, accountView, visibleAccountFilter, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import { readThrough } from '../db/docCache.ts';
import type { RelationshipTarget } from '../graph/relationships.ts';

/** The account, whatever its state; null when there is none. */
export function findAccount(core: Core, id: Id): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: id });
}

/** The usernames of the accounts of `ids` (those that exist). */
export async function usernamesOf(core: Core, ids: readonly Id[]): Promise<Map<Id, string>> {
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: [...ids] } }, { projection: { username: 1 } })
    .toArray();
  return new Map(found.map((a) => [a._id, a.username]));
}

/** The visible account (see visibleAccountFilter) named `username` (case-insensitive) on `domain` (null: local). */
export function findVisibleAccountByName(
  core: Core,
  username: string,
  domain: string | null,
): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({
    usernameLower: username.toLowerCase(),
    domain,
    ...visibleAccountFilter,
  });
}

/** The account `account` has moved to; null when it has not moved. */
export async function movedToAccount(core: Core, account: AccountDoc): Promise<AccountDoc | null> {
  return account.movedToAccountId === null
    ? null
    : collection(core.db, accounts).findOne({ _id: account.movedToAccountId });
}

export async function findVisibleAccount(core: Core, id: Id): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: id, ...visibleAccountFilter });
}

/** findVisibleAccount from the document cache (no private key): for hot reads such as an account's statuses. */
export async function findVisibleCachedAccount(core: Core, id: Id): Promise<CachedAccount | null> {
  const account = (await readThrough(core, accountView, [id])).get(id);
  return account && account.pendingUser !== true ? account : null;
}

/** Visible accounts in the order of `ids`; unknown or hidden ones are left out. */
export async function findVisibleAccounts(core: Core, ids: Id[]): Promise<AccountDoc[]> {
  if (ids.length === 0) return [];
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids }, ...visibleAccountFilter })
    .toArray();
  const byId = new Map(found.map((a) => [String(a._id), a]));
  return [...new Set(ids.map(String))].map((id) => byId.get(id)).filter((a): a is AccountDoc => a !== undefined);
}

/** Accounts not suspended, in the order of `ids` (who favourited or reblogged a status). */
export function findUnsuspendedAccounts(core: Core, ids: readonly Id[]): Promise<AccountDoc[]> {
  return findInOrder(collection(core.db, accounts), ids, { suspendedAt: null });
}

/** The accounts of `ids` a relationship may be asked about, in order: visible, and not suspended unless asked. */
export function relationshipTargets(
  core: Core,
  ids: readonly Id[],
  withSuspended: boolean,
): Promise<RelationshipTarget[]> {
  return findInOrder(
    collection(core.db, accounts),
    ids,
    { ...visibleAccountFilter, ...(withSuspended ? {} : { suspendedAt: null }) },
    ['domain'],
  );
}

/** Splits `user`, `@user`, `user@domain` or `@user@domain`; the local domain means local. */
export function parseAcct(core: Core, acct: string): { username: string; domain: string | null } | null {
  const m = /^@?([^@\s]+)(?:@([^@\s]+))?$/.exec(acct.trim());
  if (!m) return null;
  const domain = m[2]?.toLowerCase() ?? null;
  const local =
    domain === null ||
    domain === core.config.localDomain.toLowerCase() ||
    domain === core.config.webDomain.toLowerCase();
  return { username: m[1], domain: local ? null : domain };
}

/** Lookup by acct: also finds accounts of unconfirmed or unapproved users. */
export async function findAccountByAcct(core: Core, acct: string): Promise<AccountDoc | null> {
  const parsed = parseAcct(core, acct);
  if (!parsed) return null;
  return collection(core.db, accounts).findOne({ usernameLower: parsed.username.toLowerCase(), domain: parsed.domain });
}
