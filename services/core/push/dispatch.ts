// Which Web Push subscriptions a new notification goes to, and sending it to each (Mastodon's
// Web::PushNotificationWorker): the subscription's alert for the type must be on and its policy
// (all, followed = the recipient follows the sender, follower = the sender follows the recipient,
// none) must allow the sender. Filtered notifications and ones older than the push TTL are not sent.
import type { Core } from '../context.ts';
import type { Logger } from '../logger.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { follows } from '../model/follows.ts';
import { notifications, type NotificationDoc } from '../model/notifications.ts';
import { pushSubscriptions, type PushSubscriptionDoc } from '../model/pushSubscriptions.ts';
import { webPushPayload } from './payload.ts';
import { PUSH_TTL_SECONDS, PushRetryError, sendWebPush } from './deliver.ts';

async function follows_(core: Core, from: Id, to: Id): Promise<boolean> {
  return (
    (await collection(core.db, follows).countDocuments({ accountId: from, targetAccountId: to }, { limit: 1 })) > 0
  );
}

export async function pushable(core: Core, sub: PushSubscriptionDoc, n: NotificationDoc): Promise<boolean> {
  if (sub.alerts[n.type] !== true) return false;
  switch (sub.policy) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'followed':
      return follows_(core, n.accountId, n.fromAccountId);
    case 'follower':
      return follows_(core, n.fromAccountId, n.accountId);
  }
}

export interface DispatchOptions {
  logger: Logger;
  /** Runs a send at most once per key (the pipeline's deduper), so a retry skips what succeeded. */
  once: (key: string, effect: () => Promise<void>) => Promise<unknown>;
}

/**
 * Sends the notification to every subscription of its recipient that wants it. Throws a
 * PushRetryError after trying them all when any push service asked to be tried again later.
 */
export async function dispatchWebPush(core: Core, notificationId: Id, opts: DispatchOptions): Promise<number> {
  const n = await collection(core.db, notifications).findOne({ _id: notificationId });
  if (!n || n.filtered) return 0;
  if (Date.now() - n.createdAt.getTime() > PUSH_TTL_SECONDS * 1000) return 0;
  const subs = await collection(core.db, pushSubscriptions).find({ accountId: n.accountId }).toArray();
  let sent = 0;
  let retry: PushRetryError | null = null;
  for (const sub of subs) {
    if (!(await pushable(core, sub, n))) continue;
    try {
      await opts.once(`${n._id}:${sub._id}`, async () => {
        const payload = await webPushPayload(core, sub, n);
        if (!payload) return;
        const outcome = await sendWebPush(core, sub, JSON.stringify(payload), { topic: undefined });
        const log = { subscriptionId: String(sub._id), notificationId: String(n._id), outcome };
        if (outcome === 'gone') {
          await collection(core.db, pushSubscriptions).deleteOne({ _id: sub._id });
          opts.logger.info(log, 'push subscription gone: deleted');
        } else if (outcome === 'delivered') {
          sent++;
          opts.logger.debug(log, 'web push delivered');
        } else opts.logger.warn(log, 'web push not delivered');
      });
    } catch (err) {
      if (!(err instanceof PushRetryError)) throw err;
      retry = err;
    }
  }
  if (retry) throw retry;
  return sent;
}
