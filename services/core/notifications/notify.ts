// Creating notifications (Mastodon's NotifyService): the suppression rules, then one insert that a
// unique index makes idempotent. Callers (the notifications pipeline) publish what was created.
//
// Never notified: a non-local recipient; yourself (except a poll you made); from an account the
// recipient blocks, hard-mutes (mute with notifications) or whose domain they block; about a
// status in a conversation the recipient muted; from an account that blocks the recipient.
import type { Core } from '../context.ts';
import { batch } from '../db/redis.ts';
import { mgetAcrossSlots } from '../db/redisSlots.ts';
import { nextSerialIds, type Id } from '../ids.ts';
import { collection, insertNew } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { conversationMutes } from '../model/conversations.ts';
import { statuses } from '../model/statuses.ts';
import { recordedPairs } from '../model/accountRecord.ts';
import { policyDecisions } from './policy.ts';
import { addToGroups, rebuildGroup } from './groups.ts';
import { recordFilteredNotification } from './requests.ts';
import { GROUPABLE_TYPES, notifications, type NotificationDoc, type NotificationType } from '../model/notifications.ts';

export interface NotificationRequest {
  type: NotificationType;
  /** The recipient. */
  accountId: Id;
  fromAccountId: Id;
  statusId?: Id | null;
  /** Distinguishes repeated notifications about one status (an edit's time for `update`). */
  variant?: string;
  /** When the activity happened (grouping window); now by default. */
  at?: Date;
  /** `admin.report`: the report. */
  reportId?: Id | null;
  /** `moderation_warning`: the strike. */
  warningId?: Id | null;
  /** `added_to_collection`, `collection_update`: the collection (it also tells them apart). */
  collectionId?: Id | null;
}

/** Hours a group of favourites/reblogs/follows may span (Mastodon's MAXIMUM_GROUP_SPAN_HOURS). */
const GROUP_SPAN_HOURS = 12;

export function notificationUniqueKey(r: NotificationRequest): string {
  const base = `${r.type}:${r.fromAccountId}:${r.accountId}:${r.statusId ?? (r.collectionId ? `c${r.collectionId}` : '')}`;
  return r.variant ? `${base}:${r.variant}` : base;
}

/** What the suppression rules need to know about a batch of requests, read in one round of queries. */
interface SuppressionFacts {
  accounts: Map<Id, { domain: string | null; suspendedAt?: Date | null; silencedAt?: Date | null; createdAt: Date }>;
  /** `<blocker>:<blocked>` */
  blocks: Set<string>;
  /** `<recipient>:<sender>` of mutes that hide notifications and have not expired. */
  hardMutes: Set<string>;
  /** `<recipient>:<domain>` */
  domainBlocks: Set<string>;
  statuses: Map<Id, { conversationId: Id | null; deletedAt: Date | null }>;
  /** `<recipient>:<conversationId>` */
  conversationMutes: Set<string>;
}

const pair = (a: unknown, b: unknown) => `${String(a)}:${String(b)}`;

async function suppressionFacts(core: Core, rs: readonly NotificationRequest[]): Promise<SuppressionFacts> {
  const recipients = [...new Set(rs.map((r) => r.accountId))];
  const senders = [...new Set(rs.map((r) => r.fromAccountId))];
  const statusIds = [...new Set(rs.map((r) => r.statusId).filter((s): s is Id => s !== null && s !== undefined))];
  const [accountDocs, blocksOut, blocksIn, muteDocs, statusDocs] = await Promise.all([
    collection(core.db, accounts)
      .find(
        { _id: { $in: [...new Set([...recipients, ...senders])] } },
        {
          projection: { domain: 1, suspendedAt: 1, silencedAt: 1, createdAt: 1 },
        },
      )
      .toArray(),
    recordedPairs(core.db, blocks, recipients, 'targetAccountId', senders),
    recordedPairs(core.db, blocks, senders, 'targetAccountId', recipients),
    collection(core.db, mutes)
      .find({ accountId: { $in: recipients }, targetAccountId: { $in: senders }, hideNotifications: true })
      .toArray(),
    statusIds.length
      ? collection(core.db, statuses)
          .find({ _id: { $in: statusIds } }, { projection: { conversationId: 1, deletedAt: 1 } })
          .toArray()
      : Promise.resolve([]),
  ]);
  const facts: SuppressionFacts = {
    accounts: new Map(accountDocs.map((a) => [a._id, a])),
    blocks: new Set([...blocksOut, ...blocksIn]),
    hardMutes: new Set(),
    domainBlocks: new Set(),
    statuses: new Map(statusDocs.map((s) => [s._id, { conversationId: s.conversationId, deletedAt: s.deletedAt }])),
    conversationMutes: new Set(),
  };
  const now = new Date();
  for (const m of muteDocs)
    if (m.expiresAt === null || m.expiresAt > now) facts.hardMutes.add(pair(m.accountId, m.targetAccountId));
  const domains = [
    ...new Set(senders.map((s) => facts.accounts.get(s)?.domain).filter((d): d is string => typeof d === 'string')),
  ].map((d) => d.toLowerCase());
  const conversationIds = [
    ...new Set([...facts.statuses.values()].map((s) => s.conversationId).filter((c): c is Id => c !== null)),
  ];
  [facts.domainBlocks, facts.conversationMutes] = await Promise.all([
    recordedPairs(core.db, accountDomainBlocks, recipients, 'domain', domains),
    recordedPairs(core.db, conversationMutes, recipients, 'conversationId', conversationIds),
  ]);
  return facts;
}

