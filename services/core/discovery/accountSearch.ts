// Account search (GET /api/v1/accounts/search): a case-insensitive prefix of the username or the
// display name, both served by an index (an anchored range, not a regex scan); `user@domain`
// narrows to that domain; `following` to accounts the viewer follows.
import type { Core } from '../context.ts';
import { followedAmong } from '../graph/relations.ts';
import type { Filter } from 'mongodb';
import { collection } from '../db/mongo.ts';
import { accounts, visibleAccountFilter, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';

export interface AccountSearch {
  q: string;
  limit: number;
  offset: number;
  following: boolean;
}

/**
 * The index range of every string starting with `prefix`: from the prefix up to (excluded) the
 * prefix with its last code point incremented. MongoDB orders strings by their UTF-8 bytes, which
 * is code point order, so this also holds names going on with emoji or other characters above
 * U+FFFF (a `${prefix}\uffff` bound would leave those out).
 */
export function prefixRange(prefix: string): { $gte: string; $lt?: string } {
  const points = [...prefix];
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return { $gte: prefix, $lt: points.join('') + String.fromCodePoint(next) };
    }
  }
  return { $gte: prefix };
}

export async function searchAccounts(
  core: Core,
  viewer: CachedAccount | null,
  s: AccountSearch,
): Promise<AccountDoc[]> {
  const raw = s.q.trim().replace(/^@/, '').toLowerCase();
  if (!raw) return [];
  const [name, domainPart] = raw.split('@', 2) as [string, string | undefined];
  const base: Filter<AccountDoc> = { suspendedAt: null, ...visibleAccountFilter };
  if (domainPart !== undefined) {
    const local = domainPart === core.config.localDomain.toLowerCase();
    base.domain = local ? null : domainPart;
  }
  if (s.following) {
    if (!viewer) return [];
    const ids = (
      await collection(core.db, follows)
        .find({ accountId: viewer._id }, { projection: { targetAccountId: 1 } })
        .toArray()
    ).map((f) => f.targetAccountId);
    base._id = { $in: ids };
  }
  const want = s.offset + s.limit;
  const [byUsername, byDisplayName] = await Promise.all([
    collection(core.db, accounts)
      .find({ ...base, usernameLower: prefixRange(name) })
      .limit(want)
      .toArray(),
    name && domainPart === undefined
      ? collection(core.db, accounts)
          .find({ ...base, displayNameLower: prefixRange(name) })
          .limit(want)
          .toArray()
      : Promise.resolve([]),
  ]);
  // Exact username first, then local accounts, then the most followed.
  const merged = new Map<bigint, AccountDoc>();
  for (const a of [...byUsername, ...byDisplayName]) merged.set(a._id, a);
  const ranked = [...merged.values()].sort(
    (a, b) =>
      Number(b.usernameLower === name) - Number(a.usernameLower === name) ||
      Number(a.domain !== null) - Number(b.domain !== null) ||
      b.followersCount - a.followersCount,
  );
  // Silenced (limited) accounts show up only for those who follow them.
  const limited = ranked.filter((a) => a.silencedAt && a._id !== viewer?._id).map((a) => a._id);
  const followed = viewer && limited.length ? await followedAmong(core, viewer._id, limited) : new Set<bigint>();
  const shown = ranked.filter((a) => !limited.includes(a._id) || followed.has(a._id));
  return shown.slice(s.offset, s.offset + s.limit);
}
