// The notifications pipeline: turns status, interaction, poll and graph events into notification
// documents (services/core/notifications/notify.ts applies Mastodon's suppression rules and the
// unique index that makes a redelivered event a no-op), then pushes each new one to the recipient's
// `user` and `user:notification` streams (Redis channels timeline:<id> and
// timeline:<id>:notifications, event `notification`, payload the Notification JSON).
import type { Core } from '../../services/core/context.ts';
import type { Id } from '../../services/core/ids.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { follows } from '../../services/core/model/follows.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { pollVotes } from '../../services/core/model/polls.ts';
import type { NotificationDoc } from '../../services/core/model/notifications.ts';
import {
  createNotification,
  notifyFollow,
  type NotificationRequest,
} from '../../services/core/notifications/notify.ts';
import { channelName, publishToStream, timelineChannels } from '../../services/core/streaming/channels.ts';
import {
  removeStatusFromConversations,
  type DirectStatus,
} from '../../services/core/conversations/accountConversations.ts';
import { addToConversation } from './conversations.ts';
import { presentNotifications } from '../../services/core/entities/notification.ts';
import { runPipeline, type Pipeline, type PipelineOptions } from '../runtime/index.ts';
import { handleModerationEvent, MODERATION_TYPES } from './moderation.ts';

const TYPES = [
  'StatusCreated',
  'StatusDeleted',
  'ReblogCreated',
  'StatusUpdated',
  'FavouriteCreated',
  'PollExpired',
  'FollowCreated',
  'FollowRequestCreated',
  ...MODERATION_TYPES,
] as const;
type NotificationEvent = (typeof TYPES)[number];

export type NotificationsPipelineOptions = Partial<
  Omit<PipelineOptions<NotificationEvent>, 'core' | 'name' | 'types' | 'handleEvent' | 'handleBatch'>
>;

const id = (s: string) => BigInt(s);

/** Sends a new notification to the recipient's streams. */
export async function publishNotification(core: Core, doc: NotificationDoc): Promise<void> {
  // Rendering costs a score of queries: skip it when no streaming server listens (as Mastodon
  // checks its subscribed:timeline:<id> keys). Both the `user` and the `user:notification` stream
  // listen on this channel.
  const channel = channelName(core.config, timelineChannels.userNotifications(doc.accountId));
  const [, listeners] = (await core.redis.pubsub('NUMSUB', channel)) as [string, number];
  if (Number(listeners) === 0) return;
  const viewer = await collection(core.db, accounts).findOne({ _id: doc.accountId });
  if (!viewer) return;
  const [rendered] = await presentNotifications(core, [doc], viewer);
  if (!rendered) return;
  // Only on timeline:<id>:notifications, as Mastodon: the `user` stream listens to that channel
  // too, so publishing on timeline:<id> as well would deliver it twice there.
  const message = { event: 'notification' as const, payload: JSON.stringify(rendered) };
  await publishToStream(core.redis, core.config, timelineChannels.userNotifications(doc.accountId), message);
}

async function notify(core: Core, r: NotificationRequest): Promise<NotificationDoc | null> {
  const doc = await createNotification(core, r);
  if (doc && !doc.filtered) await publishNotification(core, doc);
  return doc;
}

async function send(core: Core, r: NotificationRequest): Promise<void> {
  await notify(core, r);
}

/** Accounts that get a `status` notification for a new post (followers with notify: true). */
async function* notifyingFollowers(core: Core, authorId: Id): AsyncGenerator<Id> {
  const cursor = collection(core.db, follows).find(
    { targetAccountId: authorId, notify: true },
    { projection: { accountId: 1 } },
  );
  for await (const f of cursor) yield f.accountId;
}

