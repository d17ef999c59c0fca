// Mastodon 4.3's notification policy applied to a notification about to be created (NotifyService's
// DropCondition/FilterCondition): for filterable types, unless the recipient accepted the sender's
// request before, each condition the sender meets (limited account, not followed by the
// recipient, not following the recipient for 3 days, new account under 30 days, private mention
// that does not answer the recipient) looks up what the recipient's policy says; any `drop`
// drops the notification, else any `filter` files it as a notification request.
// Conditions are only evaluated when the policy would act on them, so the default policy costs
// one read for most notifications.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { accounts } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { statuses } from '../model/statuses.ts';
import type { NotificationType } from '../model/notifications.ts';
import {
  DEFAULT_POLICY,
  notificationPermissions,
  notificationPolicies,
  type NotificationPolicyDoc,
  type PolicyValue,
} from '../model/notificationPolicies.ts';

const NON_FILTERABLE: readonly NotificationType[] = [
  'admin.sign_up',
  'admin.report',
  'poll',
  'update',
  'quoted_update',
  'moderation_warning',
  'severed_relationships',
];
const NEW_ACCOUNT_MS = 30 * 24 * 3600_000;
const NEW_FOLLOWER_MS = 3 * 24 * 3600_000;
/** How far up a thread a private mention is checked for being an answer (Mastodon: 100). */
const THREAD_DEPTH = 100;

export type PolicyDecision = 'accept' | 'filter' | 'drop';

export type EffectivePolicy = Omit<NotificationPolicyDoc, '_id' | 'updatedAt'>;

export async function policyOf(core: Core, accountId: Id): Promise<EffectivePolicy> {
  const doc = await collection(core.db, notificationPolicies).findOne({ _id: accountId });
  if (!doc) return { ...DEFAULT_POLICY };
  const { _id: _ignored, updatedAt: _at, ...policy } = doc;
  return { ...DEFAULT_POLICY, ...policy };
}

async function follows_(core: Core, from: Id, to: Id): Promise<{ createdAt: Date } | null> {
  return collection(core.db, follows).findOne(
    { accountId: from, targetAccountId: to },
    { projection: { createdAt: 1 } },
  );
}

/**
 * True when the direct status `statusId` answers a private mention of the sender by the recipient
 * further up its thread.
 */
async function answersRecipient(core: Core, statusId: Id, recipient: Id, sender: Id): Promise<boolean> {
  const coll = collection(core.db, statuses);
  const start = await coll.findOne({ _id: statusId }, { projection: { inReplyToId: 1 } });
  let next = start?.inReplyToId ?? null;
  const seen = new Set<bigint>();
  for (let depth = 0; next !== null && depth < THREAD_DEPTH && !seen.has(next); depth++) {
    seen.add(next);
    const s = await coll.findOne(
      { _id: next },
      { projection: { accountId: 1, visibility: 1, mentionedAccountIds: 1, inReplyToId: 1 } },
    );
    if (!s) return false;
    if (s.accountId === recipient && s.visibility === 'direct' && s.mentionedAccountIds.includes(sender)) return true;
    next = s.inReplyToId;
  }
  return false;
}

export interface PolicyInput {
  type: NotificationType;
  accountId: Id;
  fromAccountId: Id;
  statusId?: Id | null;
}

type SenderFacts = { silencedAt?: Date | null; createdAt: Date } | null;

/** What a batch already read: the recipients' policies and the senders' accounts. */
export interface PolicyPreload {
  policy?: EffectivePolicy;
  sender?: SenderFacts;
}

export async function policyDecision(core: Core, r: PolicyInput, pre: PolicyPreload = {}): Promise<PolicyDecision> {
  if (NON_FILTERABLE.includes(r.type) || r.accountId === r.fromAccountId) return 'accept';
  const policy = pre.policy ?? (await policyOf(core, r.accountId));
  const values = Object.values(policy) as PolicyValue[];
  if (values.every((v) => v === 'accept')) return 'accept';

  // Lazily computed facts, each at most once.
  let sender: SenderFacts | undefined = pre.sender;
  const senderDoc = async () =>
    (sender ??= await collection(core.db, accounts).findOne(
      { _id: r.fromAccountId },
      { projection: { silencedAt: 1, createdAt: 1 } },
    ));
  let following: boolean | undefined;
  const notFollowing = async () => !(following ??= (await follows_(core, r.accountId, r.fromAccountId)) !== null);
  const conditions: [PolicyValue, () => Promise<boolean>][] = [
    [policy.forLimitedAccounts, async () => !!(await senderDoc())?.silencedAt && (await notFollowing())],
    [policy.forNotFollowing, notFollowing],
    [
      policy.forNotFollowers,
      async () => {
        const f = await follows_(core, r.fromAccountId, r.accountId);
        return f === null || Date.now() - f.createdAt.getTime() < NEW_FOLLOWER_MS;
      },
    ],
    [
      policy.forNewAccounts,
      async () => {
        const s = await senderDoc();
        return !!s && Date.now() - s.createdAt.getTime() < NEW_ACCOUNT_MS && (await notFollowing());
      },
    ],
    [
      policy.forPrivateMentions,
      async () => {
        if (r.type !== 'mention' || !r.statusId) return false;
        const s = await collection(core.db, statuses).findOne({ _id: r.statusId }, { projection: { visibility: 1 } });
        if (s?.visibility !== 'direct' || !(await notFollowing())) return false;
        return !(await answersRecipient(core, r.statusId, r.accountId, r.fromAccountId));
      },
    ],
  ];
  const permitted = async () =>
    (await collection(core.db, notificationPermissions).countDocuments(
      { accountId: r.accountId, fromAccountId: r.fromAccountId },
      { limit: 1 },
    )) > 0;
  let filter = false;
  let checkedPermission = false;
  for (const action of ['drop', 'filter'] as const) {
    for (const [value, applies] of conditions) {
      if (value !== action || (action === 'filter' && filter)) continue;
      if (!(await applies())) continue;
      if (!checkedPermission) {
        checkedPermission = true;
        if (await permitted()) return 'accept';
      }
      if (action === 'drop') return 'drop';
      filter = true;
    }
  }
  return filter ? 'filter' : 'accept';
}

/**
 * The decisions for a batch of requests (in order): the recipients' policies in one query, the
 * senders' accounts as the caller read them; conditions that need more are read per request.
 */
export async function policyDecisions(
  core: Core,
  rs: readonly PolicyInput[],
  senders: ReadonlyMap<Id, SenderFacts> = new Map(),
): Promise<PolicyDecision[]> {
  const recipients = [
    ...new Set(
      rs.filter((r) => !NON_FILTERABLE.includes(r.type) && r.accountId !== r.fromAccountId).map((r) => r.accountId),
    ),
  ];
  const docs = await findInOrder(collection(core.db, notificationPolicies), recipients);
  const policies = new Map<Id, EffectivePolicy>(
    docs.map(({ _id, updatedAt: _at, ...policy }) => [_id, { ...DEFAULT_POLICY, ...policy }]),
  );
  return Promise.all(
    rs.map((r) =>
      policyDecision(core, r, {
        policy: policies.get(r.accountId) ?? { ...DEFAULT_POLICY },
        ...(senders.has(r.fromAccountId) ? { sender: senders.get(r.fromAccountId) } : {}),
      }),
    ),
  );
}
