// Notification requests (Mastodon 4.3): filtered mentions are gathered per sender into a request
// that counts them (up to 100) and remembers the newest status. Accepting a request lets the
// sender through from then on (a permission), brings its filtered notifications into the list and
// its private mentions into the conversations; dismissing it deletes the request and the filtered
// notifications from that sender.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { notifications, type NotificationDoc } from '../model/notifications.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { findPage, type PageParams } from '../db/pages.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { findLiveStatuses } from '../statuses/reads.ts';
import {
  notificationPermissions,
  notificationPolicies,
  notificationRequests,
  POLICY_VALUES,
  type NotificationRequestDoc,
  type PolicyValue,
} from '../model/notificationPolicies.ts';
import { validationFailed } from '../errors.ts';
import { addStatusToConversation } from '../conversations/accountConversations.ts';
import { policyOf, type EffectivePolicy } from './policy.ts';
import { addToGroups } from './groups.ts';

/** Mastodon stops counting at 100 (NotificationRequest::MAX_MEANINGFUL_COUNT). */
export const MAX_MEANINGFUL_COUNT = 100;

function filteredFrom(accountId: Id, fromAccountId: Id) {
  return { accountId, fromAccountId, filtered: true };
}

/** After a filtered mention was stored: create or refresh the sender's request. */
export async function recordFilteredNotification(core: Core, n: NotificationDoc): Promise<void> {
  if (n.type !== 'mention') return;
  const coll = collection(core.db, notificationRequests);
  const count = await collection(core.db, notifications).countDocuments(
    { ...filteredFrom(n.accountId, n.fromAccountId), type: 'mention' },
    { limit: MAX_MEANINGFUL_COUNT },
  );
  const key = { accountId: n.accountId, fromAccountId: n.fromAccountId };
  for (let attempt = 0; ; attempt++) {
    const now = new Date();
    const res = await coll.updateOne(key, {
      $set: { notificationsCount: count, updatedAt: now },
      $max: { lastStatusId: n.statusId ?? 0n },
    });
    if (res.matchedCount > 0) return;
    try {
      await coll.insertOne({
        _id: await nextSerialId(core.db, 'notification_requests'),
        ...key,
        lastStatusId: n.statusId,
        notificationsCount: count,
        createdAt: now,
        updatedAt: now,
      });
      return;
    } catch (err) {
      if (!isDuplicateKeyError(err) || attempt >= 3) throw err;
    }
  }
}

export function ownRequest(core: Core, accountId: Id, id: Id | null): Promise<NotificationRequestDoc | null> {
  if (id === null) return Promise.resolve(null);
  return collection(core.db, notificationRequests).findOne({ _id: id, accountId });
}

