// The fan-out pipeline: keeps home and list feeds in Redis up to date from status and graph
// events (new, edited and deleted statuses and reblogs; follows, unfollows, blocks, mutes; list changes).
// Feed writes are idempotent (ZADD/ZREM), so a redelivered event changes nothing. A big
// account's followers are read and written a page at a time, with heartbeats in between.
import type { Core } from '../../services/core/context.ts';
import type { Visibility } from '../../services/core/model/statuses.ts';
import { fanOutStatus } from '../../services/core/feeds/fanOut.ts';
import {
  fanOutStatusOf,
  remembered,
  rememberAuthorSides,
  type FanOutStatus,
} from '../../services/core/feeds/authorSide.ts';
import type { Announce } from '../../services/core/feeds/fanOutWrites.ts';
import { fanOutToFollowerSlice } from '../../services/core/feeds/followerSlices.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../services/core/model/statuses.ts';
import { newStatuses } from '../../services/core/statuses/recentlyPosted.ts';
import { rememberFollowerLists } from '../../services/core/feeds/followerLists.ts';
import { dropFeed, feedKey } from '../../services/core/feeds/feeds.ts';
import {
  mergeIntoFeed,
  mergeIntoHomeFeed,
  removeStatusFromFeeds,
  unmergeDomainFromOwnedFeeds,
  unmergeFromFeed,
  unmergeFromOwnedFeeds,
} from '../../services/core/feeds/maintenance.ts';
import {
  runPipeline,
  type BatchHandler,
  type EventHandler,
  type Pipeline,
  type PipelineEvent,
  type PipelineOptions,
  type PipelineOverrides,
} from '../runtime/index.ts';
import type { EventRecord } from '../../schemas/index.ts';
import { broadcastDelete, broadcastUpdate, renderUpdate, type RenderedUpdate } from './broadcast.ts';
import { feedsHolding } from '../../services/core/feeds/reach.ts';
import { traceStage } from '../../services/core/streaming/latencyTrace.ts';
import { Coalescer } from '../../services/core/events/coalesce.ts';
import { invalidateRenderedStatuses } from '../../services/core/statuses/renderCache.ts';

export const TYPES = [
  'StatusCreated',
  'ReblogCreated',
  'StatusUpdated',
  'StatusDeleted',
  'ReblogDeleted',
  'FollowCreated',
  'FollowDeleted',
  'BlockCreated',
  'MuteCreated',
  'DomainBlockCreated',
  'ListMembersChanged',
  'ListDeleted',
  'FanOutBatchRequested',
] as const;
type FanOutEvent = (typeof TYPES)[number];

export type FanOutPipelineOptions = PipelineOverrides<FanOutEvent>;

const id = (s: string) => BigInt(s);

const NOWHERE = { home: [], lists: [] };

/**
 * The fan-out's announcements: each set of feeds gets the `update` on its streams as soon as it
 * is known, rendered once (the rendering runs alongside the fan-out's queries).
 */
function announceTo(core: Core, statusId: bigint, rendering: Promise<RenderedUpdate | null>): Announce {
  rendering.catch(() => undefined); // awaited by the announcements; unhandled if there are none
  return (feeds) => broadcastUpdate(core, statusId, feeds, 'update', rendering, false);
}

/** What fan-out needs of a StatusCreated event. */
function fanOutStatusOfEvent(p: EventRecord<'StatusCreated'>): FanOutStatus {
  return {
    statusId: id(p.statusId),
    accountId: id(p.accountId),
    visibility: p.visibility as Visibility,
    inReplyToAccountId: p.inReplyToAccountId ? id(p.inReplyToAccountId) : null,
    mentionedAccountIds: p.mentionedAccountIds.map(id),
    tagNames: p.tagNames,
    reblogOfId: null,
    reblogOfAccountId: null,
  };
}