function suppressedBy(facts: SuppressionFacts, r: NotificationRequest): boolean {
  // A poll's own author and the target of a strike (it is "from" themselves) are notified.
  if (r.accountId === r.fromAccountId && r.type !== 'poll' && r.type !== 'moderation_warning') return true;
  const recipient = facts.accounts.get(r.accountId);
  const sender = facts.accounts.get(r.fromAccountId);
  if (!recipient || recipient.domain !== null || !sender) return true;
  if (recipient.suspendedAt) return true;
  if (r.accountId === r.fromAccountId) return false;
  if (facts.blocks.has(pair(r.accountId, r.fromAccountId)) || facts.blocks.has(pair(r.fromAccountId, r.accountId)))
    return true;
  if (sender.domain !== null && facts.domainBlocks.has(pair(r.accountId, sender.domain.toLowerCase()))) return true;
  if (facts.hardMutes.has(pair(r.accountId, r.fromAccountId))) return true;
  if (r.statusId) {
    const status = facts.statuses.get(r.statusId);
    if (!status || status.deletedAt) return true;
    if (status.conversationId !== null && facts.conversationMutes.has(pair(r.accountId, status.conversationId)))
      return true;
  }
  return false;
}

/** True when the rules say no notification from `from` to `recipient` (about `statusId`). */
export async function notificationSuppressed(core: Core, r: NotificationRequest): Promise<boolean> {
  return suppressedBy(await suppressionFacts(core, [r]), r);
}

/**
 * Mastodon's group keys for a batch (in order): favourites/reblogs of one status and follows share
 * a key while their activities fall within GROUP_SPAN_HOURS of the group's first hour bucket. The
 * current bucket of each (recipient, prefix) lives in Redis; a batch reads and writes each once.
 */
async function groupKeysOf(core: Core, rs: readonly NotificationRequest[], ids: readonly Id[]): Promise<string[]> {
  const prefixOf = (r: NotificationRequest) => (r.type === 'follow' ? r.type : `${r.type}-${r.statusId ?? ''}`);
  const redisKeys = [
    ...new Set(
      rs.filter((r) => GROUPABLE_TYPES.includes(r.type)).map((r) => `notif-group:${r.accountId}:${prefixOf(r)}`),
    ),
  ];
  const buckets = new Map<string, number>();
  if (redisKeys.length) {
    const stored = await mgetAcrossSlots(core.redis, redisKeys);
    redisKeys.forEach((k, i) => buckets.set(k, Number(stored[i] ?? 0)));
  }
  const keys = rs.map((r, i) => {
    if (!GROUPABLE_TYPES.includes(r.type)) return `ungrouped-${ids[i]}`;
    const redisKey = `notif-group:${r.accountId}:${prefixOf(r)}`;
    let bucket = Math.floor((r.at ?? new Date()).getTime() / 3_600_000);
    const previous = buckets.get(redisKey) ?? 0;
    if (previous && bucket < previous + GROUP_SPAN_HOURS && bucket >= previous) bucket = previous;
    buckets.set(redisKey, bucket);
    return `${prefixOf(r)}-${bucket}`;
  });
  if (redisKeys.length) {
    // Keys of several recipients (slots): a batch, each SET on its own (no transaction needed).
    const pipe = batch(core.redis);
    for (const k of redisKeys) pipe.set(k, String(buckets.get(k)), 'EX', GROUP_SPAN_HOURS * 3600);
    await pipe.exec();
  }
  return keys;
}

/** How long a notification may wait for its group summary before a redelivery repairs the group. */
const GROUPING_LEASE_MS = 60_000;

export class GroupingInFlightError extends Error {
  constructor(uniqueKey: string) {
    super(`notification ${uniqueKey} is still being added to its group; retry later`);
  }
}

