// What a status's fan-out asks about its author's side (who blocks or mutes the author, which lists
// hold them), kept per status for a few seconds in this process: the same for every slice of a big
// account's fan-out, and read for a consumer's whole batch at once (rememberAuthorSides).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { listMembers, lists } from '../model/lists.ts';
import type { StatusDoc, Visibility } from '../model/statuses.ts';
import { TtlCache, cachePerOwner } from '../cache/ttlCache.ts';
import { readThrough } from '../db/docCache.ts';
import { accountView } from '../model/accounts.ts';

export interface FanOutStatus {
  statusId: Id;
  accountId: Id;
  visibility: Visibility;
  inReplyToAccountId: Id | null;
  mentionedAccountIds: Id[];
  tagNames: string[];
  reblogOfId: Id | null;
  reblogOfAccountId: Id | null;
}

/** What fan-out needs of a stored status (for slice jobs, which carry only ids). */
export function fanOutStatusOf(doc: StatusDoc): FanOutStatus {
  return {
    statusId: doc._id,
    accountId: doc.accountId,
    visibility: doc.visibility,
    inReplyToAccountId: doc.inReplyToAccountId,
    mentionedAccountIds: doc.mentionedAccountIds,
    tagNames: doc.tagNames,
    reblogOfId: doc.reblogOfId,
    reblogOfAccountId: doc.reblogOfAccountId,
  };
}

/** Where `remembered` keeps a status's first follower page (read ahead for a batch). */
export const followerListKey = (statusId: Id) => `${statusId}:followerList`;

/**
 * Relations to the author are read from the author's side (indexed by target, usually few: who
 * blocks or mutes this account) when there are at most this many; beyond, by the recipients.
 */
export const BY_TARGET_LIMIT = 5000;

export interface Related {
  accountId: Id;
  expiresAt?: Date | null;
}

/**
 * What every slice of one status asks about its author's side (who blocks, mutes or follows
 * without reblogs the author, whose exclusive lists hold them): the same for all its slices, so
 * each process keeps the answers for a few seconds instead of asking the database once per slice
 * of a big account. A block or mute made meanwhile takes the author's statuses out of that feed
 * through its own event, as for any status fanned out before it.
 */
const AUTHOR_SIDE_MS = 10_000;
const authorSideOf = cachePerOwner(() => new TtlCache<string, Promise<unknown>>(AUTHOR_SIDE_MS, 1000));

export function remembered<T>(core: Core, key: string, load: () => Promise<T>): Promise<T> {
  const memo = authorSideOf(core.db);
  const hit = memo.get(key);
  if (hit) return hit as Promise<T>;
  const value = load();
  value.catch(() => memo.delete(key));
  memo.set(key, value);
  return value;
}

/** The author-side answers of a status whose author nobody blocks, mutes or lists (fanOutFilters.ts). */
export function rememberNoAuthorSide(core: Core, s: FanOutStatus): void {
  for (const name of AUTHOR_SIDES) void remembered(core, `${s.statusId}:${name}`, async () => []);
}
const AUTHOR_SIDES = ['blocking', 'muting', 'memberships'];

/** The lists that hold the author, read once per status (exclusive owners and list feeds both need them). */
export function authorMemberships(core: Core, s: FanOutStatus): Promise<Array<{ listId: Id }>> {
  return remembered(core, `${s.statusId}:memberships`, () =>
    collection(core.db, listMembers)
      .find({ accountId: s.accountId }, { projection: { _id: 0, listId: 1 } })
      .toArray(),
  );
}

/**
 * The author-side answers of a consumer's batch of new statuses in one read per kind (who blocks
 * or mutes each author, which lists hold them), handed to `remembered` under each status's keys:
 * a status's fan-out then asks the database only for its followers. An answer too big to share
 * (BY_TARGET_LIMIT) is left for the status to read as before.
 */
export async function rememberAuthorSides(core: Core, batch: readonly FanOutStatus[]): Promise<void> {
  let plain = batch.filter((s) => s.reblogOfId === null && s.visibility !== 'direct');
  if (plain.length < 2) return;
  // Authors known to be in nobody's blocks, mutes or lists are left out: each status's fan-out
  // answers for them without a read (fanOutStatus, fanOutFilters.ts).
  const known = await readThrough(core, accountView, [...new Set(plain.map((s) => s.accountId))]);
  plain = plain.filter((s) => known.get(s.accountId)?.fanOutFilters !== false);
  if (plain.length < 2) return;
  const authors = [...new Set(plain.map((s) => s.accountId))];
  const byTarget = (name: string) =>
    core.db
      .collection<Related & { targetAccountId: Id }>(name)
      .find(
        { targetAccountId: { $in: authors } },
        { projection: { _id: 0, accountId: 1, expiresAt: 1, targetAccountId: 1 }, limit: BY_TARGET_LIMIT + 1 },
      )
      .toArray();
  const [blocking, muting, memberships] = await Promise.all([
    byTarget(blocks.name),
    byTarget(mutes.name),
    collection(core.db, listMembers)
      .find({ accountId: { $in: authors } }, { projection: { _id: 0, listId: 1, accountId: 1 } })
      .toArray(),
  ]);
  const of = <T extends object>(rows: T[], key: (r: T) => Id, author: Id, strip: (r: T) => object) =>
    rows.filter((r) => key(r) === author).map(strip);
  const sides = Object.entries({ blocking, muting }).filter(([, rows]) => rows.length <= BY_TARGET_LIMIT);
  for (const s of plain) {
    for (const [name, rows] of sides)
      remembered(core, `${s.statusId}:${name}`, async () =>
        of(
          rows,
          (r) => r.targetAccountId,
          s.accountId,
          ({ accountId, expiresAt }) => ({ accountId, expiresAt }),
        ),
      );
    remembered(core, `${s.statusId}:memberships`, async () =>
      of(
        memberships,
        (r) => r.accountId,
        s.accountId,
        ({ listId }) => ({ listId }),
      ),
    );
  }
}

/** Owners of exclusive lists that hold the author: the status goes to that list, not their home. */
export async function exclusiveListOwners(core: Core, s: FanOutStatus): Promise<Set<bigint>> {
  const memberships = await authorMemberships(core, s);
  if (memberships.length === 0) return new Set();
  const exclusive = await collection(core.db, lists)
    .find({ _id: { $in: memberships.map((m) => m.listId) }, exclusive: true }, { projection: { accountId: 1 } })
    .toArray();
  return new Set(exclusive.map((l) => l.accountId));
}
