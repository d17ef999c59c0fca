// Creating notifications (Mastodon's NotifyService): the suppression rules, then one insert that a
// unique index makes idempotent. Callers (the notifications pipeline) publish what was created.
//
// Never notified: a non-local recipient; yourself (except a poll you made); from an account the
// recipient blocks, hard-mutes (mute with notifications) or whose domain they block; about a
// status in a conversation the recipient muted; from an account that blocks the recipient.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { conversationMutes } from '../model/conversations.ts';
import { statuses } from '../model/statuses.ts';
import { policyDecision } from './policy.ts';
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
}

/** Hours a group of favourites/reblogs/follows may span (Mastodon's MAXIMUM_GROUP_SPAN_HOURS). */
const GROUP_SPAN_HOURS = 12;

export function notificationUniqueKey(r: NotificationRequest): string {
  const base = `${r.type}:${r.fromAccountId}:${r.accountId}:${r.statusId ?? ''}`;
  return r.variant ? `${base}:${r.variant}` : base;
}

/** True when the rules say no notification from `from` to `recipient` (about `statusId`). */
export async function notificationSuppressed(core: Core, r: NotificationRequest): Promise<boolean> {
  // A poll's own author and the target of a strike (it is "from" themselves) are notified.
  if (r.accountId === r.fromAccountId && r.type !== 'poll' && r.type !== 'moderation_warning') return true;
  const [recipient, sender] = await Promise.all([
    collection(core.db, accounts).findOne({ _id: r.accountId }, { projection: { domain: 1, suspendedAt: 1 } }),
    collection(core.db, accounts).findOne({ _id: r.fromAccountId }, { projection: { domain: 1 } }),
  ]);
  if (!recipient || recipient.domain !== null || !sender) return true;
  if (recipient.suspendedAt) return true;
  if (r.accountId === r.fromAccountId) return false;
  const now = new Date();
  const [blocked, blockedBy, mute, domainBlocked] = await Promise.all([
    collection(core.db, blocks).countDocuments(
      { accountId: r.accountId, targetAccountId: r.fromAccountId },
      { limit: 1 },
    ),
    collection(core.db, blocks).countDocuments(
      { accountId: r.fromAccountId, targetAccountId: r.accountId },
      { limit: 1 },
    ),
    collection(core.db, mutes).findOne({ accountId: r.accountId, targetAccountId: r.fromAccountId }),
    sender.domain === null
      ? Promise.resolve(0)
      : collection(core.db, accountDomainBlocks).countDocuments(
          { accountId: r.accountId, domain: sender.domain.toLowerCase() },
          { limit: 1 },
        ),
  ]);
  if (blocked > 0 || blockedBy > 0 || domainBlocked > 0) return true;
  if (mute && mute.hideNotifications && (mute.expiresAt === null || mute.expiresAt > now)) return true;
  if (r.statusId) {
    const status = await collection(core.db, statuses).findOne(
      { _id: r.statusId },
      { projection: { conversationId: 1, deletedAt: 1 } },
    );
    if (!status || status.deletedAt) return true;
    if (
      status.conversationId !== null &&
      (await collection(core.db, conversationMutes).countDocuments(
        { accountId: r.accountId, conversationId: status.conversationId },
        { limit: 1 },
      )) > 0
    )
      return true;
  }
  return false;
}

/** Mastodon's group key: favourites/reblogs of one status and follows share a key within a window. */
async function groupKeyOf(core: Core, r: NotificationRequest, id: Id, at: Date): Promise<string> {
  if (!GROUPABLE_TYPES.includes(r.type)) return `ungrouped-${id}`;
  const prefix = r.type === 'follow' ? r.type : `${r.type}-${r.statusId ?? ''}`;
  const redisKey = `notif-group:${r.accountId}:${prefix}`;
  let bucket = Math.floor(at.getTime() / 3_600_000);
  const previous = Number((await core.redis.get(redisKey)) ?? 0);
  if (previous && bucket < previous + GROUP_SPAN_HOURS && bucket >= previous) bucket = previous;
  await core.redis.set(redisKey, String(bucket), 'EX', GROUP_SPAN_HOURS * 3600);
  return `${prefix}-${bucket}`;
}

/**
 * Creates the notification unless the rules suppress it or it exists already (redelivery).
 * Returns the new document, or null when nothing was created.
 */
export async function createNotification(core: Core, r: NotificationRequest): Promise<NotificationDoc | null> {
  const uniqueKey = notificationUniqueKey(r);
  if ((await collection(core.db, notifications).countDocuments({ uniqueKey }, { limit: 1 })) > 0) return null;
  if (await notificationSuppressed(core, r)) return null;
  const decision = await policyDecision(core, r);
  if (decision === 'drop') return null;
  const filtered = decision === 'filter';
  const _id = await nextSerialId(core.db, 'notifications');
  const createdAt = new Date();
  const doc: NotificationDoc = {
    _id,
    accountId: r.accountId,
    fromAccountId: r.fromAccountId,
    type: r.type,
    statusId: r.statusId ?? null,
    uniqueKey,
    ...(r.reportId ? { reportId: r.reportId } : {}),
    ...(r.warningId ? { warningId: r.warningId } : {}),
    groupKey: await groupKeyOf(core, r, _id, r.at ?? createdAt),
    ...(filtered ? { filtered: true } : {}),
    createdAt,
  };
  // The insert and its NotificationCreated event go through the outbox, so a crash after the
  // insert still gets the notification to the Web Push consumer.
  const inserted = await core.outbox.write(
    [
      {
        type: 'NotificationCreated',
        key: String(doc.accountId),
        payload: {
          notificationId: String(doc._id),
          accountId: String(doc.accountId),
          fromAccountId: String(doc.fromAccountId),
          type: doc.type,
          statusId: doc.statusId === null ? null : String(doc.statusId),
          filtered,
        },
        verify: { collection: notifications.name, filter: { _id: doc._id }, expect: 'exists' },
      },
    ],
    async () => {
      try {
        await collection(core.db, notifications).insertOne(doc);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },
  );
  if (!inserted) return null;
  if (filtered) await recordFilteredNotification(core, doc);
  return doc;
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
