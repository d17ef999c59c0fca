// Silenced ("limited") accounts: their posts leave public and hashtag timelines, trends and search
// for everyone who does not follow them. (Their notifications to non-followers are filtered into
// requests by the recipient's notification policy, `for_limited_accounts`.)
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { followedAmong } from '../graph/relations.ts';

/** The silenced accounts among `ids`. */
export async function silencedAmong(core: Core, ids: Id[]): Promise<Set<bigint>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Set();
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: unique }, silencedAt: { $ne: null } }, { projection: { _id: 1 } })
    .toArray();
  return new Set(found.map((a) => a._id));
}

/** `list` without statuses of silenced authors the viewer does not follow (the viewer's own stay). */
export async function withoutLimitedAuthors<T extends Pick<StatusDoc, 'accountId'>>(
  core: Core,
  viewer: CachedAccount | null,
  list: T[],
): Promise<T[]> {
  const silenced = await silencedAmong(
    core,
    list.map((s) => s.accountId),
  );
  return withoutSilencedAuthors(core, viewer, list, silenced);
}

/**
 * The same when the caller already knows which authors are silenced (`silenced`) and perhaps
 * whom among them the viewer follows (`followed`, saving the query for those).
 */
export async function withoutSilencedAuthors<T extends Pick<StatusDoc, 'accountId'>>(
  core: Core,
  viewer: CachedAccount | null,
  list: T[],
  silenced: Set<bigint>,
  followed: Set<bigint> = new Set(),
): Promise<T[]> {
  if (silenced.size === 0) return list;
  const unknown = [...silenced].filter((id) => id !== viewer?._id && !followed.has(id));
  const alsoFollowed = viewer ? await followedAmong(core, viewer._id, unknown) : new Set<bigint>();
  return list.filter(
    (s) =>
      !silenced.has(s.accountId) ||
      s.accountId === viewer?._id ||
      followed.has(s.accountId) ||
      alsoFollowed.has(s.accountId),
  );
}
