// Who receives an activity (federation reference §6.3, §9.3): the inboxes of remote accounts,
// deduplicated. Fan-out goes to each account's shared inbox when it has one (once per server),
// else to its personal inbox; direct interactions (Follow, Accept, Like, Block, votes) go to the
// personal inbox. Suspended accounts and domains the instance refuses are left out.
import type { Core } from '../../context.ts';
import type { Id } from '../../ids.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { follows } from '../../model/follows.ts';
import { statuses } from '../../model/statuses.ts';
import { favourites } from '../../model/favourites.ts';
import { isDomainRefused } from './domains.ts';

/** Inbox URL → the account whose personal inbox it is (null for a shared inbox). */
export type Inboxes = Map<string, string | null>;

type InboxFields = Pick<AccountDoc, '_id' | 'domain' | 'inboxUrl' | 'sharedInboxUrl' | 'suspendedAt'>;
const INBOX_PROJECTION = { _id: 1, domain: 1, inboxUrl: 1, sharedInboxUrl: 1, suspendedAt: 1 } as const;

const CHUNK = 1_000;

function add(out: Inboxes, account: InboxFields, personal: boolean): void {
  if (account.domain === null || account.suspendedAt) return;
  if (!personal && account.sharedInboxUrl) {
    out.set(account.sharedInboxUrl, null);
    return;
  }
  if (!account.inboxUrl) return;
  // A shared inbox already listed reaches this account too; a personal one stays personal.
  if (!out.has(account.inboxUrl)) out.set(account.inboxUrl, String(account._id));
}

async function remoteAccounts(core: Core, ids: Id[]): Promise<InboxFields[]> {
  const out: InboxFields[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const found = await collection(core.db, accounts)
      .find({ _id: { $in: ids.slice(i, i + CHUNK) }, domain: { $ne: null } }, { projection: INBOX_PROJECTION })
      .toArray();
    out.push(...(found as InboxFields[]));
  }
  return out;
}

/** Preferred inboxes (shared when advertised) of the given accounts; local ones are skipped. */
export async function inboxesOf(core: Core, ids: Id[], out: Inboxes = new Map(), personal = false): Promise<Inboxes> {
  if (ids.length === 0) return out;
  for (const account of await remoteAccounts(core, [...new Set(ids)])) add(out, account, personal);
  return out;
}

/** Personal inbox of one remote account (null when local, suspended or unknown). */
export async function personalInboxOf(core: Core, id: Id): Promise<{ inbox: string; account: AccountDoc } | null> {
  const account = await collection(core.db, accounts).findOne({ _id: id });
  if (!account || account.domain === null || account.suspendedAt || !account.inboxUrl) return null;
  if (await isDomainRefused(core, account.domain)) return null;
  return { inbox: account.inboxUrl, account };
}