export function runNotificationsPipeline(core: Core, opts: NotificationsPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'notifications',
    types: TYPES,
    // Events of different partitions are independent (the unique key makes each idempotent).
    partitionsConsumedConcurrently: 4,
    ...opts,
    async handleEvent(event, ctx) {
      switch (event.type) {
        case 'StatusCreated': {
          const p = event.payload;
          const author = id(p.accountId);
          const statusId = id(p.statusId);
          const mentioned = new Set(p.mentionedAccountIds);
          const direct: DirectStatus | null =
            p.visibility === 'direct'
              ? {
                  statusId,
                  accountId: author,
                  conversationId: p.conversationId === null ? null : id(p.conversationId),
                  mentionedAccountIds: [...mentioned].map(id),
                }
              : null;
          // The author's own conversation (Mastodon's fan-out does this for local authors).
          if (direct && p.local) await addToConversation(core, author, direct);
          for (const m of mentioned) {
            const n = await notify(core, { type: 'mention', accountId: id(m), fromAccountId: author, statusId });
            // A recipient's conversation only when the mention reached them (not suppressed, not filtered).
            if (direct && n && !n.filtered) await addToConversation(core, id(m), direct);
          }
          // Mastodon's FeedInsertWorker: followers who asked to be notified, for posts that reach their
          // home feed (not direct, not a reply to someone else).
          if (p.visibility === 'direct') return;
          if (p.inReplyToAccountId !== null && p.inReplyToAccountId !== p.accountId) return;
          let n = 0;
          for await (const follower of notifyingFollowers(core, author)) {
            await notify(core, { type: 'status', accountId: follower, fromAccountId: author, statusId });
            if (++n % 200 === 0) await ctx.heartbeat();
          }
          return;
        }
        case 'StatusDeleted': {
          if (event.payload.visibility === 'direct')
            await removeStatusFromConversations(core, id(event.payload.statusId));
          return;
        }
        case 'ReblogCreated': {
          const p = event.payload;
          return send(core, {
            type: 'reblog',
            accountId: id(p.reblogOfAccountId),
            fromAccountId: id(p.accountId),
            statusId: id(p.reblogOfId),
            at: new Date(p.createdAt),
          });
        }
        case 'FavouriteCreated': {
          const p = event.payload;
          return send(core, {
            type: 'favourite',
            accountId: id(p.statusAccountId),
            fromAccountId: id(p.accountId),
            statusId: id(p.statusId),
            at: new Date(p.createdAt),
          });
        }
        case 'StatusUpdated': {
          // Mastodon notifies the local accounts that reblogged the edited status.
          const p = event.payload;
          const statusId = id(p.statusId);
          const rebloggers = collection(core.db, statuses).find(
            { reblogOfId: statusId, deletedAt: null },
            { projection: { accountId: 1 } },
          );
          for await (const r of rebloggers)
            await notify(core, {
              type: 'update',
              accountId: r.accountId,
              fromAccountId: id(p.accountId),
              statusId,
              variant: String(new Date(p.editedAt).getTime()),
            });
          return;
        }
        case 'PollExpired': {
          // The poll's author (a poll notification to oneself is allowed) and every voter.
          const p = event.payload;
          const author = id(p.accountId);
          const statusId = id(p.statusId);
          await notify(core, { type: 'poll', accountId: author, fromAccountId: author, statusId });
          const voters = collection(core.db, pollVotes).find(
            { pollId: id(p.pollId) },
            { projection: { accountId: 1 } },
          );
          for await (const v of voters)
            await notify(core, { type: 'poll', accountId: v.accountId, fromAccountId: author, statusId });
          return;
        }
        case 'FollowCreated': {
          const p = event.payload;
          if (p.fromRequest || p.targetDomain !== null) return;
          const doc = await notifyFollow(core, {
            accountId: id(p.accountId),
            targetAccountId: id(p.targetAccountId),
            type: 'follow',
          });
          if (doc) await publishNotification(core, doc);
          return;
        }
        case 'FollowRequestCreated': {
          const p = event.payload;
          if (p.targetDomain !== null) return;
          const doc = await notifyFollow(core, {
            accountId: id(p.accountId),
            targetAccountId: id(p.targetAccountId),
            type: 'follow_request',
          });
          if (doc) await publishNotification(core, doc);
          return;
        }
        case 'ReportCreated':
        case 'AccountCreated':
        case 'AccountWarningCreated':
          return handleModerationEvent(core, event, notify);
      }
    },
  });
}
