// Grouped notifications (/api/v2/notifications) read from the group summaries
// (`notification_groups`, kept by groups.ts), as Mastodon 4.3 pages them:
// - a page holds the groups of the newest notifications in the range, each group once, ranked by
//   its representative: the group's newest notification below `max_id` (paging down) or its oldest
//   above `min_id` (paging up). A summary whose whole group lies in the range is ranked by its
//   `lastId` (`firstId` paging up) straight from an index; a group the cursor cuts (`firstId` <
//   max_id <= `lastId`) needs one indexed read for its representative. Such groups come from a
//   walk over the summaries newer than the cursor, which grows with how deep the client pages.
// - each group's details are taken at the page's upper bound E (Mastodon's pagination range):
//   `notifications_count` counts the group up to E, `sample_account_ids` are the senders of its 8
//   newest up to E, `page_min_id` its oldest at or above the page's lower bound. When E is at or
//   above the group's newest notification (always on the first page) all of this is in the
//   summary; otherwise one read of 8 notifications and one count of those above E.
// Groupable types the request does not group (`grouped_types[]`) are read as single notifications
// from the (accountId, type, _id) index and merged in. Requests the summaries cannot answer
// (`include_filtered`, `account_id`) fall back to the scanning forms in queries.ts.
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { parseId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import {
  GROUPABLE_TYPES,
  groupDocId,
  NOTIFICATION_TYPES,
  notificationGroups,
  notifications,
  SAMPLE_ACCOUNTS_SIZE,
  type GroupSample,
  type NotificationDoc,
  type NotificationGroupDoc,
  type NotificationType,
} from '../model/notifications.ts';
import {
  notificationQuery,
  notificationsMarker,
  scanGroupPage,
  scanUnreadGroupCount,
  type UnreadGroupsQuery,
  truthy,
  typeList,
  type GroupPageParams,
  type NotificationFilter,
  type NotificationGroupData,
} from './queries.ts';

/** The summaries hold only browsable notifications, and are per recipient, not per sender. */
function summariesAnswer(f: NotificationFilter): boolean {
  const byAccount = f.accountId !== undefined && f.accountId !== null && f.accountId !== '';
  return !byAccount && !truthy(f.includeFiltered);
}

interface TypePlan {
  /** Types whose summaries are read; null: every type. */
  summaryTypes: NotificationType[] | null;
  /** Groupable types the request shows one notification at a time. */
  singleTypes: NotificationType[];
}

function typePlan(f: NotificationFilter, grouped: readonly string[]): TypePlan {
  const types = typeList(f.types);
  const exclude = typeList(f.excludeTypes) ?? [];
  const allowed = NOTIFICATION_TYPES.filter((t) => (types === null || types.includes(t)) && !exclude.includes(t));
  const singleTypes = allowed.filter((t) => GROUPABLE_TYPES.includes(t) && !grouped.includes(t));
  const summaryTypes = allowed.filter((t) => !singleTypes.includes(t));
  return { summaryTypes: summaryTypes.length === NOTIFICATION_TYPES.length ? null : summaryTypes, singleTypes };
}

function summaryBase(accountId: Id, plan: TypePlan): Filter<NotificationGroupDoc> {
  return plan.summaryTypes === null ? { accountId } : { accountId, type: { $in: plan.summaryTypes } };
}

const readsSummaries = (plan: TypePlan) => plan.summaryTypes === null || plan.summaryTypes.length > 0;

function inGroup(g: Pick<NotificationGroupDoc, 'accountId' | 'groupKey'>, ids?: Record<string, Id>) {
  return {
    accountId: g.accountId,
    groupKey: g.groupKey,
    filtered: { $ne: true },
    ...(ids && Object.keys(ids).length ? { _id: ids } : {}),
  } as Filter<NotificationDoc>;
}

type Candidate = { rep: Id; summary: NotificationGroupDoc } | { rep: Id; single: NotificationDoc };

const byRepDesc = (a: Candidate, b: Candidate) => (a.rep > b.rep ? -1 : a.rep < b.rep ? 1 : 0);

/** The group's newest (down) or oldest (up) notification within the bounds, from the group index. */
async function representative(
  core: Core,
  g: NotificationGroupDoc,
  bounds: Record<string, Id>,
  direction: 1 | -1,
): Promise<Id | null> {
  const [n] = await collection(core.db, notifications)
    .find(inGroup(g, bounds), { projection: { _id: 1 } })
    .sort({ _id: direction })
    .limit(1)
    .toArray();
  return n?._id ?? null;
}

async function singles(
  core: Core,
  accountId: Id,
  plan: TypePlan,
  bounds: Record<string, Id>,
  direction: 1 | -1,
  limit: number,
): Promise<Candidate[]> {
  const lists = await Promise.all(
    plan.singleTypes.map((type) =>
      collection(core.db, notifications)
        .find({
          accountId,
          type,
          filtered: { $ne: true },
          ...(Object.keys(bounds).length ? { _id: bounds } : {}),
        } as Filter<NotificationDoc>)
        .sort({ _id: direction })
        .limit(limit)
        .toArray(),
    ),
  );
  return lists.flat().map((n) => ({ rep: n._id, single: n }));
}

/** Paging down (newest first, `max_id`/`since_id`): the page's candidates, newest first. */
async function pageDown(core: Core, accountId: Id, plan: TypePlan, p: GroupPageParams): Promise<Candidate[]> {
  const bounds: Record<string, Id> = {};
  if (p.maxId !== null) bounds.$lt = p.maxId;
  if (p.sinceId !== null) bounds.$gt = p.sinceId;
  const groups = collection(core.db, notificationGroups);
  const base = summaryBase(accountId, plan);
  const tasks: Promise<Candidate[]>[] = [singles(core, accountId, plan, bounds, -1, p.limit)];
  if (readsSummaries(plan)) {
    tasks.push(
      groups
        .find({ ...base, ...(Object.keys(bounds).length ? { lastId: bounds } : {}) })
        .sort({ lastId: -1 })
        .limit(p.limit)
        .toArray()
        .then((list) => list.map((g) => ({ rep: g.lastId, summary: g }))),
    );
    const maxId = p.maxId;
    if (maxId !== null)
      tasks.push(
        (async () => {
          // A cut group's details are read at a bound below its newest, never from its samples.
          const cut = await groups
            .find({ ...base, lastId: { $gte: maxId }, firstId: { $lt: maxId } }, { projection: { samples: 0 } })
            .sort({ lastId: 1 })
            .toArray();
          const reps = await Promise.all(cut.map((g) => representative(core, g, bounds, -1)));
          return cut.flatMap((g, i) => {
            const rep = reps[i];
            return rep === null ? [] : [{ rep, summary: g }];
          });
        })(),
      );
  }
  return (await Promise.all(tasks)).flat().sort(byRepDesc).slice(0, p.limit);
}

/** Paging up (`min_id`): the oldest groups above it; returned newest first like every page. */
async function pageUp(
  core: Core,
  accountId: Id,
  plan: TypePlan,
  p: GroupPageParams & { minId: Id },
): Promise<Candidate[]> {
  const bounds: Record<string, Id> = { $gt: p.minId };
  if (p.maxId !== null) bounds.$lt = p.maxId;
  const groups = collection(core.db, notificationGroups);
  const base = summaryBase(accountId, plan);
  const tasks: Promise<Candidate[]>[] = [singles(core, accountId, plan, bounds, 1, p.limit)];
  if (readsSummaries(plan)) {
    tasks.push(
      groups
        .find({ ...base, firstId: bounds })
        .sort({ firstId: 1 })
        .limit(p.limit)
        .toArray()
        .then((list) => list.map((g) => ({ rep: g.firstId, summary: g }))),
      (async () => {
        const cut = await groups
          .find({ ...base, lastId: { $gt: p.minId }, firstId: { $lte: p.minId } })
          .sort({ lastId: 1 })
          .toArray();
        const reps = await Promise.all(cut.map((g) => representative(core, g, bounds, 1)));
        return cut.flatMap((g, i) => {
          const rep = reps[i];
          return rep === null ? [] : [{ rep, summary: g }];
        });
      })(),
    );
  }
  const all = (await Promise.all(tasks)).flat().sort(byRepDesc);
  return all.slice(Math.max(0, all.length - p.limit));
}

function sampleIds(samples: readonly GroupSample[]): Id[] {
  const seen = new Set<Id>();
  const out: Id[] = [];
  for (const s of [...samples].sort((a, b) => (a.id > b.id ? -1 : a.id < b.id ? 1 : 0))) {
    if (seen.has(s.id)) continue;
    seen.add(s.id);
    if (!out.includes(s.from)) out.push(s.from);
    if (seen.size >= SAMPLE_ACCOUNTS_SIZE) break;
  }
  return out;
}

interface GroupFacts {
  mostRecentId: Id;
  count: number;
  pageMinId: Id;
  sampleAccountIds: Id[];
}

/** A summarised group's details at the page's range [begin, end] (null: unbounded). */
async function summaryFacts(
  core: Core,
  g: NotificationGroupDoc,
  begin: Id | null,
  end: Id | null,
): Promise<GroupFacts | null> {
  const coll = collection(core.db, notifications);
  let facts: Omit<GroupFacts, 'pageMinId'>;
  if (end === null || end >= g.lastId) {
    facts = { mostRecentId: g.lastId, count: g.count, sampleAccountIds: sampleIds(g.samples) };
  } else {
    const [recent, newer] = await Promise.all([
      coll
        .find(inGroup(g, { $lte: end }), { projection: { _id: 1, fromAccountId: 1 } })
        .sort({ _id: -1 })
        .limit(SAMPLE_ACCOUNTS_SIZE)
        .toArray(),
      coll.countDocuments(inGroup(g, { $gt: end })),
    ]);
    if (recent.length === 0) return null;
    facts = {
      mostRecentId: recent[0]._id,
      count: Math.max(g.count - newer, recent.length),
      sampleAccountIds: sampleIds(recent.map((n) => ({ id: n._id, from: n.fromAccountId }))),
    };
  }
  let pageMinId = g.firstId;
  if (begin !== null && begin > g.firstId)
    pageMinId = (await representative(core, g, { $gte: begin }, 1)) ?? facts.mostRecentId;
  return { ...facts, pageMinId };
}

/** Details of the page's groups, with the notifications they show (in page order). */
async function present(
  core: Core,
  page: Candidate[],
  begin: Id | null,
  end: Id | null,
): Promise<NotificationGroupData[]> {
  const facts = await Promise.all(
    page.map((c): Promise<GroupFacts | null> =>
      'single' in c
        ? Promise.resolve({
            mostRecentId: c.single._id,
            count: 1,
            pageMinId: c.single._id,
            sampleAccountIds: [c.single.fromAccountId],
          })
        : summaryFacts(core, c.summary, begin, end),
    ),
  );
  const wanted = page.flatMap((c, i) => ('single' in c || !facts[i] ? [] : [facts[i].mostRecentId]));
  const docs = new Map<Id, NotificationDoc>(
    (await findInOrder(collection(core.db, notifications), wanted)).map((n) => [n._id, n]),
  );
  return page.flatMap((c, i) => {
    const f = facts[i];
    if (!f) return [];
    const mostRecent = 'single' in c ? c.single : docs.get(f.mostRecentId);
    if (!mostRecent) return [];
    return [
      {
        groupKey: 'single' in c ? `ungrouped-${c.single._id}` : c.summary.groupKey,
        type: mostRecent.type,
        statusId: mostRecent.statusId,
        count: f.count,
        mostRecent,
        pageMinId: f.pageMinId,
        sampleAccountIds: f.sampleAccountIds,
      },
    ];
  });
}

export interface GroupPage {
  groups: NotificationGroupData[];
  /** The representatives of the page's last and first groups (Link `max_id` and `min_id`). */
  oldest: Id | null;
  newest: Id | null;
}

/** One page of notification groups for `accountId`, newest first. */
export async function groupPage(
  core: Core,
  accountId: Id,
  f: NotificationFilter,
  grouped: readonly string[],
  p: GroupPageParams,
): Promise<GroupPage> {
  if (p.limit === 0) return { groups: [], oldest: null, newest: null };
  if (!summariesAnswer(f)) {
    const groups = await scanGroupPage(core, notificationQuery(accountId, f), grouped, p);
    const ids = groups.flatMap((g) => [g.pageMinId, g.mostRecent._id]);
    return {
      groups,
      oldest: ids.length ? ids.reduce((a, b) => (a < b ? a : b)) : null,
      newest: ids.length ? ids.reduce((a, b) => (a > b ? a : b)) : null,
    };
  }
  const plan = typePlan(f, grouped);
  const minId = p.minId;
  const page =
    minId !== null ? await pageUp(core, accountId, plan, { ...p, minId }) : await pageDown(core, accountId, plan, p);
  if (page.length === 0) return { groups: [], oldest: null, newest: null };
  const first = page[0].rep;
  const last = page[page.length - 1].rep;
  // Mastodon's pagination range: the page's own span, or up to the cursor when the page is short.
  let begin: Id | null = last;
  let end: Id | null = first;
  if (page.length < p.limit) {
    if (minId !== null) end = p.maxId !== null ? p.maxId - 1n : null;
    else begin = p.sinceId !== null ? p.sinceId + 1n : null;
  }
  return { groups: await present(core, page, begin, end), oldest: last, newest: first };
}

/** One group by key, whole (`/api/v2/notifications/:group_key`); null when the caller has none. */
export async function groupByKey(core: Core, accountId: Id, groupKey: string): Promise<NotificationGroupData | null> {
  const summary = await collection(core.db, notificationGroups).findOne({ _id: groupDocId(accountId, groupKey) });
  if (summary) return (await present(core, [{ rep: summary.lastId, summary }], null, null))[0] ?? null;
  // `ungrouped-<id>` also names a notification of a groupable type that a request did not group.
  if (!groupKey.startsWith('ungrouped-')) return null;
  const id = parseId(groupKey.slice('ungrouped-'.length));
  const n =
    id === null
      ? null
      : await collection(core.db, notifications).findOne({ _id: id, accountId, filtered: { $ne: true } });
  return n ? ((await present(core, [{ rep: n._id, single: n }], null, null))[0] ?? null) : null;
}

/** The notifications of a group, for its accounts: the group by key, or the one notification of `ungrouped-<id>`. */
export function groupMembersQuery(accountId: Id, groupKey: string): Filter<NotificationDoc> {
  if (groupKey.startsWith('ungrouped-')) {
    const id = parseId(groupKey.slice('ungrouped-'.length));
    // Under $and, so that a page's `_id` range can be added beside it.
    return { accountId, filtered: { $ne: true }, $and: [{ _id: id ?? -1n }] } as Filter<NotificationDoc>;
  }
  return { accountId, groupKey, filtered: { $ne: true } } as Filter<NotificationDoc>;
}

/** Groups with a notification newer than the notifications marker, counted up to `limit`. */
export async function unreadGroupCount(core: Core, query: UnreadGroupsQuery): Promise<number> {
  const { accountId, filter: f, grouped, limit } = query;
  if (!summariesAnswer(f)) return scanUnreadGroupCount(core, query);
  const marker = await notificationsMarker(core, accountId);
  const plan = typePlan(f, grouped);
  const counts = await Promise.all([
    readsSummaries(plan)
      ? collection(core.db, notificationGroups).countDocuments(
          { ...summaryBase(accountId, plan), lastId: { $gt: marker } },
          { limit },
        )
      : Promise.resolve(0),
    ...plan.singleTypes.map((type) =>
      collection(core.db, notifications).countDocuments(
        { accountId, type, filtered: { $ne: true }, _id: { $gt: marker } } as Filter<NotificationDoc>,
        { limit },
      ),
    ),
  ]);
  return Math.min(
    limit,
    counts.reduce((a, b) => a + b, 0),
  );
}
