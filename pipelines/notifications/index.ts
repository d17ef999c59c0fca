// The notifications pipeline: turns status, interaction, poll and graph events into notification
// documents (services/core/notifications/notify.ts applies Mastodon's suppression rules and the
// unique index that makes a redelivered event a no-op); services/core/notifications/tell.ts then
// streams each new one (channel timeline:<id>:notifications, event `notification`) and asks for
// its e-mail.
import type { Core } from '../../services/core/context.ts';
import type { Id } from '../../services/core/ids.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { follows } from '../../services/core/model/follows.ts';
import { followRequests } from '../../services/core/model/followRequests.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { pollVotes } from '../../services/core/model/polls.ts';
import type { NotificationDoc } from '../../services/core/model/notifications.ts';
import type { NotificationRequest } from '../../services/core/notifications/notify.ts';
import {
  removeStatusFromConversations,
  type DirectStatus,
} from '../../services/core/conversations/accountConversations.ts';
import { addToConversation } from './conversations.ts';
import {
  removeFollowNotification,
  removeInteractionNotification,
  removeStatusNotifications,
} from '../../services/core/notifications/remove.ts';
import { notifyAndTell } from '../../services/core/notifications/tell.ts';
import { sharedRead } from '../../services/core/events/coalesce.ts';
import { runPipeline, type Pipeline, type PipelineOptions } from '../runtime/index.ts';
import type { PipelineContext, PipelineEvent } from '../runtime/types.ts';
import { handleModerationEvent, MODERATION_TYPES } from './moderation.ts';
import { handleCollectionChanged } from './collections.ts';

export const TYPES = [
  'StatusCreated',
  'StatusDeleted',
  'ReblogCreated',
  'StatusUpdated',
  'FavouriteCreated',
  'PollExpired',
  'FollowCreated',
  'FollowRequestCreated',
  'FollowDeleted',
  'FollowAccepted',
  'FollowRejected',
  'FavouriteDeleted',
  'ReblogDeleted',
  'CollectionChanged',
  ...MODERATION_TYPES,
] as const;
type NotificationEvent = (typeof TYPES)[number];

export type NotificationsPipelineOptions = Partial<
  Omit<PipelineOptions<NotificationEvent>, 'core' | 'name' | 'types' | 'handleEvent' | 'handleBatch'>
>;

const id = (s: string) => BigInt(s);

async function notify(core: Core, r: NotificationRequest): Promise<NotificationDoc | null> {
  return (await notifyAndTell(core, [r]))[0] ?? null;
}

/** Requests handled per createNotifications call (bounds the `$in` lists and the inserts). */
const CHUNK = 500;

/**
 * The notification a single-notification event asks for; null when it asks for none, undefined
 * when the event needs handling of its own.
 */
function singleRequest(event: PipelineEvent<NotificationEvent>): NotificationRequest | null | undefined {
  switch (event.type) {
    case 'FavouriteCreated': {
      const p = event.payload;
      return {
        type: 'favourite',
        accountId: id(p.statusAccountId),
        fromAccountId: id(p.accountId),
        statusId: id(p.statusId),
        at: new Date(p.createdAt),
      };
    }
    case 'ReblogCreated': {
      const p = event.payload;
      return {
        type: 'reblog',
        accountId: id(p.reblogOfAccountId),
        fromAccountId: id(p.accountId),
        statusId: id(p.reblogOfId),
        at: new Date(p.createdAt),
      };
    }
    case 'FollowCreated': {
      const p = event.payload;
      if (p.fromRequest || p.targetDomain !== null) return null;
      // A notification belongs to its follow: following again after an unfollow is a new one.
      return { type: 'follow', accountId: id(p.targetAccountId), fromAccountId: id(p.accountId), variant: p.followId };
    }
    default:
      return undefined;
  }
}

/** Accounts that get a `status` notification for a new post (followers with notify: true). */
async function* notifyingFollowers(core: Core, authorId: Id): AsyncGenerator<Id> {
  const cursor = collection(core.db, follows).find(
    { targetAccountId: authorId, notify: true },
    { projection: { accountId: 1 } },
  );
  for await (const f of cursor) yield f.accountId;
}

