// The feed writes of a fan-out: home feeds of admitted active users (one Redis call per set of
// recipients), list feeds, and the home feeds of the status's hashtags' followers.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { listMembers, lists } from '../model/lists.ts';
import { tagsByNames } from '../tags/byNames.ts';
import { tagFollows } from '../model/tagFollows.ts';
import { idListCodec, readGroups, type CachedGroup } from '../db/groupCache.ts';
import { addToFeed, feedKey, insertIntoFeeds } from './feeds.ts';
import { activeKey, feedTtlSeconds } from './activity.ts';
import { traceStage } from '../streaming/latencyTrace.ts';
import { authorMemberships, type FanOutStatus } from './authorSide.ts';
import { admitted } from './admitted.ts';

export interface FanOutResult {
  /** Accounts whose home feed took the status. */
  home: Id[];
  /** Lists whose feed took it. */
  lists: Id[];
}

/**
 * Told about every set of feeds that takes the status once, as soon as it is known: for a status
 * (not a reblog, which a feed may skip) before and while those feeds are written, so that the
 * streams get it without waiting for the writes. Awaited before the fan-out resolves.
 */
export type Announce = (feeds: FanOutResult) => Promise<void>;

/**
 * Writes the home feeds of those of `recipients` who are active local users, in one Redis call,
 * then announces them; the ones that took the status.
 */
export async function insertHome(core: Core, s: FanOutStatus, recipients: Id[], announce?: Announce): Promise<Id[]> {
  if (recipients.length === 0) return [];
  const took = await insertIntoFeeds(
    core.redis,
    recipients.map((r) => feedKey('home', r)),
    s.statusId,
    { reblogOf: s.reblogOfId, markers: recipients.map((r) => activeKey(r)), ttlSeconds: feedTtlSeconds(core) },
  );
  traceStage(s.statusId, 'fanout.written');
  const reached = took.map((i) => recipients[i]!);
  await announce?.({ home: reached, lists: [] });
  return reached;
}

export async function fanOutToLists(core: Core, s: FanOutStatus, authorDomain: string | null): Promise<Id[]> {
  if (s.visibility === 'direct') return [];
  const memberships = await authorMemberships(core, s);
  if (memberships.length === 0) return [];
  const found = await collection(core.db, lists)
    .find({ _id: { $in: memberships.map((m) => m.listId) } })
    .toArray();
  const owners = await admitted(core, s, [...new Set(found.map((l) => l.accountId))], authorDomain);
  const allowed = new Set(owners);
  const reached: Id[] = [];
  for (const list of found) {
    if (!allowed.has(list.accountId)) continue;
    if (s.inReplyToAccountId !== null && s.inReplyToAccountId !== s.accountId) {
      // Replies by policy: none; only to list members; or to anyone the owner follows (checked above).
      if (list.repliesPolicy === 'none') continue;
      if (list.repliesPolicy === 'list') {
        const inList = await collection(core.db, listMembers).countDocuments(
          { listId: list._id, accountId: s.inReplyToAccountId },
          { limit: 1 },
        );
        if (inList === 0) continue;
      }
    }
    if (await addToFeed(core.redis, feedKey('list', list._id), s.statusId, s.reblogOfId)) reached.push(list._id);
  }
  return reached;
}

/** A hashtag's followers: tag follows by tag, kept in Redis (db/groupCache.ts, ADR 0023). */
const TAG_FOLLOWERS: CachedGroup = { collection: tagFollows.name, field: 'tagId' };

/** The accounts that follow one of these hashtags (normalized names). */
export async function tagFollowerIds(core: Core, tagNames: string[]): Promise<Id[]> {
  if (tagNames.length === 0) return [];
  const tagIds = (await tagsByNames(core, tagNames)).map((t) => t._id);
  if (tagIds.length === 0) return [];
  const lists = await readGroups(
    core,
    TAG_FOLLOWERS,
    tagIds,
    async (missing) => {
      const out = new Map<Id, Id[] | null>(missing.map((t) => [t, []]));
      const rows = await collection(core.db, tagFollows)
        .find({ tagId: { $in: missing } }, { projection: { _id: 0, accountId: 1, tagId: 1 } })
        .toArray();
      for (const r of rows) out.get(r.tagId)?.push(r.accountId);
      return out;
    },
    idListCodec,
  );
  return [...new Set([...lists.values()].flatMap((l) => l ?? []))];
}

export async function fanOutToTagFollowers(
  core: Core,
  s: FanOutStatus,
  authorDomain: string | null,
  done: Set<bigint>,
  announce?: Announce,
): Promise<Id[]> {
  const followers = await tagFollowerIds(core, s.tagNames);
  if (followers.length === 0) return [];
  const tagged = { ...s, inReplyToAccountId: null };
  const recipients = followers.filter((id) => !done.has(id));
  return insertHome(core, tagged, await admitted(core, tagged, recipients, authorDomain), announce);
}
