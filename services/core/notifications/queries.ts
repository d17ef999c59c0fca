// Reading notifications as the REST API does: the type/account filters, the notifications marker
// (unread counts), and the grouping of /api/v2/notifications.
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { parseId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { markers } from '../model/markers.ts';
import {
  GROUPABLE_TYPES,
  NOTIFICATION_TYPES,
  notifications,
  type NotificationDoc,
  type NotificationType,
} from '../model/notifications.ts';

export interface NotificationFilter {
  types?: unknown;
  excludeTypes?: unknown;
  accountId?: unknown;
  /** Also notifications held back by the policy (`include_filtered`; implied by `account_id`). */
  includeFiltered?: unknown;
}

export function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && /^(1|t|true|on)$/i.test(v));
}

/** Known type names of a `types[]`-like parameter; unknown names are ignored as Mastodon does. */
export function typeList(raw: unknown): NotificationType[] | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const list = Array.isArray(raw) ? raw : [raw];
  return list.filter((t): t is NotificationType => NOTIFICATION_TYPES.includes(t as NotificationType));
}

export function notificationQuery(accountId: Id, f: NotificationFilter): Filter<NotificationDoc> {
  const q: Filter<NotificationDoc> = { accountId };
  const types = typeList(f.types);
  const exclude = typeList(f.excludeTypes);
  if (types !== null && exclude !== null) q.type = { $in: types.filter((t) => !exclude.includes(t)) };
  else if (types !== null) q.type = { $in: types };
  else if (exclude !== null && exclude.length) q.type = { $nin: exclude };
  const byAccount = f.accountId !== undefined && f.accountId !== null && f.accountId !== '';
  if (byAccount) {
    const from = parseId(f.accountId);
    q.fromAccountId = from ?? -1n;
  }
  // Mastodon's Notification.browserable: filtered ones only on request or for one sender.
  if (!byAccount && !truthy(f.includeFiltered)) q.filtered = { $ne: true };
  return q;
}

/** The `last_read_id` of the account's notifications marker, as an id (0 when none). */
export async function notificationsMarker(core: Core, accountId: Id): Promise<Id> {
  const m = await collection(core.db, markers).findOne({ accountId, timeline: 'notifications' });
  return (m && parseId(m.lastReadId)) ?? 0n;
}

/** Notifications newer than the marker, counted up to `limit`. */
export async function unreadCount(core: Core, accountId: Id, f: NotificationFilter, limit: number): Promise<number> {
  const marker = await notificationsMarker(core, accountId);
  const q = { ...notificationQuery(accountId, f), _id: { $gt: marker } } as Filter<NotificationDoc>;
  return collection(core.db, notifications).countDocuments(q, { limit });
}

/** The key a notification is grouped under, given the grouped types of the request. */
export function effectiveGroupKey(
  n: Pick<NotificationDoc, '_id' | 'type' | 'groupKey'>,
  grouped: readonly string[],
): string {
  return grouped.includes(n.type) && !n.groupKey.startsWith('ungrouped-') ? n.groupKey : `ungrouped-${n._id}`;
}

export function groupedTypes(raw: unknown): readonly string[] {
  const list = typeList(raw);
  return list === null ? GROUPABLE_TYPES : list;
}

export interface NotificationGroupData {
  groupKey: string;
  type: NotificationType;
  statusId: Id | null;
  /** `notifications_count`: the group's notifications up to `mostRecent`. */
  count: number;
  /** `most_recent_notification_id` / `page_max_id`. */
  mostRecent: NotificationDoc;
  /** `page_min_id`: the group's oldest notification within the page's range. */
  pageMinId: Id;
  /** Senders of the newest notifications up to `mostRecent` (at most 8, newest first). */
  sampleAccountIds: Id[];
}

export interface GroupPageParams {
  maxId: Id | null;
  sinceId: Id | null;
  minId: Id | null;
  limit: number;
}

function range(p: GroupPageParams): Record<string, Id> {
  const r: Record<string, Id> = {};
  if (p.maxId !== null) r.$lt = p.maxId;
  const lower = p.minId ?? p.sinceId;
  if (lower !== null) r.$gt = lower;
  return r;
}

// The scanning forms below read notifications themselves; they serve only what the summaries do
// not hold (`include_filtered`, `account_id`): see groupPages.ts for the normal path.