// A big account's follower inboxes are read from MongoDB once and kept in Redis
// (`dlv:fi:<accountId>`, inbox → recipient, "" for a shared inbox) for CACHE_TTL_MS: 10,000
// followers are 20,000 documents to read, 2,000 servers one hash. The delivery planner drops the
// entry when a remote account starts or stops following (before it sends the Accept, so a new
// follower's server gets every post from then on); a version counter keeps a read that raced with
// such a change from storing what it saw.
const CACHE_TTL_MS = 10 * 60_000;
const CACHE_MIN_FOLLOWS = 200;
// The account id is a Redis Cluster hash tag: the cache and its version share a slot (one script
// checks one and writes the other). Renamed from `dlv:fi:<id>`: old entries expire unread.
export const followerInboxesKey = (id: Id) => `dlv:fi:{${id}}`;
const cacheKey = followerInboxesKey;
const versionKey = (id: Id) => `dlv:fiv:{${id}}`;
const STORE_IF_UNCHANGED = `
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** Forgets an account's cached follower inboxes (its remote followers changed). */
export async function forgetFollowerInboxes(core: Core, accountId: Id): Promise<void> {
  await core.redis.incr(versionKey(accountId));
  await core.redis.pexpire(versionKey(accountId), CACHE_TTL_MS * 2);
  await core.redis.del(cacheKey(accountId));
}

async function readFollowerInboxes(
  core: Core,
  accountId: Id,
): Promise<{ inboxes: Inboxes; follows: number; remote: number }> {
  const ids = (
    await collection(core.db, follows)
      .find({ targetAccountId: accountId }, { projection: { accountId: 1 } })
      .toArray()
  ).map((f) => f.accountId);
  // The account lookups run a few at a time; results are added in follower order.
  const chunks: Id[][] = [];
  for (let i = 0; i < ids.length; i += CHUNK) chunks.push(ids.slice(i, i + CHUNK));
  const found: InboxFields[][] = [];
  for (let i = 0; i < chunks.length; i += 4)
    found.push(...(await Promise.all(chunks.slice(i, i + 4).map((c) => remoteAccounts(core, c)))));
  const inboxes: Inboxes = new Map();
  for (const page of found) for (const account of page) add(inboxes, account, false);
  return { inboxes, follows: ids.length, remote: found.reduce((n, page) => n + page.length, 0) };
}

/** Every remote follower's preferred inbox, one per shared inbox. */
export async function followerInboxes(core: Core, accountId: Id, out: Inboxes = new Map()): Promise<Inboxes> {
  const cached = await core.redis.hgetall(cacheKey(accountId));
  if (Object.keys(cached).length > 0) {
    for (const [inbox, recipient] of Object.entries(cached)) {
      if (inbox === '-') continue; // the marker of a cached empty set
      if (recipient === '') out.set(inbox, null);
      else if (!out.has(inbox)) out.set(inbox, recipient);
    }
    return out;
  }
  const version = (await core.redis.get(versionKey(accountId))) ?? '0';
  const { inboxes, follows: count, remote } = await readFollowerInboxes(core, accountId);
  // Also kept: an account followed from no other server (most on a small instance), whose every
  // post would read its followers again only to learn that none is remote. A remote follower
  // arriving drops the entry like any other change.
  if (count >= CACHE_MIN_FOLLOWS || remote === 0) {
    const fields = inboxes.size === 0 ? ['-', ''] : [...inboxes].flatMap(([inbox, r]) => [inbox, r ?? '']);
    await core.redis.eval(
      STORE_IF_UNCHANGED,
      2,
      cacheKey(accountId),
      versionKey(accountId),
      version,
      String(CACHE_TTL_MS),
      ...fields,
    );
  }
  for (const [inbox, recipient] of inboxes) {
    if (recipient === null) out.set(inbox, null);
    else if (!out.has(inbox)) out.set(inbox, recipient);
  }
  return out;
}

/** Remote accounts that reblogged, favourited or replied to a status (they may hold a copy). */
export async function interactorInboxes(core: Core, statusId: Id, out: Inboxes = new Map()): Promise<Inboxes> {
  const [reblogs, replies, favs] = await Promise.all([
    collection(core.db, statuses)
      .find({ reblogOfId: statusId, local: false }, { projection: { accountId: 1 } })
      .limit(10_000)
      .toArray(),
    collection(core.db, statuses)
      .find({ inReplyToId: statusId, local: false }, { projection: { accountId: 1 } })
      .limit(10_000)
      .toArray(),
    collection(core.db, favourites)
      .find({ statusId }, { projection: { accountId: 1 } })
      .limit(10_000)
      .toArray(),
  ]);
  return inboxesOf(
    core,
    [...reblogs, ...replies, ...favs].map((d) => d.accountId),
    out,
  );
}

/**
 * Every server we know (one inbox each, shared where advertised): where a deleted account's Delete
 * goes, as Mastodon sends it, since its followers are already gone when it is planned.
 */
export async function everyKnownInbox(core: Core, out: Inboxes = new Map(), limit = 200_000): Promise<Inboxes> {
  const cursor = collection(core.db, accounts)
    .find({ domain: { $ne: null }, suspendedAt: null }, { projection: INBOX_PROJECTION })
    .limit(limit)
    .batchSize(CHUNK);
  for await (const account of cursor) add(out, account as InboxFields, false);
  return out;
}

/** Drops inboxes on refused (suspended) domains and on our own host. */
export async function deliverable(core: Core, inboxes: Inboxes): Promise<Inboxes> {
  const own = new URL(core.config.baseUrl).host.toLowerCase();
  const verdict = new Map<string, boolean>();
  const out: Inboxes = new Map();
  for (const [inbox, recipient] of inboxes) {
    let host: string;
    try {
      host = new URL(inbox).host.toLowerCase();
    } catch {
      continue;
    }
    if (host === own) continue;
    let refused = verdict.get(host);
    if (refused === undefined) {
      refused = await isDomainRefused(core, host);
      verdict.set(host, refused);
    }
    if (!refused) out.set(inbox, recipient);
  }
  return out;
}