/**
 * The notify-followers of the authors of a batch's new statuses, in one read (most authors have
 * none) shared with the batches of other partitions handled at the same time: what
 * notifyingFollowers would give each.
 */
function notifyingFollowersReader(
  core: Core,
): (events: readonly PipelineEvent<NotificationEvent>[]) => Promise<Map<Id, Id[]>> {
  const read = sharedRead(async (authors: Id[]) => {
    const out = new Map<Id, Id[]>(authors.map((a) => [a, []]));
    const rows = await collection(core.db, follows)
      .find({ targetAccountId: { $in: authors }, notify: true }, { projection: { accountId: 1, targetAccountId: 1 } })
      .toArray();
    for (const f of rows) out.get(f.targetAccountId)?.push(f.accountId);
    return out;
  });
  return (events) => read(events.flatMap((e) => (e.type === 'StatusCreated' ? [id(e.payload.accountId)] : [])));
}

/** Events that need handling of their own (status, poll and moderation events). */
async function handleEvent(
  event: PipelineEvent<NotificationEvent>,
  ctx: PipelineContext,
  /** Authors' notify-followers read for the whole batch (notifyingFollowersReader). */
  notifying?: Map<Id, Id[]>,
): Promise<void> {
  const { core } = ctx;
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
      const notified = await notifyAndTell(
        core,
        [...mentioned].map((m) => ({ type: 'mention' as const, accountId: id(m), fromAccountId: author, statusId })),
      );
      // Quote posts: the quoted author, once the quote is accepted (a quote accepted later, through
      // the QuoteRequest flow, is notified when it is).
      if (p.quoteState === 'accepted' && p.quotedAccountId)
        await notifyAndTell(core, [
          { type: 'quote', accountId: id(p.quotedAccountId), fromAccountId: author, statusId },
        ]);
      // A recipient's conversation only when the mention reached them (not suppressed, not filtered).
      if (direct) for (const n of notified) if (!n.filtered) await addToConversation(core, n.accountId, direct);
      // Mastodon's FeedInsertWorker: followers who asked to be notified, for posts that reach their
      // home feed (not direct, not a reply to someone else).
      if (p.visibility === 'direct') return;
      if (p.inReplyToAccountId !== null && p.inReplyToAccountId !== p.accountId) return;
      let chunk: NotificationRequest[] = [];
      const known = notifying?.get(id(p.accountId));
      for await (const follower of known ?? notifyingFollowers(core, author)) {
        chunk.push({ type: 'status', accountId: follower, fromAccountId: author, statusId });
        if (chunk.length >= CHUNK) {
          await notifyAndTell(core, chunk);
          chunk = [];
          await ctx.heartbeat();
        }
      }
      await notifyAndTell(core, chunk);
      return;
    }
    case 'StatusDeleted': {
      if (event.payload.visibility === 'direct') await removeStatusFromConversations(core, id(event.payload.statusId));
      // Its mentions, favourites, reblogs, edits and polls go with it (Mastodon destroys them).
      await removeStatusNotifications(core, id(event.payload.statusId));
      return;
    }
    case 'FollowDeleted': {
      const p = event.payload;
      if (p.targetDomain !== null) return;
      await removeFollowNotification(core, {
        followerId: id(p.accountId),
        followedId: id(p.targetAccountId),
        followId: p.followId,
        pending: p.pending,
      });
      return;
    }
    case 'FollowRequestCreated': {
      const p = event.payload;
      if (p.targetDomain !== null) return;
      // Its answer (keyed by the target, so perhaps on another partition) may have been handled
      // already: a request that is no longer pending gets no notification.
      const pending = await collection(core.db, followRequests).countDocuments({ _id: id(p.requestId) }, { limit: 1 });
      if (pending === 0) return;
      await notify(core, {
        type: 'follow_request',
        accountId: id(p.targetAccountId),
        fromAccountId: id(p.accountId),
        variant: p.requestId,
      });
      return;
    }
    case 'FollowAccepted':
    case 'FollowRejected': {
      // Mastodon's FollowRequest#authorize!/reject! destroy the request and its `follow_request`
      // notification with it (an accepted request brings no `follow` notification either).
      const p = event.payload;
      if (p.targetDomain !== null) return;
      await removeFollowNotification(core, {
        followerId: id(p.accountId),
        followedId: id(p.targetAccountId),
        followId: p.requestId,
        pending: true,
      });
      return;
    }
    case 'FavouriteDeleted': {
      const p = event.payload;
      await removeInteractionNotification(core, {
        type: 'favourite',
        recipientId: id(p.statusAccountId),
        fromAccountId: id(p.accountId),
        statusId: id(p.statusId),
      });
      return;
    }
    case 'ReblogDeleted': {
      const p = event.payload;
      await removeInteractionNotification(core, {
        type: 'reblog',
        recipientId: id(p.reblogOfAccountId),
        fromAccountId: id(p.accountId),
        statusId: id(p.reblogOfId),
      });
      return;
    }
    case 'StatusUpdated': {
      // Mastodon notifies the local accounts that reblogged the edited status, and (4.5) those
      // whose accepted quotes quote it. Changes that are not edits (a quote's state, a policy)
      // notify nobody.
      const p = event.payload;
      if (p.change) return;
      const statusId = id(p.statusId);
      const rebloggers = collection(core.db, statuses).find(
        { reblogOfId: statusId, deletedAt: null },
        { projection: { accountId: 1 } },
      );
      const requests: NotificationRequest[] = [];
      for await (const r of rebloggers)
        requests.push({
          type: 'update',
          accountId: r.accountId,
          fromAccountId: id(p.accountId),
          statusId,
          variant: String(new Date(p.editedAt).getTime()),
        });
      const quoters = collection(core.db, statuses).find(
        { 'quote.quotedStatusId': statusId, 'quote.state': 'accepted', deletedAt: null, local: true },
        { projection: { accountId: 1 } },
      );
      for await (const q of quoters)
        requests.push({
          type: 'quoted_update',
          accountId: q.accountId,
          fromAccountId: id(p.accountId),
          statusId,
          variant: String(new Date(p.editedAt).getTime()),
        });
      for (let i = 0; i < requests.length; i += CHUNK) await notifyAndTell(core, requests.slice(i, i + CHUNK));
      return;
    }
    case 'PollExpired': {
      // The poll's author (a poll notification to oneself is allowed) and every voter.
      const p = event.payload;
      const author = id(p.accountId);
      const statusId = id(p.statusId);
      const requests: NotificationRequest[] = [{ type: 'poll', accountId: author, fromAccountId: author, statusId }];
      const voters = collection(core.db, pollVotes).find({ pollId: id(p.pollId) }, { projection: { accountId: 1 } });
      for await (const v of voters)
        requests.push({ type: 'poll', accountId: v.accountId, fromAccountId: author, statusId });
      for (let i = 0; i < requests.length; i += CHUNK) await notifyAndTell(core, requests.slice(i, i + CHUNK));
      return;
    }
    case 'ReportCreated':
    case 'AccountCreated':
    case 'AccountWarningCreated':
      return handleModerationEvent(core, event, notify);
    case 'CollectionChanged':
      return handleCollectionChanged(core, event.payload, event.eventId, notifyAndTell);
  }
}

export function runNotificationsPipeline(core: Core, opts: NotificationsPipelineOptions = {}): Promise<Pipeline> {
  const notifyingFollowersOf = notifyingFollowersReader(core);
  return runPipeline({
    core,
    name: 'notifications',
    types: TYPES,
    // Events of different partitions are independent (the unique key makes each idempotent).
    partitionsConsumedConcurrently: 4,
    ...opts,
    // A fetched batch at once: runs of single-notification events (favourites, reblogs, follows,
    // follow requests) become one createNotifications call per CHUNK, a fixed number of round
    // trips instead of a score per event; other events are handled in their place in between.
    // When a batch fails, the runtime retries its events one by one (each idempotent).
    async handleBatch(events, ctx) {
      let run: NotificationRequest[] = [];
      const flush = async () => {
        if (run.length === 0) return;
        await notifyAndTell(core, run);
        run = [];
        await ctx.heartbeat();
      };
      const notifying = await notifyingFollowersOf(events);
      for (const event of events) {
        const r = singleRequest(event);
        if (r === undefined) {
          await flush();
          await handleEvent(event, ctx, notifying);
          continue;
        }
        if (r) run.push(r);
        if (run.length >= CHUNK) await flush();
      }
      await flush();
    },
  });
}