/** Details of a group within the pagination range (count, newest, oldest, up to 8 accounts). */
export async function scanGroupData(
  core: Core,
  base: Filter<NotificationDoc>,
  key: string,
  p: Pick<GroupPageParams, 'maxId' | 'sinceId' | 'minId'>,
): Promise<NotificationGroupData | null> {
  const coll = collection(core.db, notifications);
  if (key.startsWith('ungrouped-')) {
    const id = parseId(key.slice('ungrouped-'.length));
    const n = id === null ? null : await coll.findOne({ ...base, _id: id } as Filter<NotificationDoc>);
    if (!n) return null;
    return {
      groupKey: key,
      type: n.type,
      statusId: n.statusId,
      count: 1,
      mostRecent: n,
      pageMinId: n._id,
      sampleAccountIds: [n.fromAccountId],
    };
  }
  const r = range({ ...p, limit: 0 });
  const q = { ...base, groupKey: key, ...(Object.keys(r).length ? { _id: r } : {}) } as Filter<NotificationDoc>;
  const [recent, oldest, count] = await Promise.all([
    coll.find(q).sort({ _id: -1 }).limit(8).toArray(),
    coll.find(q).sort({ _id: 1 }).limit(1).toArray(),
    coll.countDocuments(q),
  ]);
  if (recent.length === 0) return null;
  return {
    groupKey: key,
    type: recent[0].type,
    statusId: recent[0].statusId,
    count,
    mostRecent: recent[0],
    pageMinId: (oldest[0] ?? recent[0])._id,
    sampleAccountIds: [...new Set(recent.map((n) => n.fromAccountId))],
  };
}

/**
 * One page of groups, newest first: the groups of the newest notifications in the range, each
 * represented once; the scan skips groups already seen in the database query itself.
 */
export async function scanGroupPage(
  core: Core,
  base: Filter<NotificationDoc>,
  grouped: readonly string[],
  p: GroupPageParams,
): Promise<NotificationGroupData[]> {
  if (p.limit === 0) return [];
  const coll = collection(core.db, notifications);
  const ascending = p.minId !== null;
  const keys: string[] = [];
  const seenStored: string[] = [];
  let cursor: Id | null = null;
  const r = range(p);
  for (let round = 0; round < 50 && keys.length < p.limit; round++) {
    const idRange: Record<string, Id> = { ...r };
    if (cursor !== null) {
      if (ascending) idRange.$gt = cursor;
      else idRange.$lt = cursor;
    }
    const q = {
      ...base,
      ...(Object.keys(idRange).length ? { _id: idRange } : {}),
      ...(seenStored.length ? { groupKey: { $nin: seenStored } } : {}),
    } as Filter<NotificationDoc>;
    const batch = await coll
      .find(q, { projection: { _id: 1, type: 1, groupKey: 1 } })
      .sort({ _id: ascending ? 1 : -1 })
      .limit(Math.max(p.limit - keys.length, 10))
      .toArray();
    if (batch.length === 0) break;
    for (const n of batch) {
      const key = effectiveGroupKey(n, grouped);
      if (keys.includes(key)) continue;
      if (keys.length >= p.limit) break;
      keys.push(key);
      if (!key.startsWith('ungrouped-')) seenStored.push(key);
    }
    cursor = batch[batch.length - 1]._id;
  }
  const groups = await Promise.all(keys.map((k) => scanGroupData(core, base, k, p)));
  const out = groups.filter((g): g is NotificationGroupData => g !== null);
  out.sort((a, b) => (a.mostRecent._id > b.mostRecent._id ? -1 : a.mostRecent._id < b.mostRecent._id ? 1 : 0));
  return out;
}

/** Whose unread notification groups to count, of which types, which types group, and up to how many. */
export interface UnreadGroupsQuery {
  accountId: Id;
  filter: NotificationFilter;
  grouped: readonly string[];
  limit: number;
}

/** Distinct groups newer than the marker, counted up to `limit`. */
export async function scanUnreadGroupCount(
  core: Core,
  { accountId, filter: f, grouped, limit }: UnreadGroupsQuery,
): Promise<number> {
  const marker = await notificationsMarker(core, accountId);
  const q = { ...notificationQuery(accountId, f), _id: { $gt: marker } } as Filter<NotificationDoc>;
  const keys = new Set<string>();
  const cursor = collection(core.db, notifications)
    .find(q, { projection: { _id: 1, type: 1, groupKey: 1 } })
    .sort({ _id: -1 })
    .limit(10_000);
  for await (const n of cursor) {
    keys.add(effectiveGroupKey(n, grouped));
    if (keys.size >= limit) break;
  }
  return keys.size;
}