export async function acceptRequest(core: Core, req: NotificationRequestDoc): Promise<void> {
  try {
    await collection(core.db, notificationPermissions).insertOne({
      _id: await nextSerialId(core.db, 'notification_permissions'),
      accountId: req.accountId,
      fromAccountId: req.fromAccountId,
      createdAt: new Date(),
    });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
  // Private mentions join the recipient's conversations (Mastodon's AcceptNotificationRequestService).
  const mentions = await collection(core.db, notifications)
    .find({ ...filteredFrom(req.accountId, req.fromAccountId), type: 'mention' }, { projection: { statusId: 1 } })
    .toArray();
  const statusIds = mentions.map((m) => m.statusId).filter((s): s is Id => s !== null);
  if (statusIds.length) {
    const direct = await collection(core.db, statuses)
      .find({ _id: { $in: statusIds }, visibility: 'direct', deletedAt: null })
      .toArray();
    for (const s of direct)
      await addStatusToConversation(core, req.accountId, {
        statusId: s._id,
        accountId: s.accountId,
        conversationId: s.conversationId,
        mentionedAccountIds: s.mentionedAccountIds,
      });
  }
  // Each notification joins the list (and its group summary) once, however many accepts race.
  const coll = collection(core.db, notifications);
  const held = await coll.find(filteredFrom(req.accountId, req.fromAccountId)).toArray();
  const released: NotificationDoc[] = [];
  for (const n of held) {
    const res = await coll.updateOne({ _id: n._id, filtered: true }, { $set: { filtered: false } });
    if (res.modifiedCount === 1) released.push({ ...n, filtered: false });
  }
  await addToGroups(core, released);
  await collection(core.db, notificationRequests).deleteOne({ _id: req._id });
}

export async function dismissRequest(core: Core, req: NotificationRequestDoc): Promise<void> {
  await collection(core.db, notifications).deleteMany(filteredFrom(req.accountId, req.fromAccountId));
  await collection(core.db, notificationRequests).deleteOne({ _id: req._id });
}

/** The bulk forms take ids; unknown or foreign ones are skipped, as Mastodon does. */
export async function requestsByIds(core: Core, accountId: Id, ids: Id[]): Promise<NotificationRequestDoc[]> {
  if (ids.length === 0) return [];
  return collection(core.db, notificationRequests)
    .find({ accountId, _id: { $in: ids } })
    .toArray();
}

export interface PolicySummary {
  pending_requests_count: number;
  pending_notifications_count: number;
}

export async function policySummary(core: Core, accountId: Id): Promise<PolicySummary> {
  const reqs = await collection(core.db, notificationRequests)
    .find({ accountId }, { projection: { notificationsCount: 1 } })
    .limit(MAX_MEANINGFUL_COUNT)
    .toArray();
  return {
    pending_requests_count: reqs.length,
    pending_notifications_count: reqs.reduce((sum, r) => sum + r.notificationsCount, 0),
  };
}

const FIELDS = {
  for_not_following: 'forNotFollowing',
  for_not_followers: 'forNotFollowers',
  for_new_accounts: 'forNewAccounts',
  for_private_mentions: 'forPrivateMentions',
  for_limited_accounts: 'forLimitedAccounts',
} as const;
export type PolicyField = keyof typeof FIELDS;
export const POLICY_FIELDS = Object.keys(FIELDS) as PolicyField[];

/** Changes the given fields (v2 values accept/filter/drop); anything else is a 422. */
export async function updatePolicy(
  core: Core,
  accountId: Id,
  changes: Partial<Record<PolicyField, unknown>>,
): Promise<EffectivePolicy> {
  const current = await policyOf(core, accountId);
  const next: EffectivePolicy = { ...current };
  for (const field of POLICY_FIELDS) {
    const v = changes[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !POLICY_VALUES.includes(v as PolicyValue))
      throw validationFailed(`${field} is not included in the list`);
    next[FIELDS[field]] = v as PolicyValue;
  }
  await collection(core.db, notificationPolicies).updateOne(
    { _id: accountId },
    { $set: { ...next, updatedAt: new Date() } },
    { upsert: true },
  );
  return next;
}

/** The v2 NotificationPolicy entity (without summary). */
export function presentPolicyV2(p: EffectivePolicy): Record<PolicyField, PolicyValue> {
  return {
    for_not_following: p.forNotFollowing,
    for_not_followers: p.forNotFollowers,
    for_new_accounts: p.forNewAccounts,
    for_private_mentions: p.forPrivateMentions,
    for_limited_accounts: p.forLimitedAccounts,
  };
}

/** A page of the account's notification requests, newest first. */
export function notificationRequestsPage(core: Core, accountId: Id, p: PageParams): Promise<NotificationRequestDoc[]> {
  return findPage(collection(core.db, notificationRequests), { accountId }, p);
}

/** What the requests show: their senders, and their newest statuses that still exist. */
export async function requestSubjects(
  core: Core,
  docs: readonly NotificationRequestDoc[],
): Promise<{ senders: AccountDoc[]; statuses: StatusDoc[] }> {
  const [senders, newest] = await Promise.all([
    findInOrder(collection(core.db, accounts), [...new Set(docs.map((d) => d.fromAccountId))]),
    findLiveStatuses(
      core,
      docs.map((d) => d.lastStatusId).filter((s): s is Id => s !== null),
    ),
  ]);
  return { senders, statuses: newest };
}
