// Of a status's recipients, those whose feeds may take it (Mastodon's FeedManager#filter?): not
// those who block or mute the author (or a reblogged author) or block its domain, follow without
// reblogs (for reblogs), or do not follow the replied-to account (for replies).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { BY_TARGET_LIMIT, remembered, type FanOutStatus, type Related } from './authorSide.ts';

/**
 * `$in` lists are cut into chunks of this many ids, queried in parallel: the MongoDB-wire server
 * matches `$in` in time that grows with the square of the list (1,000 ids: about 40 ms; 250: 3 ms).
 */
const IN_CHUNK = 250;

/** Runs `query` over `ids` in parallel chunks of IN_CHUNK and concatenates the results. */
async function inChunks<T>(ids: Id[], query: (chunk: Id[]) => Promise<T[]>): Promise<T[]> {
  if (ids.length <= IN_CHUNK) return ids.length === 0 ? [] : query(ids);
  const chunks: Id[][] = [];
  for (let i = 0; i < ids.length; i += IN_CHUNK) chunks.push(ids.slice(i, i + IN_CHUNK));
  return (await Promise.all(chunks.map(query))).flat();
}

/**
 * Of `recipients`, the documents of `coll` matching `about` (a condition on the author's side,
 * e.g. `{targetAccountId: {$in: authors}}`) whose `accountId` is one of them. Read by `about`
 * alone when that is small (`byAbout`, remembered per status), else by `accountId: {$in:
 * recipients}` in chunks; the same result.
 */
async function relatedAmong(
  query: (filter: Record<string, unknown>, limit: number) => Promise<Related[]>,
  byAbout: Promise<Related[]>,
  about: Record<string, unknown>,
  recipients: Id[],
): Promise<Related[]> {
  const all = await byAbout;
  if (all.length <= BY_TARGET_LIMIT) {
    const wanted = new Set(recipients);
    return all.filter((d) => wanted.has(d.accountId));
  }
  return inChunks(recipients, (chunk) => query({ ...about, accountId: { $in: chunk } }, 0));
}

/** Of `recipients`, those whose feeds may take the status (the insert filters). */
export async function admitted(
  core: Core,
  s: FanOutStatus,
  recipients: Id[],
  authorDomain: string | null,
): Promise<Id[]> {
  if (recipients.length === 0) return [];
  const authors = [s.accountId, ...(s.reblogOfAccountId !== null ? [s.reblogOfAccountId] : [])];
  const now = new Date();
  const among = (name: string, coll: { name: string }, about: Record<string, unknown>) => {
    const query = (filter: Record<string, unknown>, limit: number) =>
      core.db
        .collection<Related>(coll.name)
        .find(filter, { projection: { _id: 0, accountId: 1, expiresAt: 1 }, limit })
        .toArray();
    const byAbout = remembered(core, `${s.statusId}:${name}`, () => query(about, BY_TARGET_LIMIT + 1));
    return relatedAmong(query, byAbout, about, recipients);
  };
  // A reblog is also kept from those who block the reblogged author's domain (Mastodon's filter_from_home?).
  const reblogged =
    s.reblogOfAccountId === null
      ? null
      : await remembered(core, `${s.statusId}:rebloggedDomain`, () =>
          collection(core.db, accounts).findOne({ _id: s.reblogOfAccountId! }, { projection: { domain: 1 } }),
        );
  const domains = [...new Set([authorDomain, reblogged?.domain ?? null])].filter((d): d is string => d !== null);
  const [blocking, muting, domainBlocked, replyFollowers, noReblogs] = await Promise.all([
    among('blocking', blocks, { targetAccountId: { $in: authors } }),
    among('muting', mutes, { targetAccountId: { $in: authors } }),
    domains.length > 0
      ? among('domainBlocked', accountDomainBlocks, { domain: { $in: domains } })
      : Promise.resolve([]),
    s.inReplyToAccountId !== null && s.inReplyToAccountId !== s.accountId
      ? among('replyFollowers', follows, { targetAccountId: s.inReplyToAccountId })
      : Promise.resolve(null),
    s.reblogOfId !== null
      ? among('noReblogs', follows, { targetAccountId: s.accountId, showReblogs: false })
      : Promise.resolve([]),
  ]);
  const out = new Set<bigint>([
    ...blocking.map((b) => b.accountId),
    ...muting.filter((m) => !m.expiresAt || m.expiresAt > now).map((m) => m.accountId),
    ...domainBlocked.map((d) => d.accountId),
    ...noReblogs.map((f) => f.accountId),
  ]);
  const replyOk = replyFollowers ? new Set(replyFollowers.map((f) => f.accountId)) : null;
  return recipients.filter((r) => r === s.accountId || (!out.has(r) && (replyOk === null || replyOk.has(r))));
}