/** A deleted post or reblog leaves the feeds it reached and the streams that showed it. */
async function removeDeleted(
  core: Core,
  p: { statusId: string; accountId: string; visibility: string; local: boolean },
  reblogOfId: bigint | null,
  mentionedAccountIds: bigint[],
  tagNames: string[],
): Promise<void> {
  const statusId = id(p.statusId);
  const accountId = id(p.accountId);
  const reach = await removeStatusFromFeeds(core, { statusId, accountId, mentionedAccountIds, tagNames }, reblogOfId);
  const visibility = p.visibility as Visibility;
  const deleted = {
    _id: statusId,
    accountId,
    visibility,
    local: p.local,
    reblogOfId,
    inReplyToAccountId: null,
    tagNames,
  };
  return broadcastDelete(core, deleted, reach);
}

export function runFanOutPipeline(core: Core, opts: FanOutPipelineOptions = {}): Promise<Pipeline> {
  const options: PipelineOptions<FanOutEvent> & { handleEvent: EventHandler<FanOutEvent> } = {
    core,
    name: 'fanout',
    types: TYPES,
    // A big account's slices are spread over the partitions: several in flight at once keep
    // MongoDB, Redis and this process busy together (each partition stays in order).
    partitionsConsumedConcurrently: 4,
    ...opts,
    async handleEvent(event, ctx) {
      const heartbeat = () => ctx.heartbeat();
      switch (event.type) {
        case 'StatusCreated': {
          const p = event.payload;
          const rendering = renderUpdate(core, id(p.statusId), statusesAhead.get(event));
          // The public and hashtag streams at once, each feed's stream as soon as its feed is known
          // (awaited below; a fan-out failure must not leave them unhandled).
          const publicStreams = broadcastUpdate(core, id(p.statusId), NOWHERE, 'update', rendering);
          publicStreams.catch(() => undefined);
          await fanOutStatus(core, fanOutStatusOfEvent(p), heartbeat, announceTo(core, id(p.statusId), rendering));
          await publicStreams;
          return;
        }
        case 'ReblogCreated': {
          const p = event.payload;
          const rendering = renderUpdate(core, id(p.statusId));
          const publicStreams = broadcastUpdate(core, id(p.statusId), NOWHERE, 'update', rendering);
          publicStreams.catch(() => undefined);
          await fanOutStatus(
            core,
            {
              statusId: id(p.statusId),
              accountId: id(p.accountId),
              visibility: p.visibility as Visibility,
              inReplyToAccountId: null,
              mentionedAccountIds: [],
              tagNames: [],
              reblogOfId: id(p.reblogOfId),
              reblogOfAccountId: id(p.reblogOfAccountId),
            },
            heartbeat,
            announceTo(core, id(p.statusId), rendering),
          );
          await publicStreams;
          return;
        }
        case 'StatusUpdated': {
          const p = event.payload;
          const statusId = id(p.statusId);
          await invalidateRenderedStatuses(core, [statusId]);
          const reach = await feedsHolding(core, {
            statusId,
            accountId: id(p.accountId),
            mentionedAccountIds: p.mentionedAccountIds.map(id),
            tagNames: p.tagNames,
          });
          return broadcastUpdate(core, statusId, reach, 'status.update');
        }
        case 'StatusDeleted': {
          const p = event.payload;
          await invalidateRenderedStatuses(core, [id(p.statusId)]);
          return removeDeleted(core, p, null, p.mentionedAccountIds.map(id), p.tagNames);
        }
        case 'ReblogDeleted': {
          const p = event.payload;
          return removeDeleted(core, p, id(p.reblogOfId), [], []);
        }
        case 'FollowCreated':
          if (event.payload.accountDomain !== null) return; // only local users have feeds here
          return mergeIntoHomeFeed(core, id(event.payload.accountId), id(event.payload.targetAccountId));
        case 'FollowDeleted':
          if (event.payload.pending || event.payload.accountDomain !== null) return;
          return unmergeFromFeed(core, feedKey('home', id(event.payload.accountId)), id(event.payload.targetAccountId));
        case 'BlockCreated':
        case 'MuteCreated':
          if (event.payload.accountDomain !== null) return;
          return unmergeFromOwnedFeeds(core, id(event.payload.accountId), id(event.payload.targetAccountId));
        case 'DomainBlockCreated':
          // Only local accounts block domains for themselves (the event has no remote author).
          return unmergeDomainFromOwnedFeeds(core, id(event.payload.accountId), event.payload.domain);
        case 'ListMembersChanged': {
          const key = feedKey('list', event.payload.listId);
          for (const member of event.payload.accountIds) {
            if (event.payload.added) await mergeIntoFeed(core, key, id(member));
            else await unmergeFromFeed(core, key, id(member));
          }
          return;
        }
        case 'ListDeleted':
          return dropFeed(core.redis, feedKey('list', event.payload.listId));
        case 'FanOutBatchRequested': {
          const p = event.payload;
          traceStage(p.statusId, 'slice.start');
          const doc = await collection(core.db, statuses).findOne({ _id: id(p.statusId) });
          if (!doc || doc.deletedAt) return;
          // An account's domain never changes: one read per status and process, not per slice.
          const author = await remembered(core, `${doc._id}:author`, () =>
            collection(core.db, accounts).findOne({ _id: doc.accountId }, { projection: { domain: 1 } }),
          );
          await fanOutToFollowerSlice(
            core,
            fanOutStatusOf(doc),
            { upTo: id(p.upToFollowId), after: id(p.afterFollowId), followerIds: p.followerIds.map(id) },
            author?.domain ?? null,
            // Rendered once per status and process, not once per slice.
            announceTo(
              core,
              doc._id,
              remembered(core, `${doc._id}:rendered`, () => renderUpdate(core, doc._id)),
            ),
          );
          traceStage(p.statusId, 'slice.done');
          return;
        }
      }
    },
  };
  return runPipeline({
    ...options,
    handleEvent: undefined,
    handleBatch: withAuthorSidesAhead(core, options.handleEvent),
  });
}