/**
 * Creates the notifications of a batch of requests (the suppression rules, the recipient's
 * policy, one insert each that the unique index makes idempotent), in a fixed number of round
 * trips whatever the batch size, and adds them to their group summaries. Returns the documents
 * created, in request order; requests suppressed, dropped or already stored (redelivery) give
 * nothing. A request that finds its notification stored but never added to its group (a writer
 * died in between) repairs that group, or fails while the writer may still be at it.
 */
export async function createNotifications(
  core: Core,
  requests: readonly NotificationRequest[],
): Promise<NotificationDoc[]> {
  const byKey = new Map<string, NotificationRequest>();
  for (const r of requests) {
    const key = notificationUniqueKey(r);
    if (!byKey.has(key)) byKey.set(key, r);
  }
  if (byKey.size === 0) return [];
  const coll = collection(core.db, notifications);
  const [existing, facts] = await Promise.all([
    coll
      .find(
        { uniqueKey: { $in: [...byKey.keys()] } },
        { projection: { uniqueKey: 1, accountId: 1, groupKey: 1, grouping: 1, createdAt: 1 } },
      )
      .toArray(),
    suppressionFacts(core, [...byKey.values()]),
  ]);
  for (const e of existing) {
    byKey.delete(e.uniqueKey);
    if (!e.grouping) continue;
    if (Date.now() - e.createdAt.getTime() < GROUPING_LEASE_MS) throw new GroupingInFlightError(e.uniqueKey);
    await rebuildGroup(core, e.accountId, e.groupKey);
  }
  const candidates = [...byKey].filter(([, r]) => !suppressedBy(facts, r));
  if (candidates.length === 0) return [];
  const decisions = await policyDecisions(
    core,
    candidates.map(([, r]) => r),
    facts.accounts,
  );
  const kept = candidates.flatMap(([uniqueKey, r], i) =>
    decisions[i] === 'drop' ? [] : [{ uniqueKey, r, filtered: decisions[i] === 'filter' }],
  );
  if (kept.length === 0) return [];
  const ids = await nextSerialIds(core.db, 'notifications', kept.length);
  const groupKeys = await groupKeysOf(
    core,
    kept.map((k) => k.r),
    ids,
  );
  const createdAt = new Date();
  const docs: NotificationDoc[] = kept.map(({ uniqueKey, r, filtered }, i) => ({
    _id: ids[i],
    accountId: r.accountId,
    fromAccountId: r.fromAccountId,
    type: r.type,
    statusId: r.statusId ?? null,
    uniqueKey,
    ...(r.reportId ? { reportId: r.reportId } : {}),
    ...(r.warningId ? { warningId: r.warningId } : {}),
    ...(r.collectionId ? { collectionId: r.collectionId } : {}),
    groupKey: groupKeys[i],
    ...(filtered ? { filtered: true } : { grouping: true }),
    createdAt,
  }));
  // The inserts and their NotificationCreated events go through the outbox, so a crash after the
  // insert still gets each notification to the Web Push consumer.
  const inserted = await core.outbox.write(
    docs.map((doc) => ({
      type: 'NotificationCreated' as const,
      key: String(doc.accountId),
      payload: {
        notificationId: String(doc._id),
        accountId: String(doc.accountId),
        fromAccountId: String(doc.fromAccountId),
        type: doc.type,
        statusId: doc.statusId === null ? null : String(doc.statusId),
        filtered: doc.filtered === true,
      },
      verify: { collection: notifications.name, filter: { _id: doc._id }, expect: 'exists' as const },
    })),
    // Another consumer may have stored some of them first (a rebalance): keep the ones that are ours.
    () => insertNew(coll, docs),
  );
  await addToGroups(core, inserted);
  for (const doc of inserted) if (doc.filtered) await recordFilteredNotification(core, doc);
  for (const doc of inserted) delete doc.grouping;
  return inserted;
}

/**
 * Creates the notification unless the rules suppress it or it exists already (redelivery).
 * Returns the new document, or null when nothing was created.
 */
export async function createNotification(core: Core, r: NotificationRequest): Promise<NotificationDoc | null> {
  return (await createNotifications(core, [r]))[0] ?? null;
}

/**
 * A `follow` (a follow now exists, not from an accepted request) or `follow_request` (pending)
 * notification for the target: the graph events call this with their plain ids.
 */
export function notifyFollow(
  core: Core,
  p: { accountId: Id; targetAccountId: Id; type: 'follow' | 'follow_request' },
): Promise<NotificationDoc | null> {
  return createNotification(core, { type: p.type, accountId: p.targetAccountId, fromAccountId: p.accountId });
}