/** The new statuses of a batch, read together for their renderings (renderUpdate), by event. */
const statusesAhead = new WeakMap<object, StatusDoc | null>();

async function readStatusesAhead(core: Core, events: readonly PipelineEvent<FanOutEvent>[]): Promise<void> {
  const created = events.filter((e) => e.type === 'StatusCreated');
  if (created.length < 2) return;
  const ids = created.map((e) => id((e.payload as EventRecord<'StatusCreated'>).statusId));
  const docs = await newStatuses(core, ids);
  const byId = new Map(docs.map((d) => [d._id, d]));
  created.forEach((e, i) => statusesAhead.set(e, byId.get(ids[i]!) ?? null));
}

/**
 * The handler of one event, run over a fetched batch after the author-side reads of its new
 * statuses were made together (rememberAuthorSides), with those of the batches of other partitions
 * handled at the same time; each event still fails and retries alone.
 */
function withAuthorSidesAhead(core: Core, handleEvent: EventHandler<FanOutEvent>): BatchHandler<FanOutEvent> {
  // The partition batches of one fetch are handled side by side: their reads ahead go together.
  const readsAhead = new Coalescer<PipelineEvent<FanOutEvent>>(
    async (events) => {
      const created = events.flatMap((e) => (e.type === 'StatusCreated' ? [fanOutStatusOfEvent(e.payload)] : []));
      await Promise.all([
        rememberAuthorSides(core, created),
        rememberFollowerLists(core, created),
        readStatusesAhead(core, events),
      ]);
    },
    { sameTurn: true },
  );
  return async (events, ctx) => {
    await readsAhead
      .add([...events])
      .catch((err: unknown) => core.logger.debug({ err }, 'fan-out: author sides not read ahead'));
    const failed: Array<{ event: PipelineEvent<FanOutEvent>; error: unknown }> = [];
    for (const event of events) {
      try {
        await handleEvent(event, ctx);
      } catch (error) {
        failed.push({ event, error });
      }
      await ctx.heartbeat();
    }
    return { failed };
  };
}
